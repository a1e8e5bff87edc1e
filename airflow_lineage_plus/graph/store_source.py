"""The lineage store as a :class:`LineageSource`: questions read its folded state.

The store's writes fold every event (:mod:`airflow_lineage_plus.store.fold`), so a question, in a new
process or a long-lived one, reads just the records of the nodes it touches (:class:`.StoredGraph`):
nothing is folded at read time, nothing is kept between questions, and every question sees what was
written before it started. A question as of a time folds the raw events of the nodes it touches, up to
that time, into a scratch store (:class:`.FocusedGraph`, the store's raw events found by node:
:class:`.StoreCatalog`). Details and run histories read the events back by their refs (row ids).

Time travel before the store's retention window (``retained_from``) answers from what is left and says
so: ``exact`` is false and ``retainedFrom`` tells since when history is complete.

:meth:`refresh` first appends to the store what the event log gained since it last looked (the spool;
the history an earlier version wrote there), when one is given.
"""

from __future__ import annotations

import contextlib
import threading
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any

from airflow_lineage_plus.exceptions import NodeNotFound, StoreUnavailable
from airflow_lineage_plus.graph import details, run_history
from airflow_lineage_plus.graph.answers import failed_jobs, rank_search
from airflow_lineage_plus.graph.catalog import Catalog, StoreCatalog
from airflow_lineage_plus.graph.focus import FocusedGraph, read_events
from airflow_lineage_plus.graph.history import History, LatestAssertions
from airflow_lineage_plus.graph.model import LineageGraph
from airflow_lineage_plus.graph.records import Fields
from airflow_lineage_plus.graph.source import MAX_AIRFLOW_RUNS, LineageSource
from airflow_lineage_plus.graph.stored_graph import StoredGraph
from airflow_lineage_plus.store import LineageStore
from airflow_lineage_plus.store import facts as f
from airflow_lineage_plus.store.folded import FoldedState
from airflow_lineage_plus.store.search import search_nodes
from airflow_lineage_plus.store.spool import drain


