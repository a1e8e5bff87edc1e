"""Where each node's events are, and which nodes may be adjacent: what a graph folded where a question
looks (:mod:`.focus`) asks before it folds.

A :class:`Catalog` is made from a quick scan of a raw log (:mod:`.scan`) or from a store's folded state
(:class:`StoreCatalog`: the store's raw events by node, its edges, children and column readers).
"""

from __future__ import annotations

import abc
from collections.abc import Iterable, Sequence

from airflow_lineage_plus.store import LineageStore
from airflow_lineage_plus.store import facts as f
from airflow_lineage_plus.store.folded import FoldedState


class Catalog(abc.ABC):
    """Where the events of each node are, and which nodes may be adjacent (all time, retired edges and
    edges ever declared too)."""

    @abc.abstractmethod
    def job_refs(self, job_id: str, as_of: int | None = None) -> Sequence[int]:
        """Refs of every event of the job (empty for an unknown job); of those up to ``as_of`` where the
        catalog can tell (a later one is skipped by the fold)."""

    @abc.abstractmethod
    def dataset_refs(self, dataset_id: str, as_of: int | None = None) -> Sequence[int]:
        """Refs of events naming the dataset as their ``dataset`` (up to ``as_of``: as :meth:`job_refs`)."""

    @abc.abstractmethod
    def adjacent(self, node_id: str, *, upstream: bool) -> Iterable[str]:
        """Nodes one edge up- or downstream at any time."""

    def edge_first(self, edge: tuple[str, str]) -> int | None:
        """The earliest time an event reported the edge; None when unknown (then it is folded to see)."""
        return None

    def naming_refs(
        self, dataset_id: str, job_ids: Sequence[str], as_of: int | None = None
    ) -> Sequence[int] | None:
        """Refs of the events of these jobs (next to the dataset) that may name it (up to ``as_of``): at
        least every one that does, so that the dataset's facts can be folded without folding the jobs
        whole; None when the catalog cannot tell (then the jobs are folded whole)."""
        return None

    def column_readers_ever(self, dataset_id: str, column: str) -> Iterable[tuple[str, str]] | None:
        """(dataset, column) whose column lineage ever read this column; None when unknown."""
        return None

    def child_jobs(self, run_id: str) -> Iterable[str]:
        """Jobs with a run (at any time) whose parent run is ``run_id``; empty when unknown (a scan)."""
        return ()

    def last_event_times(self, job_ids: Iterable[str]) -> dict[str, int | None]:
        """Of each job, the time of its latest event, or of a later DAG-run event that said it did not run
        (no run of the job, a not-run one included, starts later), without folding it, read at once; None
        where unknown (then it is folded to see)."""
        return dict.fromkeys(job_ids)

    def known(self, node_ids: Iterable[str]) -> set[str]:
        """The nodes among ``node_ids`` that have events (:meth:`has_job`, :meth:`has_dataset`), read at
        once where the catalog can."""
        return {
            node_id
            for node_id in node_ids
            if (self.has_job(node_id) if node_id.startswith("job:") else self.has_dataset(node_id))
        }

    @abc.abstractmethod
    def has_job(self, job_id: str) -> bool:
        """Whether the job has events."""

    @abc.abstractmethod
    def has_dataset(self, dataset_id: str) -> bool:
        """Whether any event names the dataset."""


class StoreCatalog(Catalog):
    """Where each node's events are in a store, from its folded state; answers are kept for the life of
    the catalog (one question's)."""

    def __init__(self, store: LineageStore) -> None:
        self.store = store
        self.state = FoldedState(store)
        self._refs: dict[tuple[str, int | None, bool], list[int]] = {}
        self._adjacent: dict[tuple[str, bool], list[str]] = {}
        self._first: dict[tuple[str, str], int | None] = {}
        self._declared: set[tuple[str, str]] = set()  # edges (job, dataset) a JobEvent ever declared
        self._known: dict[str, bool] = {}

    def job_refs(self, job_id: str, as_of: int | None = None) -> Sequence[int]:
        return self._events(job_id, as_of)

    def dataset_refs(self, dataset_id: str, as_of: int | None = None) -> Sequence[int]:
        return self._events(dataset_id, as_of)

    def _events(self, node_id: str, as_of: int | None, *, runless: bool = False) -> list[int]:
        key = (node_id, as_of, runless)
        found = self._refs.get(key)
        if found is None:
            found = self._refs[key] = self.store.node_event_ids(node_id, runless=runless, before=as_of)
        return found

    def adjacent(self, node_id: str, *, upstream: bool) -> Iterable[str]:
        key = (node_id, upstream)
        found = self._adjacent.get(key)
        if found is None:
            found = []
            for row in self.state.edges((node_id,)):
                # a job's upstream are the datasets it reads; a dataset's upstream, the jobs that write it
                if node_id.startswith("job:") and row.job_id == node_id and bool(row.output) != upstream:
                    found.append(row.dataset_id)
                elif (
                    node_id.startswith("dataset:")
                    and row.dataset_id == node_id
                    and bool(row.output) == upstream
                ):
                    found.append(row.job_id)
                edge = (row.job_id, row.dataset_id) if row.output else (row.dataset_id, row.job_id)
                self._first[edge] = row.first_reported
                if row.declared:
                    self._declared.add((row.job_id, row.dataset_id))
            found = self._adjacent[key] = sorted(set(found))
        return found

    def edge_first(self, edge: tuple[str, str]) -> int | None:
        return self._first.get(edge)

    def naming_refs(
        self, dataset_id: str, job_ids: Sequence[str], as_of: int | None = None
    ) -> Sequence[int] | None:
        """The events of the jobs' runs that reported the dataset (:meth:`.FoldedState.naming_refs`),
        and the declarations of the jobs that declared it (known from :meth:`adjacent`, asked first)."""
        keys = {f.key_of(job_id) for job_id in job_ids}
        refs = set(self.state.naming_refs(dataset_id, keys, as_of))
        for job_id in job_ids:
            if (job_id, dataset_id) in self._declared:
                refs.update(self.declarations(job_id, as_of))
        return sorted(refs)

    def declarations(self, job_id: str, as_of: int | None = None) -> Sequence[int]:
        """Refs of the job's events without a run (its JobEvents: what DAG code declared), up to
        ``as_of`` (as :meth:`job_refs`)."""
        return self._events(job_id, as_of, runless=True)

    def column_readers_ever(self, dataset_id: str, column: str) -> Iterable[tuple[str, str]] | None:
        return self.state.column_readers(dataset_id, column)

    def child_jobs(self, run_id: str) -> Iterable[str]:
        return sorted({child.job_id for child in self.state.children((run_id,))})

    def last_event_times(self, job_ids: Iterable[str]) -> dict[str, int | None]:
        wanted = {f.key_of(job_id): job_id for job_id in job_ids}
        times = self.state.last_event_times(wanted)
        return {job_id: times.get(key) for key, job_id in wanted.items()}

    def known(self, node_ids: Iterable[str]) -> set[str]:
        ids = list(dict.fromkeys(node_ids))
        unread = [node_id for node_id in ids if node_id not in self._known]
        if unread:
            found = self.state.nodes(unread)
            self._known.update((node_id, node_id in found) for node_id in unread)
        return {node_id for node_id in ids if self._known[node_id]}

    def has_job(self, job_id: str) -> bool:
        return job_id in self.known((job_id,))

    def has_dataset(self, dataset_id: str) -> bool:
        return dataset_id in self.known((dataset_id,))
