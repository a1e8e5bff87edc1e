"""Emit: what rides on the provider's own events, and the records the provider does not make.

:mod:`.registry` holds what a running task recorded (read when the provider builds its events in the same
memory image); :mod:`.self_skip` is the worker-side hook and ``custom_run_facets`` function;
:mod:`.skip_causes`, :mod:`.skip_records`, :mod:`.handoff` and :mod:`.metadata_session`
make one record per task instance the scheduler skipped, once across schedulers and outside the
scheduler loop; :mod:`.skip_listener` wires them to Airflow's listener hooks; :mod:`.run_fold` folds
self-emitted events into the task run. Nothing here imports the author stage.
"""
