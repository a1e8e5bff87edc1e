"""The embedded event log: newline-delimited OpenLineage JSON written by the client's ``file`` transport.

Loaded once into a :class:`LineageGraph`; :meth:`EventLogSource.refresh` then reads only the bytes
appended since (a truncated or replaced file is reloaded). Each event is remembered by its byte offset
and length, so details are re-read from the file instead of being kept in memory
(:mod:`.eventlog_details`), and answers as of a time fold again just the events of the nodes asked about
(:mod:`.focus`). The file is read by plain reads (:mod:`.logfile`), never memory-mapped.
"""

from __future__ import annotations

import contextlib
import logging
import os
import threading
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from airflow_lineage_plus import node_ids as ids
from airflow_lineage_plus.exceptions import NodeNotFound, SourceUnavailable
from airflow_lineage_plus.graph import eventlog_details, eventlog_history, logfile
from airflow_lineage_plus.graph import wire as w
from airflow_lineage_plus.graph.answers import failed_jobs, rank_search
from airflow_lineage_plus.graph.focus import Catalog, FocusedGraph, GraphCatalog
from airflow_lineage_plus.graph.history import History, LatestAssertions
from airflow_lineage_plus.graph.model import LineageGraph
from airflow_lineage_plus.graph.records import Fields
from airflow_lineage_plus.graph.source import LineageSource

log = logging.getLogger(__name__)

MAX_EVENT_BYTES = logfile.MAX_LINE  # 64 MiB: longer lines are skipped (and counted as too_large)
CHUNK_BYTES = logfile.CHUNK_BYTES


