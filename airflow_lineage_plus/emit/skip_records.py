"""Scheduler side of skip state: one ABORT record per task instance that ended without running.

The provider emits nothing for task instances skipped by a short-circuit or branch task, by a trigger
rule, or marked by hand (``upstream_failed`` ones too). When the DAG run ends, :func:`emit_for_dag_run`
(called by the listener in the scheduler) emits one ABORT event per such task instance, under the runId the
provider's own deterministic function gives it, with the parent facet pointing at the DAG run, the task's
declared inlets as inputs, no outputs, and the skip facet (its cause from :mod:`.skip_causes`).

The hook itself (:func:`emit_for_dag_run`) only hands the work off (:mod:`.handoff`); :func:`emit_committed`
reads, in the provider's process pool, through a short bounded session of its own
(:mod:`.metadata_session`), and claims each runId in the metadata database
(:mod:`~airflow_lineage_plus.claims`) so it goes out at most once whichever scheduler reports the run.
See ``docs/skip-state.md`` for what a consumer sees and why the records are ABORT events, and
``docs/deployment.md`` for the production setup.
"""

from __future__ import annotations

import logging
import time
from datetime import datetime, timezone
from typing import Any

from openlineage.client.facet_v2 import RunFacet

from airflow_lineage_plus import _compat, conf
from airflow_lineage_plus.claims import Claim, claim, ensure_table, skip_claims_table
from airflow_lineage_plus.containment import contained, report
from airflow_lineage_plus.custom_facets import SkipStateRunFacet
from airflow_lineage_plus.datasets import from_asset
from airflow_lineage_plus.emit.handoff import after_commit, hand_off
from airflow_lineage_plus.emit.metadata_session import short_session
from airflow_lineage_plus.emit.self_skip import state_name
from airflow_lineage_plus.emit.skip_causes import DagRunSnapshot, explain, snapshot_dag_run

log = logging.getLogger(__name__)

#: DAG-run states whose end the hooks report.
ENDED = ("success", "failed")
#: Seconds the pool process looks again for a run end not committed yet (see ``_ended_run``).
COMMIT_WAIT = 10.0
#: What a failure loses, as the one warning says it (the DAG run is named at INFO, each time).
BATCH = "the batch of skip records of a finished DAG run"


def _declared_inputs(task: Any) -> list[Any]:
    """The task's inlets as OpenLineage input datasets (assets this package or the provider can name)."""
    from openlineage.client.event_v2 import InputDataset

    inputs: list[Any] = []
    seen: set[tuple[str, str]] = set()
    for inlet in getattr(task, "inlets", None) or ():
        ident = _dataset_identity(inlet)
        if ident is None or ident in seen:
            continue
        seen.add(ident)
        inputs.append(InputDataset(namespace=ident[0], name=ident[1]))
    return inputs


def _metadata_allowed(dag_run: Any, task_id: str, task: Any) -> bool:
    """Whether the emission policy lets the task's events carry its datasets (a minimal event otherwise)."""
    return task is None or _compat.task_metadata_allowed(task, dag_run.dag_id, task_id)


def _dataset_identity(inlet: Any) -> tuple[str, str] | None:
    """(namespace, name) of an inlet: an OpenLineage dataset, or an Airflow asset with a known scheme."""
    namespace, name = getattr(inlet, "namespace", None), getattr(inlet, "name", None)
    if isinstance(namespace, str) and isinstance(name, str) and not hasattr(inlet, "uri"):
        return namespace, name
    uri = getattr(inlet, "uri", None)
    if not isinstance(uri, str):
        return None
    with contained("a skipped task's declared input"):
        ref = from_asset(_sdk_asset(inlet))
        if ref is not None:
            return str(ref.namespace), str(ref.name)
        dataset = _compat.translate_asset(_sdk_asset(inlet))
        if dataset is not None:
            return str(dataset.namespace), str(dataset.name)
    return None


def _sdk_asset(inlet: Any) -> Any:
    """An ``airflow.sdk.Asset`` equal to an inlet read back from the serialized DAG."""
    from airflow.sdk import Asset

    if isinstance(inlet, Asset):
        return inlet
    return Asset(uri=inlet.uri, name=getattr(inlet, "name", None) or inlet.uri, extra=inlet.extra or {})


def dag_run_ol_id(dag_run: Any) -> str:
    """The OpenLineage runId the provider gives a DAG run (its deterministic function)."""
    date = dag_run.logical_date or dag_run.run_after
    return _compat.dag_run_id(dag_run.dag_id, date, dag_run.clear_number)


