"""A lineage graph opened from an index (:mod:`.snapshot`), then kept up to date with appended events.

Opening loads the *hot* part only: jobs, datasets, edges and, instead of every run, a summary of each
job's runs: its latest run, the sort key of its latest completed run, its current edges
(:mod:`.retirement`) and the sort key of its newest run. Events appended after the snapshot are folded
in as usual; a job's answers then come from its summary merged with its new runs, which is exact because
the summary keeps what the rules need:

* latest run: the newer of the summary's and the new runs';
* current edges: while the latest completed run is the summary's, its current edges plus those of new runs
  at least as new; when a new run completed and is newer than every run of the snapshot, the edges of the
  new runs from it on.

Anything else, such as an appended event of a run that began before the snapshot (found in the index's
run table), a new completed run older than some run of the snapshot, or a change to a DAG run that
skipped the job, makes the job *materialize*: its runs are folded again from its events (their places
are in the index), and from then on it is an ordinary job of the graph.
"""

from __future__ import annotations

import operator
from array import array
from collections.abc import Iterable, Iterator, Sequence
from pathlib import Path
from typing import Any

from airflow_lineage_plus.graph import snapshot
from airflow_lineage_plus.graph import wire as w
from airflow_lineage_plus.graph.focus import FocusedGraph, GraphCatalog
from airflow_lineage_plus.graph.model import LineageGraph
from airflow_lineage_plus.graph.records import _DATASET_STATE, DatasetRecord, JobRecord
from airflow_lineage_plus.graph.runs import RunRecord
from airflow_lineage_plus.graph.snapshot import RunTable, Snapshot, run_hash

Key = tuple[int, str]
Edges = frozenset[tuple[str, str]]


class JobSummary:
    """What the snapshot knew of a job's runs (see the module docstring)."""

    __slots__ = ("completed", "current", "latest", "newest", "stale")

    def __init__(
        self, latest: RunRecord | None, completed: Key | None, current: Edges | None, newest: Key | None
    ) -> None:
        self.latest = latest
        self.completed = completed
        self.current = current
        self.newest = newest
        self.stale = False  # a DAG run that skipped the job changed: its runs must be folded again


