"""Records of the store's folded rows: a job, a dataset and a run as :class:`~.stored_graph.StoredGraph`
reads them (the newest fact of each kind is the one the folding kept)."""

from __future__ import annotations

import weakref
from typing import Any

import orjson

from airflow_lineage_plus.graph.records import DatasetRecord, JobRecord
from airflow_lineage_plus.graph.runs import RunRecord
from airflow_lineage_plus.store import facts as f


def fields(text: str) -> tuple[tuple[Any, ...], ...]:
    """A schema's fields from their stored JSON."""
    return tuple(tuple(field) for field in orjson.loads(text))


def job_facts(job: JobRecord, facts: dict[str, f.FactRow]) -> None:
    """Put a job's newest facts (its event ref, owners, freshness target, declared edges) on ``job``."""
    if (fact := facts.get(f.JOB_REF)) is not None:
        job.ref = int(fact.value)
    if (fact := facts.get(f.OWNERS)) is not None:
        job.owners = tuple(orjson.loads(fact.value))
    if (fact := facts.get(f.SLO)) is not None:
        job.slo_minutes = int(fact.value)
    if (fact := facts.get(f.DECLARED)) is not None:
        edges = frozenset((origin, destination) for origin, destination in orjson.loads(fact.value))
        job.declared = ((fact.event_time, fact.tie.decode()), edges)


def dataset_facts(record: DatasetRecord, facts: dict[str, f.FactRow]) -> None:
    """Put a dataset's newest facts (refs, fields, owners, column lineage) on ``record``."""
    if (fact := facts.get(f.DATASET_REF)) is not None:
        record.ref = int(fact.value)
    if (fact := facts.get(f.WRITE)) is not None:
        record.write_ref, record.write_time = int(fact.value), fact.event_time
    if (fact := facts.get(f.FIELDS)) is not None:
        record.fields = fields(fact.value)  # type: ignore[assignment]
    if (fact := facts.get(f.OWNERS)) is not None:
        record.owners = tuple(orjson.loads(fact.value))
    if (fact := facts.get(f.COLUMNS)) is not None:
        record.columns = {
            column: tuple(
                (namespace, name, field, tuple(tuple(t) for t in transforms))
                for namespace, name, field, transforms in inputs
            )
            for column, inputs in orjson.loads(fact.value).items()
        }


def run_record(
    row: f.RunRow, job_id: str, state: f.RunStateRow | None, parent: f.RunParentRow | None
) -> RunRecord:
    """The record of a run of ``job_id``: its times and DAG, its folded state, its parent."""
    run = RunRecord(row.run_id, job_id)
    run.start, run.first_seen, run.dag_id = row.start, row.first_seen, row.dag_id
    if state is not None:
        run.end, run.rank = state.end_time, state.rank
        run.skipped, run.upstream_failed = bool(state.skipped), bool(state.upstream_failed)
        run.skip_reason = (state.skip_reason or None) if state.skipped else None
    if parent is not None:
        run.parent_run_id = parent.parent_run_id
        run.parent_job_id = parent.parent_job_id or None
    return run


def run_facts(run: RunRecord, facts: dict[str, f.FactRow]) -> None:
    """The run's newest error and execution mode."""
    if (fact := facts.get(f.ERROR)) is not None:
        run.error = orjson.loads(fact.value)
    if (fact := facts.get(f.MODE)) is not None:
        run.exec_mode = orjson.loads(fact.value)


class LazyRecords(dict[str, Any]):
    """A dict of records that reads a missing one from the store when asked for it by key (through a
    weak reference to the graph's loader: the graph and its records form no cycle, so a graph no longer
    used is freed at once, and its read of the store ends)."""

    def __init__(self, load: Any) -> None:
        super().__init__()
        self._load = weakref.WeakMethod(load)

    def _read(self, key: str) -> None:
        load = self._load()
        if load is not None:
            load((key,))

    def get(self, key: str, default: Any = None) -> Any:
        if not dict.__contains__(self, key):
            self._read(key)
        return dict.get(self, key, default)

    def __getitem__(self, key: str) -> Any:
        if not dict.__contains__(self, key):
            self._read(key)
        return dict.__getitem__(self, key)

    def __contains__(self, key: object) -> bool:
        if isinstance(key, str) and not dict.__contains__(self, key):
            self._read(key)
        return dict.__contains__(self, key)