def _skip_facet(snapshot: DagRunSnapshot, task_id: str, map_index: int, task: Any) -> SkipStateRunFacet:
    cause = explain(snapshot, task_id, map_index, task)
    return SkipStateRunFacet(
        skipped=True,
        reason=cause.reason,
        message=cause.message,
        causedBy=cause.caused_by,
        triggerRule=cause.trigger_rule,
        upstreamStates=cause.upstream_states,
        state=snapshot.states[(task_id, map_index)],
        mapIndex=map_index,
        tryNumber=snapshot.try_numbers.get((task_id, map_index), 0),
    )


def _record_run_facets(dag_run: Any, skip: SkipStateRunFacet) -> dict[str, RunFacet]:
    from openlineage.client.facet_v2 import nominal_time_run

    facets: dict[str, RunFacet] = {
        **_compat.task_parent_run_facet(dag_run_ol_id(dag_run), dag_run.dag_id, dag_run.conf or {}),
        **_compat.processing_engine_facet(),
        skip.key: skip,
    }
    if dag_run.data_interval_start is not None:
        facets["nominalTime"] = nominal_time_run.NominalTimeRunFacet(
            nominalStartTime=dag_run.data_interval_start.isoformat(),
            nominalEndTime=dag_run.data_interval_end.isoformat() if dag_run.data_interval_end else None,
        )
    return facets


def build_record(dag_run: Any, snapshot: DagRunSnapshot, task_id: str, map_index: int, task: Any) -> Any:
    """The ABORT event for one task instance that did not run (an ``openlineage`` RunEvent)."""
    from airflow.providers.openlineage import conf as ol_conf
    from openlineage.client.event_v2 import Job, Run, RunEvent, RunState
    from openlineage.client.facet_v2 import job_type_job

    date = dag_run.logical_date or dag_run.run_after
    skip = _skip_facet(snapshot, task_id, map_index, task)
    run_id = _compat.task_run_id(dag_run.dag_id, task_id, skip.tryNumber or 0, date, map_index)
    ended = snapshot.end_dates.get((task_id, map_index)) or dag_run.end_date or datetime.now(timezone.utc)
    job_type = job_type_job.JobTypeJobFacet(processingType="BATCH", integration="AIRFLOW", jobType="TASK")
    return RunEvent(
        eventType=RunState.ABORT,
        eventTime=ended.isoformat(),
        run=Run(runId=run_id, facets=_record_run_facets(dag_run, skip)),
        job=Job(
            namespace=ol_conf.namespace(), name=f"{dag_run.dag_id}.{task_id}", facets={"jobType": job_type}
        ),
        inputs=_declared_inputs(task) if _metadata_allowed(dag_run, task_id, task) else [],
        outputs=[],
    )


def emit_events(events: list[Any]) -> None:
    """Emit events through the provider's adapter (redaction, configured transport). Pool-safe."""
    from airflow.providers.openlineage.api import emit

    for event in events:
        with contained(f"the skip record of {event.job.name}"):
            emit(event)


def records_for_dag_run(dag_run: Any, session: Any) -> list[Any]:
    """Build (do not emit) the records of the task instances of a DAG run that did not run."""
    snapshot = snapshot_dag_run(dag_run.dag_id, dag_run.run_id, dag_run.id, session)
    pending = snapshot.not_run()
    if not pending:
        return []
    dag = _compat.dag_for_run(dag_run, session)
    events = []
    for task_id, map_index in pending:
        task = dag.get_task(task_id) if dag is not None and dag.has_task(task_id) else None
        if task is not None and not _compat.task_events_allowed(task, dag_run.dag_id, task_id):
            continue
        events.append(build_record(dag_run, snapshot, task_id, map_index, task))
    return events


def _claims(dag_run: Any, events: list[Any]) -> list[Claim]:
    parent = dag_run_ol_id(dag_run)
    rows: list[Claim] = []
    for event in events:
        skip = event.run.facets[SkipStateRunFacet.key]
        task_id = event.job.name.removeprefix(f"{dag_run.dag_id}.")
        rows.append((event.run.runId, dag_run.dag_id, task_id, skip.mapIndex, skip.tryNumber, parent))
    return rows