class StoreSource(LineageSource):
    """The lineage of a :class:`LineageStore` (see the module docstring)."""

    def __init__(self, store: LineageStore, *, owns_store: bool = False, spool: Path | None = None) -> None:
        """``owns_store``: :meth:`close` closes the store too. ``spool``: an event log whose new lines
        each refresh appends to the store first (:func:`~airflow_lineage_plus.store.spool.drain`); when
        that fails (a store this reader may not write) the reason is counted in ``problems`` as
        ``spool not drained`` and the store is read as it is. Raises what the store raises
        (:class:`StoreUnavailable`, :class:`StoreDamaged`) when it cannot be read."""
        self.store = store
        self.path = Path(store.where)
        self.owns_store = owns_store
        self.spool = spool
        self.problems: dict[str, int] = {}
        self._runs = run_history.RunReader(self._read_refs)
        self._whole: LineageGraph | None = None
        self._shared = threading.local()  # the graphs of :meth:`one_view`, per thread
        self.refresh()

    # -- what differs between a store and a log read into one -------------------------------------
    def _payloads(self, refs: Sequence[int]) -> Mapping[int, bytes]:
        """The events' bytes by their refs (row ids; those deleted since are missing)."""
        return self.store.payloads(refs)

    def catalog(self) -> Catalog:
        """Where each node's events are (for a graph as of a time)."""
        return StoreCatalog(self.store)

    def refresh(self) -> int:
        """Append what the spool gained to the store; how many events that added."""
        self._whole = None
        added = 0
        if self.spool is not None:
            added = _drain_into(self.store, self.spool, self.problems)
        return added

    @property
    def retained_from(self) -> int | None:
        """Since when the store's history is complete (epoch µs; None: retention deleted nothing), read
        when a question needs it (one as of a time, the time range), not at each refresh."""
        return self.store.retained_from()

    # -- graphs -------------------------------------------------------------------------------------
    @contextlib.contextmanager
    def one_view(self) -> Iterator[None]:
        if getattr(self._shared, "views", None) is not None:
            yield  # already in one
            return
        self._shared.views = {}
        try:
            # one snapshot through one connection for every step of the questions; under the guard, so
            # that a refresh (which may replace the store) waits for the block to end
            with self.guard(), self.store.read():
                yield
        finally:
            self._shared.views = None

    def view(self, as_of: int | None = None, *, keep_refs: bool = False) -> LineageGraph:
        """The graph now (the folded state), or as of ``as_of`` (folded where the question looks); the
        same one for each question inside :meth:`one_view`."""
        views: dict[int | None, LineageGraph] | None = getattr(self._shared, "views", None)
        if views is None:
            return self._view(as_of, keep_refs)
        found = views.get(as_of)
        if found is None:  # with refs: any question of the block may read events back
            found = views[as_of] = self._view(as_of, True)
        return found

    def _view(self, as_of: int | None, keep_refs: bool) -> LineageGraph:
        if as_of is None:
            return StoredGraph(self.store, keep_refs=keep_refs)
        graph = FocusedGraph(self.catalog(), self._payloads, as_of)
        graph.retained_from = retained_from = self.retained_from  # type: ignore[attr-defined]
        if retained_from is not None and as_of < retained_from:
            graph.exact = False  # history before the retention window is gone
        return graph

    def _now_with(self, node_id: str, as_of: int | None, *, keep_refs: bool = False) -> LineageGraph:
        """The graph now, holding ``node_id`` (else :class:`NodeNotFound`); as of ``as_of`` when given."""
        now = self.view(keep_refs=keep_refs)
        if not now.has_node(node_id):
            raise NodeNotFound(f"unknown node {node_id}")
        return now if as_of is None else self.view(as_of, keep_refs=keep_refs)

    def graph_for(
        self, node_id: str, depth: int, *, as_of: int | None = None, retired: bool = False
    ) -> LineageGraph:
        return self._now_with(node_id, as_of)

    def column_graph(
        self, dataset_id: str, column: str, depth: int, *, as_of: int | None = None
    ) -> LineageGraph:
        return self._now_with(dataset_id, as_of)

    def full_graph(self) -> LineageGraph:
        """The whole graph, every record read (for tests and small stores: :attr:`graph`)."""
        graph = StoredGraph(self.store)
        graph.load_all()
        return graph

    def whole_graph(self) -> LineageGraph:
        """Every node, each read when touched (questions about every job ask the store which they need)."""
        return StoredGraph(self.store)

    @property
    def graph(self) -> LineageGraph:
        """The whole graph, every record read, as of the last :meth:`refresh` (for tests and small
        stores; questions read only what they touch, and what was written since)."""
        if self._whole is None:
            self._whole = self.full_graph()
        return self._whole

    # -- questions ----------------------------------------------------------------------------------
    def schema_versions(self, dataset_id: str, *, as_of: int | None = None) -> list[Fields]:
        record = self._now_with(dataset_id, as_of).dataset_record(dataset_id)
        return record.schema_versions() if record is not None else []

    def time_range(self) -> tuple[int | None, int | None]:
        first, last = self.store.time_range()
        retained_from = self.retained_from
        if first is not None and retained_from is not None and first < retained_from:
            first = retained_from  # time travel is complete from the retention window on
        return first, last

    def summary(self) -> tuple[int, int, LineageGraph, list[str]]:
        graph = self.whole_graph()
        datasets, jobs = FoldedState(self.store).counts()
        return datasets, jobs, graph, failed_jobs(graph)

    def dataset_names(self) -> list[tuple[str, str]]:
        return FoldedState(self.store).names(f.DATASET_KIND)

    def search(self, text: str, limit: int) -> list[tuple[str, str, str]]:
        needle = text.lower()
        kinds = {f.JOB_KIND: "JOB", f.DATASET_KIND: "DATASET"}
        found = [(kinds[kind], ns, name) for kind, ns, name in search_nodes(self.store, text, limit)]
        return rank_search(found, needle)[:limit]

    def node_details(self, node_id: str, *, as_of: int | None = None) -> dict[str, Any]:
        graph = self._now_with(node_id, as_of, keep_refs=True)
        if not graph.has_node(node_id):
            raise NodeNotFound(f"{node_id} has no events up to that time")
        return details.node_details(graph, node_id, self._read_ref)

    def jobs_of_run(self, run_id: str) -> list[str]:
        return StoredGraph(self.store).jobs_of_run(run_id)

    def airflow_runs(self, job_id: str, airflow_run_id: str) -> list[str]:
        return FoldedState(self.store).airflow_run_ids(job_id, airflow_run_id, MAX_AIRFLOW_RUNS)

    def run_details(self, run_id: str) -> dict[str, Any]:
        graph = StoredGraph(self.store, keep_refs=True)
        run = graph.runs.get(run_id)
        if run is None:
            raise NodeNotFound(f"unknown run {run_id}")
        graph.load_jobs((run.job_id,))
        return details.run_details(graph, run_id, self._read_ref)

    def run_history(
        self,
        node_ids: Sequence[str],
        runs: int,
        *,
        as_of: int | None = None,
        dataset_runs: int | None = None,
    ) -> dict[str, History]:
        graph = self.view(as_of, keep_refs=True)
        assert isinstance(graph, StoredGraph)
        return run_history.run_history(graph, node_ids, runs, self._runs, as_of, {}, dataset_runs)

    def latest_assertions(
        self, dataset_ids: Sequence[str], *, as_of: int | None = None
    ) -> dict[str, list[LatestAssertions]]:
        graph = self.view(as_of, keep_refs=True)
        return run_history.latest_assertions(graph, dataset_ids, self._read_refs, as_of)

    # -- reading events back ------------------------------------------------------------------------
    def _read_ref(self, ref: int) -> dict[str, Any] | None:
        return self._read_refs((ref,))[ref]

    def _read_refs(self, refs: Sequence[int]) -> dict[int, dict[str, Any] | None]:
        return read_events(self._payloads, refs)

    def close(self) -> None:
        if self.owns_store:
            self.store.close()


def _drain_into(store: LineageStore, spool: Path, problems: dict[str, int]) -> int:
    """Append the spool's new lines to the store, counting what was skipped in ``problems``; a store
    this reader may not write is counted as ``spool not drained`` and read as it is. How many events
    were added."""
    try:
        result = drain(store, spool)
    except (StoreUnavailable, OSError):
        problems["spool not drained"] = problems.get("spool not drained", 0) + 1
        return 0
    for kind, number in result.problems.items():
        problems[kind] = problems.get(kind, 0) + number
    return result.added
