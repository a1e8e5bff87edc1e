"""The lineage store as a :class:`LineageSource`: the same answers as the event log, from a database.

The store's raw events are folded with the event log's fold (:mod:`.model`), incrementally by row id as
:class:`.EventLogSource` folds a log by byte offset; a row id is an event's ref, so details, run history
and time travel re-read payloads from the store (:class:`StoreFocusedGraph`) as the event log re-reads
lines. :class:`StoreSource` derives from :class:`.EventLogSource` for that reason: every question the
event log answers (details, runs, what a later feature adds there) is answered here the same way, and
only loading and reading back an event differ.

On PostgreSQL row ids are handed out before commit, so a row may become visible after a higher one was
read: the ids skipped are remembered for ``HOLE_SECONDS`` and read again at each refresh (SQLite has one
writer at a time, so its ids become visible in order). Time travel before the store's retention window
(``retained_from``) answers from what is left and says so: ``exact`` is false and ``retainedFrom`` tells
since when history is complete.

:class:`QuickStoreSource` answers a question about one node in a new process without folding the whole
store: the store says where each node's events are (``node_key``) and which nodes were ever next to which
(``lineage_plus_edge``), and the answer is folded from just those events (:class:`StoreCatalog`), as the
quick scan of a raw log does (:mod:`.scan`).
"""

from __future__ import annotations

import threading
import time
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

import orjson

from airflow_lineage_plus.exceptions import BadEventError, StoreUnavailable
from airflow_lineage_plus.graph import eventlog_history
from airflow_lineage_plus.graph import wire as w
from airflow_lineage_plus.graph.eventlog import EventLogSource
from airflow_lineage_plus.graph.focus import Catalog, FocusedGraph
from airflow_lineage_plus.graph.model import LineageGraph
from airflow_lineage_plus.graph.scan import QuickSource
from airflow_lineage_plus.store import LineageStore
from airflow_lineage_plus.store.spool import drain

#: rows fetched per query while folding
READ_BATCH = 5000
#: how long an id skipped on PostgreSQL (not committed yet when a higher one was read) is looked for again
HOLE_SECONDS = 120.0
MAX_HOLES = 100_000


class StoreFocusedGraph(FocusedGraph):
    """A :class:`FocusedGraph` whose refs are row ids of the store (see :mod:`.focus`)."""

    def __init__(
        self, catalog: Catalog, store: LineageStore, as_of: int | None, retained_from: int | None
    ) -> None:
        super().__init__(catalog, store.where, as_of)
        self.store = store
        self.retained_from = retained_from
        if as_of is not None and retained_from is not None and as_of < retained_from:
            self.exact = False  # history before the retention window is gone

    def _fold_refs(self, refs: Iterable[int]) -> None:
        wanted = sorted(set(refs))
        if not wanted:
            return
        payloads = self.store.payloads(wanted)
        as_of, apply = self.as_of, self.apply
        for ref in wanted:
            payload = payloads.get(ref)
            if payload is None:  # deleted by retention since the graph was folded
                continue
            try:
                event, micros, _ = w.decode(payload)
            except BadEventError as exc:
                self.problems[exc.kind] = self.problems.get(exc.kind, 0) + 1
                continue
            if as_of is None or micros <= as_of:
                apply(event, micros, ref)


class StoreSource(EventLogSource):
    """The lineage of a :class:`LineageStore`, folded in memory and kept up to date by :meth:`refresh`."""

    def __init__(
        self,
        store: LineageStore,
        *,
        batch: int = READ_BATCH,
        owns_store: bool = False,
        spool: Path | None = None,
    ) -> None:
        """``owns_store``: :meth:`close` closes the store too. ``spool``: an event log whose new lines
        each refresh appends to the store first (:func:`~airflow_lineage_plus.store.spool.drain`); when
        that fails (a store this reader may not write) the reason is counted in ``problems`` as
        ``spool not drained`` and the store is read as it is. Raises what the store raises
        (:class:`StoreUnavailable`, :class:`StoreDamaged`) when it cannot be read."""
        # EventLogSource.__init__ opens a file: what its other methods read is set here instead
        self.store = store
        self.path = Path(store.where)
        self.batch = batch
        self.owns_store = owns_store
        self.spool = spool
        self.graph = LineageGraph()
        self.problems: dict[str, int] = {}
        self.events = 0
        self.offset = 0  # the highest row id folded
        self.retained_from: int | None = None
        self._holes: dict[int, float] = {}
        self._lock = threading.RLock()
        self._history = eventlog_history.HistoryCache()
        self.refresh()

    def _refresh(self) -> int:
        if self.spool is not None:
            self._drain(self.spool)
        self.retained_from = self.store.retained_from()
        count = self._fold_holes()
        while True:
            rows = self.store.rows_after(self.offset, self.batch)
            if not rows:
                return count
            if self.store.dialect != "sqlite":
                self._note_holes(rows)
            count += self._fold_rows(rows)
            self.offset = max(self.offset, rows[-1][0])
            if len(rows) < self.batch:
                return count

    def _drain(self, spool: Path) -> None:
        _drain_into(self.store, spool, self.problems)

    def _note_holes(self, rows: Sequence[tuple[int, bytes]]) -> None:
        now = time.monotonic()
        previous = self.offset
        for row_id, _ in rows:
            for missing in range(previous + 1, min(row_id, previous + 1 + MAX_HOLES)):
                self._holes[missing] = now
            previous = row_id
        while len(self._holes) > MAX_HOLES:
            del self._holes[next(iter(self._holes))]

    def _fold_holes(self) -> int:
        if not self._holes:
            return 0
        found = self.store.payloads(self._holes)
        expired = time.monotonic() - HOLE_SECONDS
        for row_id, seen in list(self._holes.items()):
            if row_id in found or seen < expired:
                del self._holes[row_id]
        return self._fold_rows(sorted(found.items()))

    def _fold_rows(self, rows: Iterable[tuple[int, bytes]]) -> int:
        decode, apply, problems = w.decode, self.graph.apply, self.problems
        count = 0
        for row_id, payload in rows:
            try:
                event, micros, salvaged = decode(payload)
            except BadEventError as exc:
                problems[exc.kind] = problems.get(exc.kind, 0) + 1
                continue
            if salvaged:
                problems["salvaged"] = problems.get("salvaged", 0) + 1
            apply(event, micros, row_id)
            count += 1
        self.events += count
        graph = self.graph
        if graph.salvaged:
            problems["salvaged"] = problems.get("salvaged", 0) + graph.salvaged
            graph.salvaged = 0
        return count

    def _read_ref(self, ref: int) -> dict[str, Any] | None:
        return _stored_event(self.store, ref)

    def _read_refs(self, refs: Sequence[int]) -> dict[int, dict[str, Any] | None]:
        payloads = self.store.payloads(sorted(set(refs)))
        return {ref: _event(payloads.get(ref)) for ref in refs}

    def focused(self, as_of: int | None = None) -> FocusedGraph:
        return StoreFocusedGraph(self.catalog(), self.store, as_of, self.retained_from)

    def time_range(self) -> tuple[int | None, int | None]:
        first, last = self.graph.first_time, self.graph.last_time
        if first is not None and self.retained_from is not None and first < self.retained_from:
            first = self.retained_from  # time travel is complete from the retention window on
        return first, last

    def close(self) -> None:
        if self.owns_store:
            self.store.close()


