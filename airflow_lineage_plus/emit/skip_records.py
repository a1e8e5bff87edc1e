"""Scheduler side of skip state: one ABORT record per task instance that ended without running.

The provider emits nothing for task instances skipped by a short-circuit or branch task, by a trigger
rule, or marked by hand (``upstream_failed`` ones too). When the DAG run ends, :func:`emit_for_dag_run`
(called by the listener in the scheduler) emits one ABORT event per such task instance, under the runId the
provider's own deterministic function gives it, with the parent facet pointing at the DAG run, the task's
declared inlets as inputs, no outputs, and the skip facet (its cause from :mod:`.skip_causes`). The
:class:`~.ledger.Ledger` makes each runId go out at most once. See ``docs/skip-state.md`` for what a
consumer sees and why the records are ABORT events.
"""

from __future__ import annotations

import contextlib
import logging
from collections.abc import Iterator
from datetime import datetime, timezone
from typing import Any

from openlineage.client.facet_v2 import RunFacet

from airflow_lineage_plus import _compat, conf
from airflow_lineage_plus.containment import contained
from airflow_lineage_plus.datasets import from_asset
from airflow_lineage_plus.emit.ledger import Claim, Ledger
from airflow_lineage_plus.emit.skip_causes import DagRunSnapshot, explain, snapshot_dag_run
from airflow_lineage_plus.facets import SkipStateRunFacet

log = logging.getLogger(__name__)


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
        inputs=_declared_inputs(task),
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
    snapshot = snapshot_dag_run(dag_run.dag_id, dag_run.run_id, session)
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


@contextlib.contextmanager
def _read_only_session() -> Iterator[Any]:
    """A session of its own (not Airflow's scoped one), rolled back and closed after reading."""
    from sqlalchemy.orm import Session

    session = Session(bind=_compat.metadata_engine())
    try:
        yield session
    finally:
        session.rollback()
        session.close()


def _build(dag_run: Any, session: Any) -> list[Any]:
    """The records, read through ``session``, the DAG run's own session, or a session of its own."""
    if session is None:
        from sqlalchemy.orm import object_session

        session = object_session(dag_run)
    if session is not None:
        return records_for_dag_run(dag_run, session)
    with _read_only_session() as own:
        return records_for_dag_run(dag_run, own)


def _claims(dag_run: Any, events: list[Any]) -> list[Claim]:
    parent = dag_run_ol_id(dag_run)
    claims: list[Claim] = []
    for event in events:
        skip = event.run.facets[SkipStateRunFacet.key]
        task_id = event.job.name.removeprefix(f"{dag_run.dag_id}.")
        claims.append((event.run.runId, dag_run.dag_id, task_id, skip.mapIndex, skip.tryNumber, parent))
    return claims


def _hand_over(fresh: list[Any], ledger: Ledger) -> None:
    """Emit in the provider's DAG-event process pool; here when there is none (released on failure)."""
    try:
        _compat.submit_to_openlineage_pool(emit_events, fresh)
    except Exception as exc:
        log.debug("airflow-lineage-plus: no OpenLineage process pool (%s); emitting skip records here", exc)
        try:
            emit_events(fresh)
        except Exception:
            ledger.release(e.run.runId for e in fresh)
            raise


def emit_for_dag_run(dag_run: Any, session: Any = None) -> list[Any]:
    """Emit one record per task instance of a finished DAG run that did not run; returns what was sent.

    Claims each runId in the ledger first, so a second call for the same DAG run emits nothing. The
    events go to the provider's DAG-event process pool (the scheduler does not wait for the transport);
    where no pool can take them they are emitted here. The metadata database is only read: through the
    session the DAG run belongs to (so task-instance states set in the scheduler's current transaction
    are seen), which is never committed or closed here, or else through a session of its own.
    """
    from airflow.providers.openlineage.api import is_openlineage_active

    if not conf.emit_skip_records() or not is_openlineage_active():
        return []
    events = _build(dag_run, session)
    if not events:
        return []
    ledger = Ledger(conf.skip_ledger_path())
    claimed = ledger.claim(_claims(dag_run, events))
    fresh = [e for e in events if e.run.runId in claimed]
    if not fresh:
        return []
    _hand_over(fresh, ledger)
    log.info(
        "airflow-lineage-plus: emitted %d skip record(s) for DAG run %s/%s",
        len(fresh),
        dag_run.dag_id,
        dag_run.run_id,
    )
    return fresh
