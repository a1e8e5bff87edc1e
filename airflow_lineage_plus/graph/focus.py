"""A graph folded only where a question looks, from the events of the nodes it touches, optionally as of
a time.

Every fact of a job comes from the job's own events (and, for runs the scheduler skipped, from its DAG's
events: the jobs whose names are a dotted prefix of its name); every fact of a dataset comes from the
events of the jobs that read or write it and from events naming it as their ``dataset``. So folding just
those events, with the same fold as a full load, gives those nodes exactly what a full load gives, and
folding just those up to a time gives exactly what a load of the log cut at that time gives (the fold
does not depend on the order of events). A :class:`Catalog` says where each node's events are and which
nodes may be adjacent; the :class:`FocusedGraph` folds nodes the first time a query touches them.

Used for time travel (``as_of``), for details that need a job's run history (its events' refs), and for
the first answer from a raw log before an index exists (:mod:`.scan`).
"""

from __future__ import annotations

import abc
import os
from collections.abc import Iterable, Sequence

from airflow_lineage_plus import node_ids as ids
from airflow_lineage_plus.exceptions import BadEventError, SourceUnavailable
from airflow_lineage_plus.graph import logfile
from airflow_lineage_plus.graph import wire as w
from airflow_lineage_plus.graph.model import LineageGraph
from airflow_lineage_plus.graph.records import ColumnInput, DatasetRecord, JobRecord
from airflow_lineage_plus.graph.runs import RunRecord


class Catalog(abc.ABC):
    """Where the events of each node are, and which nodes may be adjacent (all time, retired edges and
    edges ever declared too)."""

    @abc.abstractmethod
    def job_refs(self, job_id: str) -> Sequence[int]:
        """Refs of every event of the job (empty for an unknown job)."""

    @abc.abstractmethod
    def dataset_refs(self, dataset_id: str) -> Sequence[int]:
        """Refs of events naming the dataset as their ``dataset``."""

    @abc.abstractmethod
    def adjacent(self, node_id: str, *, upstream: bool) -> Iterable[str]:
        """Nodes one edge up- or downstream at any time."""

    def edge_first(self, edge: tuple[str, str]) -> int | None:
        """The earliest time an event reported the edge; None when unknown (then it is folded to see)."""
        return None

    def column_readers_ever(self, dataset_id: str, column: str) -> Iterable[tuple[str, str]] | None:
        """(dataset, column) whose column lineage ever read this column; None when unknown."""
        return None

    def child_jobs(self, run_id: str) -> Iterable[str]:
        """Jobs with a run (at any time) whose parent run is ``run_id``; empty when unknown (a scan)."""
        return ()

    def last_event_time(self, job_id: str) -> int | None:
        """The time of the job's latest event (no run of the job starts or ends later), without folding
        it; None when unknown (then it is folded to see)."""
        return None

    @abc.abstractmethod
    def has_job(self, job_id: str) -> bool:
        """Whether the job has events."""

    @abc.abstractmethod
    def has_dataset(self, dataset_id: str) -> bool:
        """Whether any event names the dataset."""


