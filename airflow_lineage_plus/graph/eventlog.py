"""The embedded event log: newline-delimited OpenLineage JSON written by the client's ``file`` transport.

Loaded once into a :class:`LineageGraph`; :meth:`EventLogSource.refresh` then reads only the bytes
appended since (a truncated or replaced file is reloaded). Each event is remembered by its byte offset
and length, so details are re-read from the file instead of being kept in memory
(:mod:`.eventlog_details`), and answers as of a time fold again just the events of the nodes asked about
(:mod:`.focus`). The file is read by plain reads (:mod:`.logfile`), never memory-mapped.
"""

from __future__ import annotations

import contextlib
import gc
import itertools
import logging
import multiprocessing
import os
import tempfile
import threading
import time
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any, BinaryIO

from airflow_lineage_plus import node_ids as ids
from airflow_lineage_plus.exceptions import NodeNotFound, SourceUnavailable
from airflow_lineage_plus.graph import eventlog_details, eventlog_history, logfile, state
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
#: reads at least this big pause the cyclic GC while they fold (it would rescan the millions of objects
#: being built, 3-5x slower); smaller ones (a refresh) leave it alone. Nothing is frozen: a long-lived
#: process (the API server) must be able to collect what later refreshes leave behind.
BULK_READ_BYTES = 64 * 1024 * 1024
PARALLEL_MIN_BYTES = 64 * 1024 * 1024  # below this a second process costs more than it saves
# A worker also exports its part before this process merges it, so it gets a smaller part: both then
# finish at about the same time (the figures, and a split that was tried and dropped: docs/graph.md).
WORKER_SHARE = 0.94
# By default a worker is forked only when two CPUs are idle (give or take half a CPU): with one CPU for
# both, the merge's extra work makes the load slower than one process (docs/graph.md).
IDLE_CPU_NEEDED = 1.5


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
        workers: int | None = None,
        parallel_min_bytes: int = PARALLEL_MIN_BYTES,
    ) -> None:
        """``missing_ok``: a log that does not exist yet is an empty graph (read once it appears).
        ``chunk_bytes``: how much of the file is read at a time (a longer line gets a bigger buffer).
        ``workers``: processes that fold a large read (at least ``parallel_min_bytes`` new bytes) in
        parallel, each a part of the file. Default: 2 when the machine has 2 CPUs or more and two of them
        are idle (:func:`idle_cpus`, see ``IDLE_CPU_NEEDED``), else 1; merging costs CPU, so on a busy
        machine a second process would not make the load faster."""
        self.path = Path(path)
        self.auto_workers = workers is None
        self.workers = max(1, workers if workers is not None else min(2, os.cpu_count() or 1))
        self.parallel_min_bytes = parallel_min_bytes
        self.chunk_bytes = chunk_bytes
        self.missing_ok = missing_ok
        self.max_event_bytes = min(max_event_bytes, logfile.MAX_LINE)
        self.graph = LineageGraph()
        self.problems: dict[str, int] = {}
        self.events = 0
        self.offset = 0
        self.worker_parts = 0  # parts of the log folded by worker processes since the last (re)load
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
        self.worker_parts = 0
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
        return self._read_from(self.offset)

    def _read_from(self, start: int) -> int:
        with _gc_paused(self._size() - start >= BULK_READ_BYTES):
            return self._read_parallel(start) if self._parallel_ok(start) else self._read_events(start)

    def _size(self) -> int:
        try:
            return os.stat(self.path).st_size
        except OSError as exc:
            raise SourceUnavailable(f"cannot read event log {self.path}: {exc}") from exc

    def _parallel_ok(self, start: int) -> bool:
        """Whether to fold from ``start`` in several processes: a big enough read, and ``fork`` is safe
        (a forked child of a process running other threads could inherit a lock held forever)."""
        if self.workers < 2 or "fork" not in multiprocessing.get_all_start_methods():
            return False
        if threading.active_count() > 1 or multiprocessing.current_process().daemon:
            return False
        try:
            if os.stat(self.path).st_size - start < self.parallel_min_bytes:
                return False
        except OSError:
            return False
        # last, as it takes 0.1 s: a second process would only compete with others for the same CPUs
        return not self.auto_workers or idle_cpus() >= IDLE_CPU_NEEDED

    def _split_points(self, start: int, stop: int) -> list[int]:
        """Offsets just after a newline that cut [start, stop) into ``workers`` parts: the first (read
        here) weighs 1, the others (read by workers) ``WORKER_SHARE`` each."""
        points = [start]
        total = 1 + WORKER_SHARE * (self.workers - 1)
        with open(self.path, "rb") as handle:
            for part in range(1, self.workers):
                cut = start + int((stop - start) * (1 + WORKER_SHARE * (part - 1)) / total)
                newline = _find_newline(handle, cut, stop)
                if newline >= 0 and newline + 1 > points[-1] and newline + 1 < stop:
                    points.append(newline + 1)
        return [*points, stop]

    def _read_parallel(self, start: int) -> int:
        """Fold the parts of the file in worker processes (the last parts) and here (the first part),
        then merge them in log order. The graph is order-independent, so this gives the graph one
        sequential fold gives; a worker that fails has its part read here instead."""
        try:
            stop = os.stat(self.path).st_size
        except OSError as exc:
            raise SourceUnavailable(f"cannot read event log {self.path}: {exc}") from exc
        points = self._split_points(start, stop)
        context = multiprocessing.get_context("fork")
        workers: list[tuple[Any, Any, Any, int, int]] = []
        for begin, end in itertools.pairwise(points[1:]):
            receiver, sender = context.Pipe(duplex=False)
            # the worker's graph comes back through a file (no name, gone when closed): the worker writes
            # it and exits, giving its memory back while this process still folds its own part
            spool = tempfile.TemporaryFile(prefix="lineage-plus-part-")  # noqa: SIM115 (closed below)
            process: Any = context.Process(
                target=self._fold_part, args=(begin, end, sender, spool), daemon=True
            )
            try:
                process.start()
            except OSError:
                process = None
            sender.close()
            workers.append((process, receiver, spool, begin, end))
        try:
            count = self._read_events(start, points[1])
            for process, receiver, spool, begin, end in workers:
                part = None
                if process is not None:
                    try:
                        part = receiver.recv()
                    except (EOFError, OSError):
                        part = None
                    process.join()
                receiver.close()
                where = (self.path, begin, end)
                if part is None or self.offset != begin:
                    spool.close()
                    log.warning("event log %s: bytes %d-%d not folded by a worker; reading them here", *where)
                    count += self._read_events(self.offset, end)
                    continue
                problems, events, offset = part
                with spool:
                    spool.seek(0)  # the worker wrote through the same open file, moving its offset
                    state.absorb_from(self.graph, spool)
                for kind, number in problems.items():
                    self.problems[kind] = self.problems.get(kind, 0) + number
                self.events += events
                self.offset = offset
                self.worker_parts += 1
                count += events
        finally:  # after an error here, stop workers still folding
            for process, receiver, spool, _, _ in workers:
                receiver.close()
                spool.close()
                if process is not None and process.is_alive():
                    process.terminate()
                    process.join()
        return count

    def _fold_part(self, start: int, stop: int, sender: Any, spool: BinaryIO) -> None:
        """In a worker process: fold [start, stop) into a new graph, export it to ``spool`` and say so."""
        try:
            self.graph, self.problems, self.events = LineageGraph(), {}, 0
            self._read_events(start, stop)
            spool.seek(0)
            state.export_to(self.graph, spool)
            spool.flush()
            sender.send((self.problems, self.events, self.offset))
        except Exception:  # no part sent: the parent folds [start, stop) itself
            pass
        finally:
            sender.close()

    def _read_events(self, start: int, stop: int | None = None) -> int:
        """Fold every complete line from ``start`` (to ``stop``, an offset just after a newline)."""
        count = 0
        position = start
        try:
            with open(self.path, "rb") as handle:
                size = os.fstat(handle.fileno()).st_size if stop is None else stop
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
        try:
            with open(self.path, "rb") as handle:
                return logfile.read_ref(handle, ref)
        except OSError:
            return None

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


