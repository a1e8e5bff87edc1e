"""Skip state: every task instance that did no work says so, once, in the OpenLineage event stream.

Two facets, each with a JSON Schema shipped in ``schemas/``:

- :class:`SkipStateRunFacet` (``lineagePlus_skipState``): the task instance was skipped, why (``reason``),
  which task caused it (``causedBy``) and, for trigger rules, the rule and the upstream states.
- :class:`ExecutionModeRunFacet` (``lineagePlus_executionMode``): a run that ran but did no real work
  (``CACHED``, ``NO_OP``), set from inside the task with :func:`set_execution_mode`.

Two paths put them in the stream:

- **Self-skips** (``AirflowSkipException``): the provider already emits COMPLETE for them. The
  ``custom_run_facets`` function :func:`run_facets` adds the skip facet to that very event (same runId,
  no extra event). Configure it with one line::

      AIRFLOW__OPENLINEAGE__CUSTOM_RUN_FACETS=airflow_lineage_plus.skip.run_facets

  The exception message comes from :func:`watch_for_self_skip`, which the package's listener calls
  when a task instance starts running on the worker: it notes the message of an ``AirflowSkipException``
  leaving ``execute()`` (or the method a deferred task resumes in) and re-raises it untouched.
- **Task instances that never ran** (skipped by a short-circuit or branch task, by a trigger rule, or
  marked by hand; ``upstream_failed`` ones too): the provider emits nothing for them. When the DAG run
  ends, :func:`emit_for_dag_run` (called by the listener in the scheduler) emits one ABORT event per such
  task instance, under the runId the provider's own deterministic function gives it, with the parent
  facet pointing at the DAG run, the task's declared inlets as inputs, no outputs, and the skip facet.
  A SQLite ledger (``[lineage_plus] skip_ledger_path``) makes each runId go out at most once.

See ``docs/skip-state.md`` for what a consumer sees in each case and why the records are ABORT events.
"""

from __future__ import annotations

import contextlib
import json
import logging
import sqlite3
import threading
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from datetime import datetime, timezone
from functools import wraps
from pathlib import Path
from typing import Any

from openlineage.client.facet_v2 import RunFacet

from airflow_lineage_plus import conf
from airflow_lineage_plus.containment import contain, contained
from airflow_lineage_plus.facets import (
    BRANCH_NOT_TAKEN,
    EXECUTION_MODES,
    MANUAL,
    SELF_SKIP,
    SHORT_CIRCUIT,
    SKIP_REASONS,
    TRIGGER_RULE,
    UNKNOWN,
    ExecutionModeRunFacet,
    SkipStateRunFacet,
)

log = logging.getLogger(__name__)

SKIP_STATE_KEY = SkipStateRunFacet.key
EXECUTION_MODE_KEY = ExecutionModeRunFacet.key
REASONS = SKIP_REASONS

# Task-instance states of a task instance that ended without running in its current try.
NOT_RUN_STATES = ("skipped", "upstream_failed")

# XCom key and fields SkipMixin (ShortCircuitOperator, branch operators) writes.
_SKIPMIXIN_KEY = "skipmixin_key"
_SKIPPED = "skipped"
_FOLLOWED = "followed"

# Audit-log events of a person changing a task instance's state through the API or UI.
_MANUAL_EVENTS = ("patch_task_instance", "patch_task_group_instances")


# --------------------------------------------------------------------------------------------------
# Worker side: a process-local registry keyed by the task instance, read by the custom run facets
# function in the provider's forked child (or thread) after execute().

TaskKey = tuple[str, str, str, int, int]

_lock = threading.Lock()
_self_skip_messages: dict[TaskKey, str | None] = {}
_modes: dict[TaskKey, ExecutionModeRunFacet] = {}
_WRAPPED_MARK = "_lineage_plus_skip_watch"
_KEY_ATTR = "_lineage_plus_skip_key"


def task_key(task_instance: Any) -> TaskKey:
    """Registry key of a task instance: (dag_id, task_id, run_id, map_index, try_number)."""
    map_index = getattr(task_instance, "map_index", -1)
    return (
        str(task_instance.dag_id),
        str(task_instance.task_id),
        str(task_instance.run_id),
        -1 if map_index is None else int(map_index),
        int(getattr(task_instance, "try_number", 0) or 0),
    )