class IndexedGraph(LineageGraph):
    """The graph of an index plus the events appended since (see the module docstring)."""

    def __init__(self, snapshot: Snapshot, log_path: Path) -> None:
        super().__init__()
        self.snapshot = snapshot
        self.log_path = log_path
        self.job_order: list[str] = []  # job ids in the snapshot's order (a run table entry's index)
        self.base_refs: dict[str, tuple[int, int]] = {}  # job id -> (start, count) in the refs section
        self.loading = True

    # -- opening --------------------------------------------------------------------------------
    @classmethod
    def open(cls, snapshot: Snapshot, log_path: Path) -> IndexedGraph:
        graph = cls(snapshot, log_path)
        jobs, datasets, succ, edge_first, readers_ever, skips, version = snapshot.hot()
        restore = RunRecord.restore
        for values in jobs:
            namespace, name, owners, owners_key, ref, ref_time, start, count = values[:8]
            latest, completed, current, newest = values[8:]
            job = JobRecord(namespace, name)
            job.owners, job.owners_key, job.ref, job.ref_time = owners, owners_key, ref, ref_time
            job.summary = JobSummary(restore(latest) if latest else None, completed, current, newest)
            graph.jobs[job.id] = job
            graph.job_order.append(job.id)
            graph.base_refs[job.id] = (start, count)
        for values in datasets:
            record = DatasetRecord.restore(values[: len(_DATASET_STATE)])
            graph.datasets[record.id] = record
            record.dataset_refs = list(values[len(_DATASET_STATE)])
            columns, columns_key = values[7], values[8]
            if columns_key is not None:
                graph.set_columns(record, columns, columns_key[0], columns_key[1])
        jobs_by_id = graph.jobs
        for origin, destinations in succ.items():
            for destination in destinations:
                graph.add_edge(origin, destination)
                if origin in jobs_by_id:
                    jobs_by_id[origin].targets.add(destination)
                else:
                    jobs_by_id[destination].sources.add(origin)
        graph.edge_first = edge_first
        graph.column_readers_ever = readers_ever
        for dag_run_id, (key, job_ids) in skips.items():
            graph.set_dag_run_skips(dag_run_id, key, job_ids)
        graph.version = version
        graph.loading = False
        return graph

    # -- folding appended events ----------------------------------------------------------------
    def apply(self, event: w.Event, micros: int, ref: int) -> None:
        event_run = event.run
        if event_run is not None and event_run.runId not in self.runs:
            for index in self.snapshot.jobs_of_run(event_run.runId):  # a run that began before
                self.materialize(self.jobs[self.job_order[index]])
        super().apply(event, micros, ref)
        if event_run is None or event.job is None:
            return
        run = self.runs.get(event_run.runId)
        job = self.jobs.get(run.job_id) if run is not None else None
        if (
            run is not None
            and job is not None
            and job.summary is not None
            and run.parent_run_id in self.skipped_by.get(job.id, ())
        ):
            job.summary.stale = True  # it ran in a DAG run that had it skipped
        skips = self.dag_run_skips.get(event_run.runId)
        if skips is not None:  # the DAG run's times changed: so did those of its skipped jobs
            self._stale(skips.job_ids)

    def set_dag_run_skips(
        self, dag_run_id: str, key: tuple[int, tuple[str, ...]], skipped: tuple[str, ...]
    ) -> None:
        before = self.dag_run_skips.get(dag_run_id)
        super().set_dag_run_skips(dag_run_id, key, skipped)
        if not self.loading and self.dag_run_skips.get(dag_run_id) is not before:
            self._stale((*(before.job_ids if before is not None else ()), *skipped))

    def _stale(self, job_ids: Iterable[str]) -> None:
        for job_id in job_ids:
            job = self.jobs.get(job_id)
            if job is not None and job.summary is not None:
                job.summary.stale = True

    def materialize(self, job: JobRecord) -> None:
        """Fold the job's runs again from all its events; from then on its runs are all in the graph."""
        if job.summary is None:
            return
        job.summary = None
        focused = FocusedGraph(IndexCatalog(self), self.log_path)
        focused.keep_refs = False
        focused.ensure_jobs((job.id,), with_dags=False)
        folded = focused.jobs.get(job.id)
        for run in job.runs:
            if run.run_id is not None:
                self.runs.pop(run.run_id, None)
        job.runs = []
        for run in folded.runs if folded is not None else ():
            if run.job_id != job.id:
                continue
            run.io = job.shared_io(run.io)
            job.runs.append(run)
            if run.run_id is not None:
                self.runs[run.run_id] = run
        job.latest_cache = job.current_cache = None
        self.version += 1

    def _dag_runs_of(self, job: JobRecord) -> None:
        """The DAG runs that skipped the job, in the graph (their times are the skipped runs' times)."""
        for dag_run_id in self.skipped_by.get(job.id, ()):
            if dag_run_id not in self.runs:
                for index in self.snapshot.jobs_of_run(dag_run_id):
                    self.materialize(self.jobs[self.job_order[index]])

    # -- reading --------------------------------------------------------------------------------
    def _summary(self, job: JobRecord) -> JobSummary | None:
        summary: JobSummary | None = job.summary
        if summary is not None and summary.stale:
            self.materialize(job)
            return None
        return summary

    def all_runs(self, job: JobRecord) -> Iterator[RunRecord]:
        self.materialize(job)
        self._dag_runs_of(job)
        yield from super().all_runs(job)

    def latest_run(self, job: JobRecord) -> RunRecord | None:
        summary = self._summary(job)
        if summary is None:
            self._dag_runs_of(job)
            return super().latest_run(job)
        candidates = [run for run in (summary.latest, *job.runs) if run is not None]
        return max(candidates, key=RunRecord.sort_key, default=None)

    def completed_key(self, job: JobRecord) -> Key | None:
        summary = self._summary(job)
        if summary is None:
            return super().completed_key(job)
        return _newest(summary.completed, _completed(job.runs))

    def current_io(self, job: JobRecord) -> Edges | None:
        summary = self._summary(job)
        if summary is None:
            self._dag_runs_of(job)
            return super().current_io(job)
        tail = _completed(job.runs)
        if tail is None or (summary.completed is not None and tail < summary.completed):
            if summary.completed is None or summary.current is None:
                return None
            return summary.current | _io_from(job.runs, summary.completed)
        if summary.newest is not None and tail <= summary.newest:
            self.materialize(job)  # a snapshot run may be newer than the new latest completed one
            return super().current_io(job)
        return _io_from(job.runs, tail)

    def refs_of(self, job_id: str) -> array:
        """Every event of the job: the snapshot's, then the appended ones."""
        base = self.base_refs.get(job_id)
        refs = self.snapshot.job_refs(*base) if base is not None else array("Q")
        job = self.jobs.get(job_id)
        if job is not None:
            refs.extend(job.refs)
        return refs

    def jobs_of_run(self, run_id: str) -> list[str]:
        """Ids of the jobs that may hold the run."""
        run = self.runs.get(run_id)
        if run is not None:
            return [run.job_id]
        return [self.job_order[index] for index in self.snapshot.jobs_of_run(run_id)]

    def run_table(self, job_ids: Sequence[str]) -> RunTable:
        """The snapshot's run table plus the runs folded since."""
        position = {job_id: index for index, job_id in enumerate(job_ids)}
        base = self.snapshot.runs()
        table = RunTable(array("Q", base.hashes), array("I", base.jobs), base.count)
        for run in self.runs.values():
            if run.run_id is not None:
                table.add(run_hash(run.run_id), position[run.job_id])
        return table


