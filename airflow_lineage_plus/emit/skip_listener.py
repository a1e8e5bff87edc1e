"""The Airflow listener of airflow-lineage-plus: skip state (see :mod:`.self_skip` and :mod:`.skip_records`).

- On the worker, when a task instance starts running, it imports the package's transport once
  (:mod:`~airflow_lineage_plus.deliver.preload`: the provider's per-event processes inherit it) and
  watches for an ``AirflowSkipException`` so the self-skip facet can carry the exception message.
- In the scheduler (and in ``airflow dags test``), when a DAG run ends, it emits one record for each task
  instance that ended without running.

Hooks never raise: a failure is logged once, saying which lineage was lost.
"""

from __future__ import annotations

from typing import Any

from airflow.listeners import hookimpl

from airflow_lineage_plus.containment import contained
from airflow_lineage_plus.deliver.preload import preload_transport
from airflow_lineage_plus.emit.self_skip import watch_for_self_skip
from airflow_lineage_plus.emit.skip_records import emit_for_dag_run


@hookimpl
def on_task_instance_running(previous_state: Any, task_instance: Any) -> None:
    with contained("preloading the transport"):
        preload_transport()
    with contained("the self-skip message watch"):
        watch_for_self_skip(task_instance)


@hookimpl
def on_dag_run_success(dag_run: Any, msg: str) -> None:
    with contained("the skip records of a DAG run"):
        emit_for_dag_run(dag_run)


@hookimpl
def on_dag_run_failed(dag_run: Any, msg: str) -> None:
    with contained("the skip records of a DAG run"):
        emit_for_dag_run(dag_run)