def _current_task_key() -> TaskKey:
    from airflow.sdk import get_current_context

    return task_key(get_current_context()["ti"])


@contain("the execution mode facet", default=lambda: None)
def set_execution_mode(mode: str, reason: str | None = None) -> None:
    """Say, from inside a running task, how this run went: ``RAN``, ``CACHED`` or ``NO_OP``.

    The mode lands on the task's own COMPLETE (or FAIL) event as ``lineagePlus_executionMode``. A mode
    outside :data:`EXECUTION_MODES` is refused (logged once, the task goes on).
    """
    normalized = str(mode).strip().upper().replace("-", "_")
    if normalized not in EXECUTION_MODES:
        raise ValueError(f"execution mode {mode!r} is not one of {', '.join(EXECUTION_MODES)}")
    facet = ExecutionModeRunFacet(mode=normalized, reason=reason)
    key = _current_task_key()
    with _lock:
        _modes[key] = facet


def execution_mode(task_instance: Any) -> ExecutionModeRunFacet | None:
    """The execution mode the task instance set, if any."""
    with _lock:
        return _modes.get(task_key(task_instance))


def self_skip_message(task_instance: Any) -> str | None:
    """The message of the ``AirflowSkipException`` the task instance raised, if one was seen."""
    with _lock:
        return _self_skip_messages.get(task_key(task_instance))


def _is_skip_exception(exc: BaseException) -> bool:
    return any(cls.__name__ == "AirflowSkipException" for cls in type(exc).__mro__)


def _watching(task: Any, method: Callable[..., Any]) -> Callable[..., Any]:
    @wraps(method)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        try:
            return method(*args, **kwargs)
        except BaseException as exc:
            key = getattr(task, _KEY_ATTR, None)
            if key is not None and _is_skip_exception(exc):
                with contained("the self-skip message"):
                    message = str(exc.args[0]) if exc.args and exc.args[0] is not None else None
                    with _lock:
                        _self_skip_messages[key] = message
            raise

    setattr(wrapper, _WRAPPED_MARK, True)
    return wrapper


@contain("the self-skip message watch", default=lambda: None)
def watch_for_self_skip(task_instance: Any) -> None:
    """Note the message of an ``AirflowSkipException`` the task instance raises (called on the worker).

    Wraps ``execute`` and ``resume_execution`` (the entry point after a deferral) of this task
    instance's operator object only; the exception is re-raised unchanged. The wrapper files the message
    under the task instance that most recently started on that object.
    """
    task = getattr(task_instance, "task", None)
    if task is None:
        return
    object.__setattr__(task, _KEY_ATTR, task_key(task_instance))
    for name in ("execute", "resume_execution"):
        method = getattr(task, name, None)
        if method is None or getattr(method, _WRAPPED_MARK, False):
            continue
        object.__setattr__(task, name, _watching(task, method))


def _no_facets() -> dict[str, RunFacet]:
    return {}


def _state_name(state: Any) -> str:
    return str(getattr(state, "value", state) or "").lower()


@contain("the skip-state and execution-mode run facets", default=_no_facets)
def run_facets(task_instance: Any, ti_state: Any) -> dict[str, RunFacet]:
    """``[openlineage] custom_run_facets`` function: the skip facet on a self-skip, and the execution mode.

    The provider calls it for every task event with the task instance state; on a self-skip that is
    SKIPPED on the provider's COMPLETE event.
    """
    facets: dict[str, RunFacet] = {}
    if conf.is_disabled():
        return facets
    if _state_name(ti_state) == "skipped":
        message = self_skip_message(task_instance)
        map_index = getattr(task_instance, "map_index", -1)
        facets[SKIP_STATE_KEY] = SkipStateRunFacet(
            skipped=True,
            reason=SELF_SKIP,
            message=message or "the task raised AirflowSkipException",
            state="skipped",
            mapIndex=-1 if map_index is None else int(map_index),
            tryNumber=int(getattr(task_instance, "try_number", 0) or 0),
        )
    mode = execution_mode(task_instance)
    if mode is not None and _state_name(ti_state) != "running":
        facets[EXECUTION_MODE_KEY] = mode
    return facets