def _drain_into(store: LineageStore, spool: Path, problems: dict[str, int]) -> None:
    """Append the spool's new lines to the store, counting what was skipped in ``problems``; a store
    this reader may not write is counted as ``spool not drained`` and read as it is."""
    try:
        result = drain(store, spool)
    except (StoreUnavailable, OSError):
        problems["spool not drained"] = problems.get("spool not drained", 0) + 1
        return
    for kind, number in result.problems.items():
        problems[kind] = problems.get(kind, 0) + number


def _stored_event(store: LineageStore, ref: int) -> dict[str, Any] | None:
    """The stored event of row id ``ref`` as a JSON object; None when gone or not an object."""
    return _event(store.payloads((ref,)).get(ref))


def _event(payload: bytes | None) -> dict[str, Any] | None:
    """A stored payload as a JSON object; None when missing (retention) or not an object."""
    if payload is None:
        return None
    try:
        data = orjson.loads(payload)
    except orjson.JSONDecodeError:
        return None
    return data if isinstance(data, dict) else None


class StoreCatalog(Catalog):
    """Where each node's events are in the store, and which nodes were ever adjacent (see the module
    docstring); answers are kept for the life of the catalog (one question's)."""

    def __init__(self, store: LineageStore) -> None:
        self.store = store
        self._refs: dict[str, list[int]] = {}
        self._adjacent: dict[tuple[str, bool], list[str]] = {}
        self._known: dict[str, bool] = {}

    def job_refs(self, job_id: str) -> Sequence[int]:
        return self._events(job_id)

    def dataset_refs(self, dataset_id: str) -> Sequence[int]:
        return self._events(dataset_id)

    def _events(self, node_id: str) -> list[int]:
        found = self._refs.get(node_id)
        if found is None:
            found = self._refs[node_id] = self.store.node_event_ids(node_id)
        return found

    def adjacent(self, node_id: str, *, upstream: bool) -> Iterable[str]:
        key = (node_id, upstream)
        found = self._adjacent.get(key)
        if found is None:
            # a job's upstream are the datasets it reads; a dataset's upstream, the jobs that write it
            output = not upstream if node_id.startswith("job:") else upstream
            found = self._adjacent[key] = self.store.edges_of(node_id, output=output)
        return found

    def has_job(self, job_id: str) -> bool:
        return self._has(job_id)

    def has_dataset(self, dataset_id: str) -> bool:
        return self._has(dataset_id)

    def _has(self, node_id: str) -> bool:
        known = self._known.get(node_id)
        if known is None:
            known = self._known[node_id] = self.store.has_node(node_id)
        return known


class QuickStoreSource(QuickSource):
    """Answers about nodes from the store without folding all of it (see the module docstring), for the
    questions of one process: what it read of the store is kept, and rows added later are not seen.

    ``spool``: an event log whose new lines are appended to the store first, as :class:`StoreSource`
    does. ``owns_store``: :meth:`close` closes the store too."""

    def __init__(self, store: LineageStore, *, owns_store: bool = False, spool: Path | None = None) -> None:
        self.store = store
        self.path = Path(store.where)
        self.owns_store = owns_store
        self.problems = {}
        if spool is not None:
            _drain_into(store, spool, self.problems)
        self.catalog = StoreCatalog(store)
        self.retained_from = store.retained_from()

    def _graph(self, as_of: int | None) -> FocusedGraph:
        return StoreFocusedGraph(self.catalog, self.store, as_of, self.retained_from)

    def _read_ref(self, ref: int) -> dict[str, Any] | None:
        return _stored_event(self.store, ref)

    def close(self) -> None:
        if self.owns_store:
            self.store.close()