@contextlib.contextmanager
def _gc_paused(pause: bool) -> Iterator[None]:
    """The cyclic GC paused while a big read builds millions of small acyclic objects; back on after."""
    enabled = gc.isenabled()
    if pause:
        gc.disable()
    try:
        yield
    finally:
        if pause and enabled:
            gc.enable()


def idle_cpus(sample_seconds: float = 0.1) -> float:
    """How many CPUs are idle now: from two readings of /proc/stat ``sample_seconds`` apart (Linux);
    elsewhere CPUs minus the 1-minute load average (which lags: it still counts a load just finished)."""
    cpus = os.cpu_count() or 1
    try:
        before = _cpu_ticks()
        time.sleep(sample_seconds)
        after = _cpu_ticks()
    except (OSError, ValueError, IndexError):
        return cpus - os.getloadavg()[0]
    total = after[0] - before[0]
    return cpus * (after[1] - before[1]) / total if total > 0 else 0.0


def _cpu_ticks() -> tuple[int, int]:
    """(all, idle + iowait) CPU ticks since boot, summed over CPUs."""
    with open("/proc/stat") as stat:
        fields = [int(value) for value in stat.readline().split()[1:]]
    return sum(fields[:8]), fields[3] + fields[4]


def _find_newline(handle: Any, start: int, stop: int | None = None) -> int:
    """Offset of the first newline at or after ``start`` (and before ``stop``); -1 when there is none."""
    handle.seek(start)
    scanned = start
    while chunk := handle.read(8 * 1024 * 1024 if stop is None else min(8 * 1024 * 1024, stop - scanned)):
        newline = chunk.find(b"\n")
        if newline >= 0:
            return scanned + newline
        scanned += len(chunk)
    return -1