# --------------------------------------------------------------------------------------------------
# Scheduler side: one record per task instance that ended without running.


@dataclass(frozen=True)
class SkipCause:
    """Why a task instance did not run, as the skip facet reports it."""

    reason: str
    message: str
    caused_by: str | None = None
    trigger_rule: str | None = None
    upstream_states: dict[str, str] | None = None


@dataclass
class DagRunSnapshot:
    """What the metadata database says about one DAG run, read once (plain data, no ORM objects)."""

    dag_id: str
    run_id: str
    states: dict[tuple[str, int], str] = field(default_factory=dict)
    try_numbers: dict[tuple[str, int], int] = field(default_factory=dict)
    end_dates: dict[tuple[str, int], datetime | None] = field(default_factory=dict)
    started: set[tuple[str, int, int]] = field(default_factory=set)
    skipmixin: dict[tuple[str, int], dict[str, Any]] = field(default_factory=dict)
    manual: dict[tuple[str, int], str] = field(default_factory=dict)

    def not_run(self) -> list[tuple[str, int]]:
        """Task instances in a not-run state whose current try never started."""
        return sorted(
            ti
            for ti, state in self.states.items()
            if state in NOT_RUN_STATES and (ti[0], ti[1], self.try_numbers.get(ti, 0)) not in self.started
        )

    def upstream_states(self, upstream_ids: Iterable[str], map_index: int) -> dict[str, str]:
        """State of each upstream task: the same map index if it has one, else all its instances."""
        result: dict[str, str] = {}
        for upstream in sorted(upstream_ids):
            if (upstream, map_index) in self.states:
                result[upstream] = self.states[(upstream, map_index)]
                continue
            found = sorted({s for (task_id, _), s in self.states.items() if task_id == upstream})
            result[upstream] = ",".join(found) if found else "none"
        return result


def explain(snapshot: DagRunSnapshot, task_id: str, map_index: int, task: Any) -> SkipCause:
    """Work out why a task instance did not run, from the DAG run's states, XComs and audit log."""
    if (task_id, map_index) in snapshot.manual:
        who = snapshot.manual[(task_id, map_index)]
        return SkipCause(MANUAL, f"marked {snapshot.states[(task_id, map_index)]} by hand ({who})")
    for (source, source_map), record in sorted(snapshot.skipmixin.items()):
        skipped = record.get(_SKIPPED)
        if skipped and task_id in skipped and source_map in (map_index, -1):
            return SkipCause(SHORT_CIRCUIT, f"short-circuited by task {source!r}", caused_by=source)
    upstream_ids = sorted(getattr(task, "upstream_task_ids", ()) or ())
    for upstream in upstream_ids:
        value = snapshot.skipmixin.get((upstream, map_index)) or snapshot.skipmixin.get((upstream, -1))
        if value and _FOLLOWED in value and task_id not in (value.get(_FOLLOWED) or []):
            followed = ", ".join(value.get(_FOLLOWED) or []) or "no task"
            return SkipCause(
                BRANCH_NOT_TAKEN,
                f"branch not taken at task {upstream!r} (it followed {followed})",
                caused_by=upstream,
            )
    if upstream_ids:
        rule = _state_name(getattr(task, "trigger_rule", "all_success")) or "all_success"
        states = snapshot.upstream_states(upstream_ids, map_index)
        culprit = _trigger_rule_culprit(rule, states)
        listed = ", ".join(f"{u}={s}" for u, s in states.items())
        return SkipCause(
            TRIGGER_RULE,
            f"trigger rule {rule} not met: upstream {listed}",
            caused_by=culprit,
            trigger_rule=rule,
            upstream_states=states,
        )
    return SkipCause(UNKNOWN, "skipped without running; no upstream task, branch or person explains it")