class EventLogSource(LineageSource):
    #: what run histories keep between questions (replaced whenever the graph is)
    _history: eventlog_history.HistoryCache

    def __init__(
        self,
        path: str | Path,
        *,
        max_event_bytes: int = MAX_EVENT_BYTES,
        missing_ok: bool = False,
        chunk_bytes: int = CHUNK_BYTES,
    ) -> None:
        """``missing_ok``: a log that does not exist yet is an empty graph (read once it appears).
        ``chunk_bytes``: how much of the file is read at a time (a longer line gets a bigger buffer)."""
        self.path = Path(path)
        self.chunk_bytes = chunk_bytes
        self.missing_ok = missing_ok
        self.max_event_bytes = min(max_event_bytes, logfile.MAX_LINE)
        self.graph = LineageGraph()
        self.problems: dict[str, int] = {}
        self.events = 0
        self.offset = 0
        self._identity: tuple[int, int, bytes] | None = None
        self._lock = threading.RLock()
        self._history = eventlog_history.HistoryCache()
        if not self.path.is_file() and not (missing_ok and not self.path.exists()):
            raise SourceUnavailable(f"event log {self.path} does not exist or is not a file")
        self.refresh()

    # -- loading --------------------------------------------------------------------------------
    def _reset(self) -> None:
        self.graph = LineageGraph()
        self.problems = {}
        self.events = 0
        self.offset = 0
        self._identity = None

    def guard(self) -> contextlib.AbstractContextManager[Any]:
        return self._lock

    def refresh(self) -> int:
        """Read events appended since the last call; reload when the file was truncated or replaced."""
        with self._lock:
            return self._refresh()

    def _refresh(self) -> int:
        if self.missing_ok and not self.path.exists():
            if self._identity is not None:
                self._reset()  # the log was removed: start again from nothing
            return 0
        try:
            stat = os.stat(self.path)
            with open(self.path, "rb") as handle:
                head = handle.read(256)
        except OSError as exc:
            raise SourceUnavailable(f"cannot read event log {self.path}: {exc}") from exc
        identity = (stat.st_dev, stat.st_ino, head[: min(len(head), 256)])
        if self._identity is not None:
            same_file = identity[:2] == self._identity[:2] and head.startswith(self._identity[2])
            if not same_file or stat.st_size < self.offset:
                log.info("event log %s was truncated or replaced; reloading", self.path)
                self._reset()
        self._identity = identity
        if stat.st_size == self.offset:
            return 0
        return self._read_events(self.offset)

    def _read_events(self, start: int) -> int:
        """Fold every complete line from ``start``."""
        count = 0
        position = start
        try:
            with open(self.path, "rb") as handle:
                size = os.fstat(handle.fileno()).st_size
                logfile.check_size(self.path, size)
                for base, view in logfile.chunks(
                    handle,
                    start,
                    size,
                    self.problems,
                    chunk_bytes=self.chunk_bytes,
                    max_line=self.max_event_bytes,
                ):
                    count += self._fold_lines(base, view)
                    position = base + len(view)
        except (OSError, ValueError) as exc:
            raise SourceUnavailable(f"cannot read event log {self.path}: {exc}") from exc
        finally:
            self.offset = max(position, self.offset)
            self.events += count
            graph = self.graph
            if graph.salvaged:
                self.problems["salvaged"] = self.problems.get("salvaged", 0) + graph.salvaged
                graph.salvaged = 0
        return count

    def _fold_lines(self, base: int, view: memoryview) -> int:
        """Fold the complete lines of one chunk (``view`` starts at file offset ``base``)."""
        decode, apply, problems = w.decode, self.graph.apply, self.problems
        limit = self.max_event_bytes
        find = view.obj.find  # type: ignore[attr-defined]
        end_of_view = len(view)
        count = 0
        local = 0
        while local < end_of_view:
            end = find(b"\n", local, end_of_view)
            length = end - local
            if length > limit:
                problems["too_large"] = problems.get("too_large", 0) + 1
            elif length > 2 or view[local:end].tobytes().strip():
                try:
                    event, micros, salvaged = decode(view[local:end])
                except w.BadEventError as exc:
                    problems[exc.kind] = problems.get(exc.kind, 0) + 1
                else:
                    if salvaged:
                        problems["salvaged"] = problems.get("salvaged", 0) + 1
                    apply(event, micros, ((base + local) << logfile.LENGTH_BITS) | length)
                    count += 1
            local = end + 1
        return count

    def _read_ref(self, ref: int) -> dict[str, Any] | None:
        return logfile.read_event(self.path, ref)

    def _read_refs(self, refs: Sequence[int]) -> dict[int, dict[str, Any] | None]:
        """Many events by their refs, with one open file, in the order of their places in it."""
        found: dict[int, dict[str, Any] | None] = {}
        try:
            with open(self.path, "rb") as handle:
                wanted = sorted(set(refs))
                logfile.prefetch(handle, wanted)
                for ref in wanted:
                    found[ref] = logfile.read_ref(handle, ref)
        except OSError:
            pass  # those not read are None
        return found

    # -- LineageSource --------------------------------------------------------------------------
    def _require(self, node_id: str) -> None:
        if not self.graph.has_node(node_id):
            raise NodeNotFound(f"unknown node {node_id}")

    def catalog(self) -> Catalog:
        """Where each node's events are (for :class:`.FocusedGraph`)."""
        return GraphCatalog(self.graph)

    def focused(self, as_of: int | None = None) -> FocusedGraph:
        """A graph folded from just the events of the nodes a question touches (up to ``as_of``)."""
        return FocusedGraph(self.catalog(), self.path, as_of)

    def _view(self, as_of: int | None) -> LineageGraph:
        """The graph now, or a graph as of ``as_of`` (folded on demand)."""
        return self.graph if as_of is None else self.focused(as_of)

    def graph_for(
        self, node_id: str, depth: int, *, as_of: int | None = None, retired: bool = False
    ) -> LineageGraph:
        self._require(node_id)
        return self._view(as_of)

    def full_graph(self) -> LineageGraph:
        return self.graph

    def column_graph(
        self, dataset_id: str, column: str, depth: int, *, as_of: int | None = None
    ) -> LineageGraph:
        self._require(dataset_id)
        return self._view(as_of)

    def schema_versions(self, dataset_id: str, *, as_of: int | None = None) -> list[Fields]:
        self._require(dataset_id)
        record = self._view(as_of).dataset_record(dataset_id)
        return record.schema_versions() if record is not None else []

    def time_range(self) -> tuple[int | None, int | None]:
        return self.graph.first_time, self.graph.last_time

    def summary(self) -> tuple[int, int, LineageGraph, list[str]]:
        graph = self.graph
        return len(graph.datasets), len(graph.jobs), graph, failed_jobs(graph)

    def dataset_names(self) -> list[tuple[str, str]]:
        return [(d.namespace, d.name) for d in self.graph.datasets.values()]

    def search(self, text: str, limit: int) -> list[tuple[str, str, str]]:
        needle = text.lower()
        found: list[tuple[str, str, str]] = []
        for kind, records in ((ids.DATASET, self.graph.datasets), (ids.JOB, self.graph.jobs)):
            for record in records.values():
                if needle in record.name.lower() or needle in record.namespace.lower():
                    found.append((kind, record.namespace, record.name))
        return rank_search(found, needle)[:limit]

    def node_details(self, node_id: str, *, as_of: int | None = None) -> dict[str, Any]:
        self._require(node_id)
        graph = self.focused(as_of)
        if not graph.has_node(node_id):
            raise NodeNotFound(f"{node_id} has no events up to that time")
        return eventlog_details.node_details(graph, node_id, self._read_ref)

    def jobs_of_run(self, run_id: str) -> list[str]:
        return self.graph.jobs_of_run(run_id)

    def run_history(
        self, node_ids: Sequence[str], runs: int, *, as_of: int | None = None
    ) -> dict[str, History]:
        """From the jobs' runs folded once and the runs' facts read once, kept while the log is unchanged
        (:class:`.eventlog_history.HistoryCache`)."""
        with self._lock:
            key = (self.offset, self.events, as_of, getattr(self, "retained_from", None))
            graph, reader, bounds = self._history.get(
                self.graph, key, lambda: self.focused(as_of), self._read_refs
            )
            return eventlog_history.run_history(graph, node_ids, runs, reader, as_of, bounds)

    def latest_assertions(
        self, dataset_ids: Sequence[str], *, as_of: int | None = None
    ) -> dict[str, list[LatestAssertions]]:
        # the graph in memory answers which run is each job's latest at once; a lazily loaded one (an index)
        # or a past one is read through a focused graph, which folds the jobs it touches
        whole = as_of is None and type(self.graph) is LineageGraph
        view = self.graph if whole else self.focused(as_of)
        refs = self.catalog().job_refs
        return eventlog_history.latest_assertions(view, refs, dataset_ids, self._read_ref, as_of)

    def run_details(self, run_id: str) -> dict[str, Any]:
        run = self.graph.runs.get(run_id)
        if run is None:
            raise NodeNotFound(f"unknown run {run_id}")
        graph = self.focused()
        graph.ensure_jobs((run.job_id,))
        return eventlog_details.run_details(graph, run_id, self._read_ref)