def _completed(runs: Iterable[RunRecord]) -> Key | None:
    return max((run.sort_key() for run in runs if run.state == "COMPLETED"), default=None)


def _newest(a: Key | None, b: Key | None) -> Key | None:
    return b if a is None else a if b is None else max(a, b)


def _io_from(runs: Iterable[RunRecord], key: Key) -> Edges:
    found: set[tuple[str, str]] = set()
    for run in runs:
        if run.sort_key() >= key:
            found |= run.io
    return frozenset(found)


class IndexCatalog(GraphCatalog):
    """Where each node's events are, for an :class:`IndexedGraph` (the snapshot's and the appended)."""

    graph: IndexedGraph

    def job_refs(self, job_id: str) -> Sequence[int]:
        return self.graph.refs_of(job_id)


def save(path: Path, graph: LineageGraph, header: dict[str, Any]) -> None:
    """Write ``graph`` (folded from a whole log, or an :class:`IndexedGraph` with appended events) as
    an index (:mod:`.snapshot`)."""
    indexed = graph if isinstance(graph, IndexedGraph) else None
    job_ids = list(graph.jobs)
    jobs, start = [], 0
    for job_id in job_ids:
        job = graph.jobs[job_id]
        base = indexed.base_refs.get(job_id) if indexed is not None else None
        count = (base[1] if base is not None else 0) + len(job.refs)
        owners = (job.owners, job.owners_key, job.ref, job.ref_time)
        jobs.append((job.namespace, job.name, *owners, start, count, *graph.job_summary(job)))
        start += count
    state = operator.attrgetter(*_DATASET_STATE)
    datasets = [(*state(d), d.dataset_refs) for d in graph.datasets.values()]
    skips = {dag_run: (s.key, s.job_ids) for dag_run, s in graph.dag_run_skips.items()}
    hot = (jobs, datasets, graph.succ, graph.edge_first, graph.column_readers_ever, skips, graph.version)
    if indexed is not None:
        blocks: Iterable[array] = (indexed.refs_of(job_id) for job_id in job_ids)
        table = indexed.run_table(job_ids)
    else:
        blocks = (graph.jobs[job_id].refs for job_id in job_ids)
        table = _run_table(graph, job_ids)
    snapshot.write(path, header, hot, blocks, table)


def _run_table(graph: LineageGraph, job_ids: Sequence[str]) -> RunTable:
    position = {job_id: index for index, job_id in enumerate(job_ids)}
    table = RunTable.empty(len(graph.runs))
    for run_id, run in graph.runs.items():
        table.add(run_hash(run_id), position[run.job_id])
    return table