def _trigger_rule_culprit(rule: str, states: Mapping[str, str]) -> str | None:
    """The upstream task whose state the rule could not accept (first in task_id order)."""
    if rule in {"one_failed", "all_failed"}:
        unwanted = {"success", "skipped"}
    elif rule == "all_skipped":
        unwanted = {"success", "failed", "upstream_failed"}
    elif rule in {"one_success", "all_done_min_one_success", "none_failed_min_one_success"}:
        unwanted = {"failed", "upstream_failed", "skipped"}
    else:
        unwanted = {"failed", "upstream_failed", "skipped", "removed"}
    for upstream, state in states.items():
        if any(part in unwanted for part in state.split(",")):
            return upstream
    return None


def _xcom_value(raw: Any) -> Any:
    if isinstance(raw, str | bytes):
        with contextlib.suppress(ValueError, TypeError):
            return json.loads(raw)
    return raw


def snapshot_dag_run(dag_id: str, run_id: str, session: Any) -> DagRunSnapshot:
    """Read the task-instance states, try starts, SkipMixin XComs and manual changes of one DAG run."""
    from airflow.models.log import Log
    from airflow.models.taskinstance import TaskInstance
    from airflow.models.xcom import XComModel
    from sqlalchemy import select

    snap = DagRunSnapshot(dag_id=dag_id, run_id=run_id)
    rows = session.execute(
        select(
            TaskInstance.task_id,
            TaskInstance.map_index,
            TaskInstance.state,
            TaskInstance.try_number,
            TaskInstance.end_date,
            TaskInstance.hostname,
        ).where(TaskInstance.dag_id == dag_id, TaskInstance.run_id == run_id)
    ).all()
    ran_on_a_host: set[tuple[str, int, int]] = set()
    for task_id, map_index, state, try_number, end_date, hostname in rows:
        ti = (str(task_id), int(map_index))
        snap.states[ti] = _state_name(state) or "none"
        snap.try_numbers[ti] = int(try_number or 0)
        snap.end_dates[ti] = end_date
        if hostname:
            ran_on_a_host.add((*ti, snap.try_numbers[ti]))
    if not any(state in NOT_RUN_STATES for state in snap.states.values()):
        return snap
    # Every try that started has an audit-log row written by the execution API when it went RUNNING;
    # the provider reported exactly those tries.
    for task_id, map_index, try_number in session.execute(
        select(Log.task_id, Log.map_index, Log.try_number).where(
            Log.dag_id == dag_id, Log.run_id == run_id, Log.event == "running"
        )
    ).all():
        snap.started.add((str(task_id), -1 if map_index is None else int(map_index), int(try_number or 0)))
    if not snap.started:
        # Airflow 3.1 writes no "running" audit rows under `airflow dags test`; there, a worker that
        # started a try is known by the hostname it recorded on the task instance.
        snap.started |= ran_on_a_host
    for task_id, map_index, value in session.execute(
        select(XComModel.task_id, XComModel.map_index, XComModel.value).where(
            XComModel.dag_id == dag_id, XComModel.run_id == run_id, XComModel.key == _SKIPMIXIN_KEY
        )
    ).all():
        decoded = _xcom_value(value)
        if isinstance(decoded, dict):
            snap.skipmixin[(str(task_id), int(map_index))] = decoded
    for task_id, map_index, owner, extra in session.execute(
        select(Log.task_id, Log.map_index, Log.owner, Log.extra).where(
            Log.dag_id == dag_id, Log.run_id == run_id, Log.event.in_(_MANUAL_EVENTS)
        )
    ).all():
        if task_id and "skipped" in str(extra or "").lower():
            index = -1 if map_index is None else int(map_index)
            snap.manual[(str(task_id), index)] = str(owner or "unknown user")
    return snap


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
        from airflow_lineage_plus.datasets import from_asset

        ref = from_asset(_sdk_asset(inlet))
        if ref is not None:
            return str(ref.namespace), str(ref.name)
        from airflow.providers.openlineage.utils.utils import translate_airflow_asset

        dataset = translate_airflow_asset(_sdk_asset(inlet), None)
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
    from airflow.providers.openlineage.plugins.adapter import OpenLineageAdapter

    date = dag_run.logical_date or dag_run.run_after
    return str(
        OpenLineageAdapter.build_dag_run_id(
            dag_id=dag_run.dag_id, logical_date=date, clear_number=dag_run.clear_number
        )
    )


