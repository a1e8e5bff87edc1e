"""Why a task instance did not run, worked out from what the metadata database says about its DAG run.

:func:`snapshot_dag_run` reads, once, the DAG run's task-instance states, the tries that started and the
manual state changes (one audit-log read) and the SkipMixin XComs (short circuits, branches);
:func:`explain` turns that into a :class:`SkipCause`: ``MANUAL``, ``SHORT_CIRCUIT``, ``BRANCH_NOT_TAKEN``,
``TRIGGER_RULE`` (with the rule, the upstream states and the culprit) or ``UNKNOWN``.
"""

from __future__ import annotations

import contextlib
import json
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from airflow_lineage_plus import _compat
from airflow_lineage_plus.custom_facets import (
    BRANCH_NOT_TAKEN,
    MANUAL,
    SHORT_CIRCUIT,
    TRIGGER_RULE,
    UNKNOWN,
)
from airflow_lineage_plus.emit.self_skip import state_name

#: Task-instance states of a task instance that ended without running in its current try.
NOT_RUN_STATES = ("skipped", "upstream_failed")
#: Audit-log event the execution API writes when a try starts running.
STARTED_EVENT = "running"
#: Audit-log events of a person changing a task instance's state through the API or UI.
MANUAL_EVENTS = ("patch_task_instance", "patch_task_group_instances")

TaskInstanceId = tuple[str, int]  # (task_id, map_index)


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
    states: dict[TaskInstanceId, str] = field(default_factory=dict)
    try_numbers: dict[TaskInstanceId, int] = field(default_factory=dict)
    end_dates: dict[TaskInstanceId, datetime | None] = field(default_factory=dict)
    started: set[tuple[str, int, int]] = field(default_factory=set)
    skipmixin: dict[TaskInstanceId, dict[str, Any]] = field(default_factory=dict)
    manual: dict[TaskInstanceId, str] = field(default_factory=dict)

    def not_run(self) -> list[TaskInstanceId]:
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
    _, skipped_field, followed_field = _compat.skipmixin_xcom_keys()
    for (source, source_map), record in sorted(snapshot.skipmixin.items()):
        skipped = record.get(skipped_field)
        if skipped and task_id in skipped and source_map in (map_index, -1):
            return SkipCause(SHORT_CIRCUIT, f"short-circuited by task {source!r}", caused_by=source)
    upstream_ids = sorted(getattr(task, "upstream_task_ids", ()) or ())
    for upstream in upstream_ids:
        value = snapshot.skipmixin.get((upstream, map_index)) or snapshot.skipmixin.get((upstream, -1))
        if value and followed_field in value and task_id not in (value.get(followed_field) or []):
            followed = ", ".join(value.get(followed_field) or []) or "no task"
            return SkipCause(
                BRANCH_NOT_TAKEN,
                f"branch not taken at task {upstream!r} (it followed {followed})",
                caused_by=upstream,
            )
    if upstream_ids:
        return _trigger_rule_cause(snapshot, task, upstream_ids, map_index)
    return SkipCause(UNKNOWN, "skipped without running; no upstream task, branch or person explains it")


def _trigger_rule_cause(
    snapshot: DagRunSnapshot, task: Any, upstream_ids: list[str], map_index: int
) -> SkipCause:
    rule = state_name(getattr(task, "trigger_rule", "all_success")) or "all_success"
    states = snapshot.upstream_states(upstream_ids, map_index)
    listed = ", ".join(f"{u}={s}" for u, s in states.items())
    return SkipCause(
        TRIGGER_RULE,
        f"trigger rule {rule} not met: upstream {listed}",
        caused_by=_trigger_rule_culprit(rule, states),
        trigger_rule=rule,
        upstream_states=states,
    )


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