class FocusedGraph(LineageGraph):
    """A :class:`LineageGraph` whose nodes are folded from their events (up to ``as_of``) when first
    touched through the reading methods the queries use."""

    def __init__(self, catalog: Catalog, path: str | os.PathLike[str], as_of: int | None = None) -> None:
        super().__init__()
        self.catalog = catalog
        self.path = path
        self.as_of = as_of
        self.keep_refs = True
        self.folded_jobs: set[str] = set()
        self.folded_datasets: set[str] = set()
        self.problems: dict[str, int] = {}

    # -- folding --------------------------------------------------------------------------------
    def _fold_refs(self, refs: Iterable[int]) -> None:
        wanted = sorted(set(refs))
        if not wanted:
            return
        as_of, apply = self.as_of, self.apply
        try:
            with open(self.path, "rb") as handle:
                logfile.prefetch(handle, wanted)
                for ref in wanted:
                    try:
                        event, micros, _ = w.decode(logfile.read_ref_bytes(handle, ref))
                    except BadEventError as exc:  # the file changed under the ref (rotated)
                        self.problems[exc.kind] = self.problems.get(exc.kind, 0) + 1
                        continue
                    if as_of is None or micros <= as_of:
                        apply(event, micros, ref)
        except OSError as exc:
            raise SourceUnavailable(f"cannot read event log {self.path}: {exc}") from exc

    def ensure_jobs(self, job_ids: Iterable[str], *, with_dags: bool = True) -> None:
        """Fold the events of these jobs, and of the DAG jobs above them, not folded yet."""
        wanted: set[str] = set()
        for job_id in job_ids:
            if job_id not in self.folded_jobs:
                wanted.add(job_id)
                if with_dags:
                    wanted.update(self._dag_jobs(job_id))
        wanted -= self.folded_jobs
        if not wanted:
            return
        refs: list[int] = []
        for job_id in wanted:
            refs.extend(self.catalog.job_refs(job_id))
        self.folded_jobs |= wanted
        self._fold_refs(refs)

    def _dag_jobs(self, job_id: str) -> list[str]:
        """Jobs whose DAG-run ``tasksState`` may name this job: those named by a dotted prefix of its name."""
        try:
            _, namespace, name = ids.split_node_id(job_id)
        except ValueError:
            return []
        parts = name.split(".")
        found = []
        for size in range(1, len(parts)):
            candidate = ids.job_id(namespace, ".".join(parts[:size]))
            if self.catalog.has_job(candidate):
                found.append(candidate)
        return found

    def ensure_dataset(self, dataset_id: str) -> None:
        """Fold every event that may carry facts of the dataset: its jobs' and its own."""
        if dataset_id in self.folded_datasets:
            return
        jobs = [
            job
            for upstream in (True, False)
            for job in self.catalog.adjacent(dataset_id, upstream=upstream)
            if self._may_exist((job, dataset_id) if upstream else (dataset_id, job))
        ]
        self.ensure_jobs(jobs)
        self.folded_datasets.add(dataset_id)
        self._fold_refs(self.catalog.dataset_refs(dataset_id))

    def _may_exist(self, edge: tuple[str, str]) -> bool:
        first = self.catalog.edge_first(edge)
        return first is None or self.as_of is None or first <= self.as_of

    # -- what the queries read ------------------------------------------------------------------
    def has_node(self, node_id: str) -> bool:
        if node_id.startswith("job:"):
            return self.job_record(node_id) is not None
        return self.dataset_record(node_id) is not None

    def job_record(self, node_id: str) -> JobRecord | None:
        if not self.catalog.has_job(node_id):
            return None
        self.ensure_jobs((node_id,))
        return self.jobs.get(node_id)

    def dataset_record(self, node_id: str) -> DatasetRecord | None:
        if not self.catalog.has_dataset(node_id):
            return None
        self.ensure_dataset(node_id)
        return self.datasets.get(node_id)

    def latest_run(self, job: JobRecord) -> RunRecord | None:
        self.ensure_jobs((job.id,))
        return super().latest_run(job)

    def neighbours(
        self, node_id: str, *, upstream: bool, retired: bool = False, declared_too: bool = True
    ) -> list[tuple[str, str]]:
        """Fold the jobs of every edge the node may have had by ``as_of``, then read them as a full
        graph does (the edges of jobs not folded cannot touch the node)."""
        edges = []
        for other in self.catalog.adjacent(node_id, upstream=upstream):
            edge = (other, node_id) if upstream else (node_id, other)
            if self._may_exist(edge):
                edges.append(edge)
        self.ensure_jobs(e[0] if e[0].startswith("job:") else e[1] for e in edges)
        self.ensure_jobs((node_id,) if node_id.startswith("job:") else ())
        return super().neighbours(node_id, upstream=upstream, retired=retired, declared_too=declared_too)

    def child_jobs(self, run_id: str) -> set[str]:
        """Fold the jobs that ever had a run under ``run_id``, then read them as a full graph does."""
        self.ensure_jobs(self.catalog.child_jobs(run_id))
        return super().child_jobs(run_id)

    def column_inputs(self, dataset_id: str, column: str) -> tuple[ColumnInput, ...]:
        record = self.dataset_record(dataset_id)
        return record.columns.get(column, ()) if record is not None else ()

    def column_readers_of(self, dataset_id: str, column: str) -> set[tuple[str, str]]:
        candidates = self.catalog.column_readers_ever(dataset_id, column)
        if candidates is None:
            raise SourceUnavailable("the readers of a column are known once the log is indexed")
        found = set()
        for reader, _ in candidates:
            record = self.dataset_record(reader)
            if record is None:
                continue
            for reader_column, inputs in record.columns.items():
                if any(
                    ids.dataset_id(ns, name) == dataset_id and field == column
                    for ns, name, field, _ in inputs
                ):
                    found.add((reader, reader_column))
        return found


class GraphCatalog(Catalog):
    """The catalog of a graph folded from the whole log (its records know every node's events)."""

    def __init__(self, graph: LineageGraph) -> None:
        self.graph = graph

    def job_refs(self, job_id: str) -> Sequence[int]:
        job = self.graph.jobs.get(job_id)
        return job.refs if job is not None else ()

    def dataset_refs(self, dataset_id: str) -> Sequence[int]:
        record = self.graph.datasets.get(dataset_id)
        return record.dataset_refs if record is not None else ()

    def adjacent(self, node_id: str, *, upstream: bool) -> Iterable[str]:
        graph = self.graph
        reported = (graph.pred if upstream else graph.succ).get(node_id, ())
        declared = (graph.declared_pred if upstream else graph.declared_succ).get(node_id)
        return reported if not declared else {*reported, *declared}

    def edge_first(self, edge: tuple[str, str]) -> int | None:
        return self.graph.edge_first.get(edge)

    def column_readers_ever(self, dataset_id: str, column: str) -> Iterable[tuple[str, str]] | None:
        return self.graph.column_readers_ever.get((dataset_id, column), ())

    def child_jobs(self, run_id: str) -> Iterable[str]:
        return self.graph.child_jobs(run_id)

    def last_event_time(self, job_id: str) -> int | None:
        job = self.graph.jobs.get(job_id)
        return job.ref_time if job is not None else None

    def has_job(self, job_id: str) -> bool:
        return job_id in self.graph.jobs

    def has_dataset(self, dataset_id: str) -> bool:
        return dataset_id in self.graph.datasets