def build_record(dag_run: Any, snapshot: DagRunSnapshot, task_id: str, map_index: int, task: Any) -> Any:
    """The ABORT event for one task instance that did not run (an ``openlineage`` RunEvent)."""
    from airflow.providers.openlineage import conf as ol_conf
    from airflow.providers.openlineage.plugins.adapter import OpenLineageAdapter
    from airflow.providers.openlineage.utils.utils import (
        get_processing_engine_facet,
        get_task_parent_run_facet,
    )
    from openlineage.client.event_v2 import Job, Run, RunEvent, RunState
    from openlineage.client.facet_v2 import job_type_job, nominal_time_run

    date = dag_run.logical_date or dag_run.run_after
    try_number = snapshot.try_numbers.get((task_id, map_index), 0)
    run_id = OpenLineageAdapter.build_task_instance_run_id(
        dag_id=dag_run.dag_id, task_id=task_id, try_number=try_number, logical_date=date, map_index=map_index
    )
    parent_run_id = dag_run_ol_id(dag_run)
    cause = explain(snapshot, task_id, map_index, task)
    facets: dict[str, RunFacet] = {
        **get_task_parent_run_facet(
            parent_run_id=parent_run_id, parent_job_name=dag_run.dag_id, dr_conf=dag_run.conf or {}
        ),
        **get_processing_engine_facet(),
        SKIP_STATE_KEY: SkipStateRunFacet(
            skipped=True,
            reason=cause.reason,
            message=cause.message,
            causedBy=cause.caused_by,
            triggerRule=cause.trigger_rule,
            upstreamStates=cause.upstream_states,
            state=snapshot.states[(task_id, map_index)],
            mapIndex=map_index,
            tryNumber=try_number,
        ),
    }
    if dag_run.data_interval_start is not None:
        facets["nominalTime"] = nominal_time_run.NominalTimeRunFacet(
            nominalStartTime=dag_run.data_interval_start.isoformat(),
            nominalEndTime=dag_run.data_interval_end.isoformat() if dag_run.data_interval_end else None,
        )
    ended = snapshot.end_dates.get((task_id, map_index)) or dag_run.end_date or datetime.now(timezone.utc)
    return RunEvent(
        eventType=RunState.ABORT,
        eventTime=ended.isoformat(),
        run=Run(runId=str(run_id), facets=facets),
        job=Job(
            namespace=ol_conf.namespace(),
            name=f"{dag_run.dag_id}.{task_id}",
            facets={
                "jobType": job_type_job.JobTypeJobFacet(
                    processingType="BATCH", integration="AIRFLOW", jobType="TASK"
                )
            },
        ),
        inputs=_declared_inputs(task),
        outputs=[],
    )


class Ledger:
    """SQLite notes of the runIds skip records went out for: a runId is claimed at most once."""

    def __init__(self, path: Path) -> None:
        self.path = path

    @contextlib.contextmanager
    def _connect(self) -> Iterator[sqlite3.Connection]:
        self.path.parent.mkdir(parents=True, exist_ok=True)
        connection = sqlite3.connect(self.path, timeout=10)
        try:
            connection.execute(
                "CREATE TABLE IF NOT EXISTS skip_records (run_id TEXT PRIMARY KEY, dag_id TEXT, "
                "task_id TEXT, map_index INTEGER, try_number INTEGER, dag_run_id TEXT, claimed_at TEXT)"
            )
            yield connection
            connection.commit()
        finally:
            connection.close()

    def claim(self, rows: list[tuple[str, str, str, int, int, str]]) -> set[str]:
        """Claim runIds (run_id, dag_id, task_id, map_index, try_number, dag_run_id); returns the new."""
        claimed: set[str] = set()
        now = datetime.now(timezone.utc).isoformat()
        with self._connect() as connection:
            for row in rows:
                cursor = connection.execute(
                    "INSERT OR IGNORE INTO skip_records VALUES (?, ?, ?, ?, ?, ?, ?)", (*row, now)
                )
                if cursor.rowcount == 1:
                    claimed.add(row[0])
        return claimed

    def release(self, run_ids: Iterable[str]) -> None:
        """Forget claims whose events could not be handed over for emission."""
        with self._connect() as connection:
            connection.executemany("DELETE FROM skip_records WHERE run_id = ?", [(r,) for r in run_ids])

    def claimed(self, dag_id: str) -> set[str]:
        """Every runId claimed for a DAG (for diagnostics and tests)."""
        with self._connect() as connection:
            rows = connection.execute(
                "SELECT run_id FROM skip_records WHERE dag_id = ?", (dag_id,)
            ).fetchall()
        return {r[0] for r in rows}