def _ended_run(session: Any, dag_id: str, run_id: str, clear_number: int) -> Any | None:
    """The DAG run once the metadata database shows it ended in the reported clear; None if it does not.

    The hand-off comes after the commit that ended the run, so the first look normally finds it. Where
    Airflow gives the hook no way to see that commit (``airflow dags test`` hands it a DAG run attached
    to no session), the commit comes right after: look again for up to :data:`COMMIT_WAIT` seconds.
    """
    from sqlalchemy import select

    model = _compat.dag_run_model()
    statement = select(model).where(model.dag_id == dag_id, model.run_id == run_id)
    deadline, pause = time.monotonic() + COMMIT_WAIT, 0.05
    while True:
        dag_run = session.scalars(statement).one_or_none()
        ended = dag_run is not None and state_name(dag_run.state) in ENDED
        if ended and dag_run.clear_number == clear_number:
            return dag_run
        if time.monotonic() + pause > deadline:
            found = "no such DAG run" if dag_run is None else f"{dag_run.state}, clear {dag_run.clear_number}"
            log.info("airflow-lineage-plus: DAG run %s/%s not ended as reported (%s)", dag_id, run_id, found)
            return None
        session.rollback()  # a new transaction sees what was committed since
        time.sleep(pause)
        pause = min(pause * 2, 1.0)


def _claimed_records(dag_id: str, run_id: str, clear_number: int) -> list[Any]:
    """The records of a finished DAG run whose claim this process won; claims committed, nothing emitted.

    Nothing is built unless the metadata database shows the DAG run ended in the same clear (a run
    cleared since, or an end that was rolled back, gets its records from its own, later report).
    """
    table = skip_claims_table(conf.skip_claims_table())
    with short_session(conf.skip_query_timeout()) as session:
        ensure_table(session, table)
        dag_run = _ended_run(session, dag_id, run_id, clear_number)
        if dag_run is None:
            return []
        events = records_for_dag_run(dag_run, session)
        won = claim(session.connection(), table, _claims(dag_run, events))
        session.commit()
    return [e for e in events if e.run.runId in won]


def emit_committed(dag_id: str, run_id: str, clear_number: int) -> None:
    """Build, claim and emit the records of a finished DAG run (runs in the provider's process pool).

    Reads through a short session of its own with every statement bounded by ``[lineage_plus]
    skip_query_timeout``; claims each runId in the metadata database (:mod:`~airflow_lineage_plus.claims`)
    so that of all the processes reporting this DAG run exactly one emits each record. Never raises: a
    failure is one warning per process and error type, and one INFO line naming the DAG run whose records
    were lost.
    """
    try:
        fresh = _claimed_records(dag_id, run_id, clear_number)
        if fresh:
            emit_events(fresh)
    except Exception as exc:
        report(BATCH, exc)
        lost = type(exc).__name__
        log.info("airflow-lineage-plus: no skip records for DAG run %s/%s (%s)", dag_id, run_id, lost)
        return
    if fresh:
        count = len(fresh)
        log.info("airflow-lineage-plus: emitted %d skip record(s) for DAG run %s/%s", count, dag_id, run_id)


def _hand_off_after_commit(dag_id: str, run_id: str, clear_number: int) -> None:
    if not hand_off(BATCH, emit_committed, dag_id, run_id, clear_number):
        log.info("airflow-lineage-plus: no skip records for DAG run %s/%s (not handed off)", dag_id, run_id)


def emit_for_dag_run(dag_run: Any) -> None:
    """The DAG-run hook's work: hand the DAG run's records to the provider's process pool after commit.

    Runs in the scheduler loop (or the API server, or ``airflow dags test``), so it sends no SQL and
    emits nothing: it notes which DAG run ended and, once the transaction that ended it commits, hands
    :func:`emit_committed` to the provider's DAG-event process pool (:mod:`.handoff`). If the pool
    cannot take it, the records are dropped with one warning.
    """
    from airflow.providers.openlineage.api import is_openlineage_active
    from sqlalchemy.orm import object_session

    if not conf.emit_skip_records() or not is_openlineage_active():
        return
    ids = (str(dag_run.dag_id), str(dag_run.run_id), int(dag_run.clear_number or 0))
    # The transaction that ends the run: the DAG run's own session, or (a DAG run attached to none, as
    # `airflow dags test` passes it) the thread's scoped session the caller is working in.
    session = object_session(dag_run) or _compat.thread_session()
    after_commit(session, lambda: _hand_off_after_commit(*ids))
