"""A graph folded only where a question looks, from the events of the nodes it touches, optionally as of
a time.

Every fact of a job comes from the job's own events (and, for runs the scheduler skipped, from its DAG's
events: the jobs whose names are a dotted prefix of its name); every fact of a dataset comes from the
events of the jobs that read or write it and from events naming it as their ``dataset``. So folding just
those events, with the store's fold, gives those nodes exactly what folding everything gives, and folding
just those up to a time gives exactly what folding the events up to that time gives (the fold does not
depend on the order of events). A :class:`Catalog` says where each node's events are and which nodes may
be adjacent; the :class:`FocusedGraph` folds a node's events into a scratch store (folded state in
memory, :data:`~airflow_lineage_plus.store.database.SCRATCH`) the first time a question touches it, then
reads it as any :class:`.StoredGraph`.

Used for time travel (``as_of``) and for the first answer from a raw log (:mod:`.scan`).
"""

from __future__ import annotations

import threading
import weakref
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any

import orjson

from airflow_lineage_plus import node_ids as ids
from airflow_lineage_plus.exceptions import BadEventError, SourceUnavailable
from airflow_lineage_plus.graph.catalog import Catalog
from airflow_lineage_plus.graph.model import LineageGraph
from airflow_lineage_plus.graph.stored_graph import StoredGraph
from airflow_lineage_plus.store import LineageStore
from airflow_lineage_plus.store import wire as w
from airflow_lineage_plus.store.database import SCRATCH
from airflow_lineage_plus.store.facts import Facts

#: refs -> {ref: the event's JSON bytes} (refs that cannot be read are missing)
ReadPayloads = Callable[[Sequence[int]], Mapping[int, bytes]]


def read_events(read: ReadPayloads, refs: Sequence[int]) -> dict[int, dict[str, Any] | None]:
    """{ref: the event as a JSON object} of these refs, read at once; None where it cannot be read (gone
    since: retention, a rotated log) or is not a JSON object."""
    payloads = read(sorted(set(refs)))
    found: dict[int, dict[str, Any] | None] = {}
    for ref in refs:
        try:
            event = orjson.loads(payloads[ref])
        except (KeyError, orjson.JSONDecodeError):
            event = None
        found[ref] = event if isinstance(event, dict) else None
    return found


#: scratch stores not in use, kept for the next graph (a new one costs an engine and its statements
#: compiled anew)
_idle: list[LineageStore] = []
_idle_lock = threading.Lock()
KEEP_IDLE = 4


def _scratch() -> LineageStore:
    """An empty scratch store for one graph."""
    with _idle_lock:
        store = _idle.pop() if _idle else None
    if store is None:
        return LineageStore(SCRATCH)
    store.reset()
    return store


def _release(store: LineageStore) -> None:
    """A graph's scratch store, free again."""
    with _idle_lock:
        if len(_idle) < KEEP_IDLE:
            _idle.append(store)
            return
    store.close()


class FocusedGraph(StoredGraph):
    """A :class:`.StoredGraph` of a scratch store into which each node's events (up to ``as_of``) are
    folded when a question first touches the node. ``read``: the events' bytes by their refs."""

    def __init__(self, catalog: Catalog, read: ReadPayloads, as_of: int | None = None) -> None:
        store = _scratch()
        super().__init__(store, keep_refs=True)
        weakref.finalize(self, _release, store)
        self.catalog = catalog
        self.read = read
        self.as_of = as_of
        self.folded_jobs: set[str] = set()
        self.folded_datasets: set[str] = set()
        self.problems: dict[str, int] = {}

    # -- folding --------------------------------------------------------------------------------
    def _fold_refs(self, refs: Iterable[int], *, only: str | None = None) -> None:
        """Fold these events (up to ``as_of``); ``only``: just what they say of that dataset."""
        wanted = sorted(set(refs))
        if not wanted:
            return
        payloads = self.read(wanted)
        facts = Facts()
        for ref in wanted:
            payload = payloads.get(ref)
            if payload is None:  # gone since the catalog was made (retention, a rotated log)
                continue
            try:
                event, micros, _ = w.decode(payload)
            except BadEventError as exc:
                self.problems[exc.kind] = self.problems.get(exc.kind, 0) + 1
                continue
            if self.as_of is None or micros <= self.as_of:
                facts.add(event, micros, ref)
        self.store.fold(facts if only is None else facts.of_dataset(only))

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
            refs.extend(self.catalog.job_refs(job_id, self.as_of))
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
        """Fold every event that may carry facts of the dataset: its own, and its jobs'. Of a job not
        folded yet, only the events that may name the dataset, and only what they say of it, where the
        catalog can tell which those are (a source every job reads would have them all folded whole);
        the job itself is folded when a question touches it."""
        if dataset_id in self.folded_datasets:
            return
        jobs = [job_id for job_id in self._adjacent_jobs(dataset_id) if job_id not in self.folded_jobs]
        naming = self.catalog.naming_refs(dataset_id, jobs, self.as_of) if jobs else ()
        if naming is None:
            self.ensure_jobs(jobs)
        else:
            self._fold_refs(naming, only=dataset_id)
        self.folded_datasets.add(dataset_id)
        self._fold_refs(self.catalog.dataset_refs(dataset_id, self.as_of))

    def _adjacent_jobs(self, dataset_id: str) -> list[str]:
        """The jobs next to a dataset by an edge that may exist by ``as_of``."""
        found = []
        for upstream in (True, False):
            for other in self.catalog.adjacent(dataset_id, upstream=upstream):
                if self._may_exist((other, dataset_id) if upstream else (dataset_id, other)):
                    found.append(other)
        return found

    def _may_exist(self, edge: tuple[str, str]) -> bool:
        first = self.catalog.edge_first(edge)
        return first is None or self.as_of is None or first <= self.as_of

    # -- the hooks of a scratch store ---------------------------------------------------------------
    def _prepare_jobs(self, job_ids: list[str]) -> None:
        self.ensure_jobs(job_id for job_id in job_ids if self.catalog.has_job(job_id))

    def _prepare_datasets(self, dataset_ids: list[str]) -> None:
        for dataset_id in dataset_ids:
            if self.catalog.has_dataset(dataset_id):
                self.ensure_dataset(dataset_id)

    def _prepare_edges(self, node_ids: list[str]) -> None:
        for node_id in node_ids:
            if node_id.startswith("job:"):
                self.ensure_jobs((node_id,))  # a job's edges come from its own events
            else:
                self.ensure_jobs(self._adjacent_jobs(node_id))

    def newest_adjacent(
        self, dataset_ids: Iterable[str], *, writers: bool, readers: bool, limit: int
    ) -> dict[str, tuple[list[tuple[str, int | None]], bool]]:
        """Every job next to each, from the edges folded as of the time (not the scratch store's index)."""
        return LineageGraph.newest_adjacent(self, dataset_ids, writers=writers, readers=readers, limit=limit)

    def _prepare_writers(self, dataset_ids: list[str]) -> None:
        for dataset_id in dataset_ids:
            self.ensure_jobs(
                other
                for other in self.catalog.adjacent(dataset_id, upstream=True)
                if self._may_exist((other, dataset_id))
            )

    def _prepare_children(self, run_ids: list[str]) -> None:
        for run_id in run_ids:
            self.ensure_jobs(self.catalog.child_jobs(run_id))

    def _column_candidates(self, dataset_id: str, column: str) -> list[tuple[str, str]]:
        candidates = self.catalog.column_readers_ever(dataset_id, column)
        if candidates is None:
            raise SourceUnavailable("the readers of a column are known once the log is in the lineage store")
        return sorted(set(candidates))