def snapshot_dag_run(dag_id: str, run_id: str, dag_run_key: int, session: Any) -> DagRunSnapshot:
    """Read the task-instance states, try starts, SkipMixin XComs and manual changes of one DAG run.

    At most three statements, each served by an index: the task instances by ``ti_dag_run``; only if
    some did not run, the audit log by ``idx_log_task_instance`` (with the not-run task ids, so the
    index narrows to this run instead of the DAG's whole history) and the XComs by their primary key
    (``dag_run_key``, the DAG run's numeric id).
    """
    snap = DagRunSnapshot(dag_id=dag_id, run_id=run_id)
    ran_on_a_host = _read_task_instances(snap, session)
    pending_tasks = sorted({task for (task, _), state in snap.states.items() if state in NOT_RUN_STATES})
    if not pending_tasks:
        return snap
    _read_audit_log(snap, session, pending_tasks)
    if not snap.started:
        # Airflow 3.1 writes no "running" audit rows under `airflow dags test`; there, a worker that
        # started a try is known by the hostname it recorded on the task instance.
        snap.started |= ran_on_a_host
    _read_skipmixin(snap, session, dag_run_key)
    return snap


def _read_task_instances(snap: DagRunSnapshot, session: Any) -> set[tuple[str, int, int]]:
    """Fill states, try numbers and end dates; returns the tries that recorded a worker hostname."""
    from sqlalchemy import select

    _, task_instance, _ = _compat.metadata_models()
    rows = session.execute(
        select(
            task_instance.task_id,
            task_instance.map_index,
            task_instance.state,
            task_instance.try_number,
            task_instance.end_date,
            task_instance.hostname,
        ).where(task_instance.dag_id == snap.dag_id, task_instance.run_id == snap.run_id)
    ).all()
    ran_on_a_host: set[tuple[str, int, int]] = set()
    for task_id, map_index, state, try_number, end_date, hostname in rows:
        ti = (str(task_id), int(map_index))
        snap.states[ti] = state_name(state) or "none"
        snap.try_numbers[ti] = int(try_number or 0)
        snap.end_dates[ti] = end_date
        if hostname:
            ran_on_a_host.add((*ti, snap.try_numbers[ti]))
    return ran_on_a_host


def audit_log_statement(dag_id: str, run_id: str, task_ids: list[str]) -> Any:
    """The one audit-log read: tries that started and manual state changes of some tasks of a DAG run.

    ``dag_id = ? AND task_id IN (...) AND run_id = ?`` follows the column order of the ``log`` table's
    ``idx_log_task_instance (dag_id, task_id, run_id, map_index, try_number)``, so the index seeks
    straight to this run's rows of those tasks (docs/deployment.md shows the plan).
    """
    from sqlalchemy import select

    log, _, _ = _compat.metadata_models()
    return select(log.task_id, log.map_index, log.try_number, log.event, log.owner, log.extra).where(
        log.dag_id == dag_id,
        log.task_id.in_(task_ids),
        log.run_id == run_id,
        log.event.in_((STARTED_EVENT, *MANUAL_EVENTS)),
    )


def _read_audit_log(snap: DagRunSnapshot, session: Any, task_ids: list[str]) -> None:
    """Every try that started has an audit-log row written by the execution API when it went RUNNING (the
    provider reported exactly those tries); a person's state change has a ``patch_*`` row."""
    statement = audit_log_statement(snap.dag_id, snap.run_id, task_ids)
    for task_id, map_index, try_number, event, owner, extra in session.execute(statement).all():
        index = -1 if map_index is None else int(map_index)
        if event == STARTED_EVENT:
            snap.started.add((str(task_id), index, int(try_number or 0)))
        elif task_id and "skipped" in str(extra or "").lower():
            snap.manual[(str(task_id), index)] = str(owner or "unknown user")


def _read_skipmixin(snap: DagRunSnapshot, session: Any, dag_run_key: int) -> None:
    """The SkipMixin XComs of the run, by the XCom primary key's first column (the DAG run's id)."""
    from sqlalchemy import select

    _, _, xcom = _compat.metadata_models()
    key, _, _ = _compat.skipmixin_xcom_keys()
    statement = select(xcom.task_id, xcom.map_index, xcom.value).where(
        xcom.dag_run_id == dag_run_key, xcom.key == key
    )
    for task_id, map_index, value in session.execute(statement).all():
        decoded = _xcom_value(value)
        if isinstance(decoded, dict):
            snap.skipmixin[(str(task_id), int(map_index))] = decoded