def emit_events(events: list[Any]) -> None:
    """Emit events through the provider's adapter (redaction, configured transport). Pool-safe."""
    from airflow.providers.openlineage.api import emit

    for event in events:
        with contained(f"the skip record of {event.job.name}"):
            emit(event)


def _task_emits(task: Any, dag_id: str, task_id: str) -> bool:
    """Whether the provider's emission policy lets task-level events out for this task."""
    try:
        from airflow.providers.openlineage.utils.emission_policy import resolve_task_emission_policy
    except ImportError:
        return True
    controls = resolve_task_emission_policy(operator=task, dag_id=dag_id, task_id=task_id)
    return bool(getattr(controls, "emit", True)) and bool(getattr(controls, "emit_task_events", True))


def records_for_dag_run(dag_run: Any, session: Any) -> list[Any]:
    """Build (do not emit) the records of the task instances of a DAG run that did not run."""
    snapshot = snapshot_dag_run(dag_run.dag_id, dag_run.run_id, session)
    pending = snapshot.not_run()
    if not pending:
        return []
    dag = getattr(dag_run, "dag", None)
    if dag is None:
        from airflow.models.dagbag import DBDagBag

        dag = DBDagBag().get_dag_for_run(dag_run=dag_run, session=session)
    events = []
    for task_id, map_index in pending:
        task = dag.get_task(task_id) if dag is not None and dag.has_task(task_id) else None
        if task is not None and not _task_emits(task, dag_run.dag_id, task_id):
            continue
        events.append(build_record(dag_run, snapshot, task_id, map_index, task))
    return events


def _session_of(dag_run: Any) -> Any:
    """The session the DAG run is attached to (the scheduler's), used for reads only: never committed."""
    from sqlalchemy.orm import object_session

    return object_session(dag_run)


@contextlib.contextmanager
def _read_only_session() -> Iterator[Any]:
    """A session of its own (not Airflow's scoped one), rolled back and closed after reading."""
    from airflow import settings
    from sqlalchemy.orm import Session

    session = Session(bind=settings.engine)
    try:
        yield session
    finally:
        session.rollback()
        session.close()


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
    if session is None:
        session = _session_of(dag_run)
    if session is None:
        with _read_only_session() as own:
            events = records_for_dag_run(dag_run, own)
    else:
        events = records_for_dag_run(dag_run, session)
    if not events:
        return []
    ledger = Ledger(conf.skip_ledger_path())
    parent = dag_run_ol_id(dag_run)
    claimed = ledger.claim(
        [
            (
                e.run.runId,
                dag_run.dag_id,
                e.job.name.removeprefix(f"{dag_run.dag_id}."),
                e.run.facets[SKIP_STATE_KEY].mapIndex,
                e.run.facets[SKIP_STATE_KEY].tryNumber,
                parent,
            )
            for e in events
        ]
    )
    fresh = [e for e in events if e.run.runId in claimed]
    if not fresh:
        return []
    try:
        from airflow.providers.openlineage.plugins.listener import get_openlineage_listener

        get_openlineage_listener().submit_callable(emit_events, fresh)
    except Exception as exc:
        log.debug("airflow-lineage-plus: no OpenLineage process pool (%s); emitting skip records here", exc)
        try:
            emit_events(fresh)
        except Exception:
            ledger.release(e.run.runId for e in fresh)
            raise
    log.info(
        "airflow-lineage-plus: emitted %d skip record(s) for DAG run %s/%s",
        len(fresh),
        dag_run.dag_id,
        dag_run.run_id,
    )
    return fresh
