"""The index of an event log: where it lives, when it is valid, who builds it, and the source that reads
the log through it.

The index (:mod:`.snapshot`) sits beside the log (``<log>.lpindex``, or where asked). It is valid while
the log is the same file (device and inode), at least as long as the index says it read, and starts with
the same bytes (a log truncated in place and refilled is not the same log); and while its format is this
version's. Otherwise it is rebuilt from the whole log. Writers (a build, a rewrite) hold an exclusive
``flock`` on ``<index>.lock`` and replace the file atomically; readers take no lock.

:class:`IndexedEventLog` opens the index instead of reading the whole log, then folds the bytes appended
since (:mod:`.indexed`). When those reach ``rewrite_bytes`` it writes a new index from what it holds (a
rewrite costs the size of the graph, not of the log) and reopens it, which also gives back the memory the
appended runs took.

Build from a shell (the CLI does it for you): ``python -m airflow_lineage_plus.graph.index LOG``.
"""

from __future__ import annotations

import argparse
import contextlib
import fcntl
import logging
import os
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from airflow_lineage_plus import node_ids as ids
from airflow_lineage_plus.exceptions import SnapshotError, SourceUnavailable
from airflow_lineage_plus.graph import eventlog_details, logfile
from airflow_lineage_plus.graph.answers import failed_jobs, rank_search
from airflow_lineage_plus.graph.eventlog import EventLogSource, _gc_paused
from airflow_lineage_plus.graph.focus import Catalog
from airflow_lineage_plus.graph.indexed import IndexCatalog, IndexedGraph, save
from airflow_lineage_plus.graph.model import LineageGraph
from airflow_lineage_plus.graph.scan import QuickSource
from airflow_lineage_plus.graph.snapshot import FORMAT, Snapshot
from airflow_lineage_plus.graph.source import LineageSource

log = logging.getLogger(__name__)

SUFFIX = ".lpindex"
REWRITE_BYTES = 64 * 1024 * 1024
#: a build of a log this big uses two processes (when there are two CPUs): two take more memory than one,
#: and past this size the time saved matters more (the figures: docs/graph.md, "The index")
PARALLEL_BUILD_BYTES = 8 * 1024**3


def index_path_for(log_path: Path) -> Path:
    return log_path.with_name(log_path.name + SUFFIX)


def open_valid(index_path: Path, log_path: Path) -> Snapshot | None:
    """The index if it is valid for the log now (see the module docstring), else None."""
    try:
        snapshot = Snapshot(index_path)
    except SnapshotError:
        return None
    about = snapshot.header.get("log") or {}
    try:
        device, inode, size, head = logfile.identity(log_path, about.get("offset", 0))
    except OSError:
        snapshot.close()
        return None
    if (device, inode, head) != (about.get("dev"), about.get("ino"), about.get("head")) or size < about.get(
        "offset", 0
    ):
        snapshot.close()
        return None
    return snapshot


@contextlib.contextmanager
def _locked(index_path: Path, *, wait: bool = True) -> Iterator[bool]:
    """The writers' lock of an index; yields whether it was taken (always, when waiting)."""
    with open(index_path.with_name(index_path.name + ".lock"), "a+b") as handle:
        try:
            fcntl.flock(handle.fileno(), fcntl.LOCK_EX | (0 if wait else fcntl.LOCK_NB))
        except BlockingIOError:
            yield False
            return
        try:
            yield True
        finally:
            fcntl.flock(handle.fileno(), fcntl.LOCK_UN)


def _header(log_path: Path, offset: int, events: int, problems: dict[str, int]) -> dict[str, Any]:
    device, inode, _, head = logfile.identity(log_path, offset)
    return {
        "format": FORMAT,
        "log": {"path": str(log_path), "dev": device, "ino": inode, "offset": offset, "head": head},
        "events": events,
        "problems": dict(problems),
        "written": time.time(),
    }


def build_index(log_path: Path, index_path: Path | None = None, *, workers: int | None = None) -> Path:
    """Fold the whole log and write its index (unless another process just did)."""
    index_path = index_path or index_path_for(log_path)
    _build(log_path, index_path, workers)
    return index_path


def _build(log_path: Path, index_path: Path, workers: int | None) -> EventLogSource | None:
    """:func:`build_index`, giving back the source it folded (None when the index was valid already)."""
    if workers is None:
        big = log_path.stat().st_size >= PARALLEL_BUILD_BYTES
        workers = min(2, os.cpu_count() or 1) if big else 1
    with _locked(index_path):
        valid = open_valid(index_path, log_path)
        if valid is not None:
            valid.close()
            return None
        with _gc_paused(True):  # a build is millions of small objects (see eventlog.BULK_READ_BYTES)
            source = EventLogSource(log_path, workers=workers)
            save(index_path, source.graph, _header(log_path, source.offset, source.events, source.problems))
    return source


def start_building(
    log_path: Path, index_path: Path | None = None, *, quiet: bool = False
) -> subprocess.Popen[bytes]:
    """Build the index in a process of its own (it forks workers; this process may run threads). A
    ``quiet`` builder is detached: it outlives this process and says nothing."""
    command = [sys.executable, "-m", "airflow_lineage_plus.graph.index", str(log_path)]
    if index_path is not None:
        command += ["--index", str(index_path)]
    return subprocess.Popen(
        command,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL if quiet else subprocess.PIPE,
        start_new_session=True,
    )


def build_in_process_of_its_own(log_path: Path, index_path: Path, timeout: float | None = None) -> None:
    process = start_building(log_path, index_path)
    try:
        _, error = process.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait()
        raise SourceUnavailable(f"building the index of {log_path} took over {timeout} s") from None
    if process.returncode != 0:
        message = error.decode(errors="replace").strip().splitlines()[-1:] or ["no message"]
        raise SourceUnavailable(f"could not build the index of {log_path}: {message[0]}")


class IndexedEventLog(EventLogSource):
    """The event log read through its index (see the module docstring).

    ``build``: what to do when there is no valid index: ``"process"`` builds it in a process of its own
    and waits (the default: this process keeps its memory and may run threads), ``"here"`` folds the
    log in this process."""

    def __init__(
        self,
        path: str | os.PathLike[str],
        *,
        index_path: str | os.PathLike[str] | None = None,
        build: str = "process",
        rewrite_bytes: int = REWRITE_BYTES,
        **options: Any,
    ) -> None:
        self.index_path = Path(index_path) if index_path is not None else index_path_for(Path(path))
        self.build = build
        self.rewrite_bytes = rewrite_bytes
        self.base_offset = 0
        self.snapshot: Snapshot | None = None
        super().__init__(Path(path), **options)

    def _reset(self) -> None:
        """Start again: from the index (building it first when needed)."""
        super()._reset()
        if not self.path.is_file():
            return  # a log that does not exist yet (missing_ok): an empty graph until it does
        snapshot = open_valid(self.index_path, self.path)
        if snapshot is None:
            if self.build == "here":
                build_index(
                    self.path, self.index_path, workers=self.workers if not self.auto_workers else None
                )
            else:
                build_in_process_of_its_own(self.path, self.index_path)
            snapshot = open_valid(self.index_path, self.path)
            if snapshot is None:
                raise SourceUnavailable(f"the index of {self.path} was not written ({self.index_path})")
        self._open_snapshot(snapshot)

    def _open_snapshot(self, snapshot: Snapshot) -> None:
        if self.snapshot is not None:
            self.snapshot.close()
        self.snapshot = snapshot
        self.graph = IndexedGraph(snapshot, self.path)
        header = snapshot.header
        self.base_offset = self.offset = header["log"]["offset"]
        self.events = header["events"]
        self.problems = dict(header["problems"])

    def _refresh(self) -> int:
        if self.snapshot is None and self.path.is_file():
            self._reset()
        count = super()._refresh()
        if self.snapshot is not None and self.offset - self.base_offset >= self.rewrite_bytes:
            self.rewrite()
        return count

    def _parallel_ok(self, start: int) -> bool:
        return False  # appended bytes are folded here (a big first read is the builder's)

    def rewrite(self) -> bool:
        """Write a new index from this graph (unless another writer holds the lock or wrote a newer
        one), then reopen it. Returns whether this process wrote it."""
        with _locked(self.index_path, wait=False) as taken:
            if not taken:
                return False
            current = open_valid(self.index_path, self.path)
            newer = current is not None and current.header["log"]["offset"] >= self.offset
            if current is not None:
                current.close()
            if not newer:
                save(self.index_path, self.graph, _header(self.path, self.offset, self.events, self.problems))
        snapshot = open_valid(self.index_path, self.path)
        if snapshot is not None and snapshot.header["log"]["offset"] == self.offset:
            self._open_snapshot(snapshot)  # the same state, without the appended runs held in memory
        elif snapshot is not None:
            snapshot.close()
        return not newer

    def catalog(self) -> Catalog:
        if isinstance(self.graph, IndexedGraph):
            return IndexCatalog(self.graph)
        return super().catalog()

    def run_details(self, run_id: str) -> dict[str, Any]:
        graph = self.graph
        if not isinstance(graph, IndexedGraph):
            return super().run_details(run_id)
        focused = self.focused()
        focused.ensure_jobs(graph.jobs_of_run(run_id), with_dags=False)
        return eventlog_details.run_details(focused, run_id, self._read_ref)

    # whole-graph questions read node ids, not records
    def _node_names(self, graph: IndexedGraph, kind: str) -> list[tuple[str, str, str]]:
        """(type, namespace, name) of every node of ``kind`` (an id prefix)."""
        return [ids.split_node_id(node_id) for node_id in graph.node_ids(kind)]

    def dataset_names(self) -> list[tuple[str, str]]:
        graph = self.graph
        if not isinstance(graph, IndexedGraph):
            return super().dataset_names()
        return [(namespace, name) for _, namespace, name in self._node_names(graph, "dataset:")]

    def search(self, text: str, limit: int) -> list[tuple[str, str, str]]:
        graph = self.graph
        if not isinstance(graph, IndexedGraph):
            return super().search(text, limit)
        needle = text.lower()
        found = [n for n in self._node_names(graph, "") if needle in n[2].lower() or needle in n[1].lower()]
        return rank_search(found, needle)[:limit]

    def summary(self) -> tuple[int, int, LineageGraph, list[str]]:
        graph = self.graph
        if not isinstance(graph, IndexedGraph):
            return super().summary()
        datasets, jobs = len(graph.node_ids("dataset:")), graph.node_ids("job:")
        return datasets, len(jobs), graph, failed_jobs(graph)

    def close(self) -> None:
        if self.snapshot is not None:
            self.snapshot.close()


def open_event_log(
    path: Path, index_path: Path | None = None, *, quick: bool = False, build: str = "process", **options: Any
) -> LineageSource:
    """The log through its index. Without a valid index: with ``quick``, a :class:`.QuickSource`
    answering from a scan (``source.index_path`` says where the index is to be built: the caller may
    :func:`start_building` it); else the index is built first (``build``). Where no index can be
    written, the log is read whole into memory."""
    index_path = index_path or index_path_for(path)
    if path.is_file():
        valid = open_valid(index_path, path)
        if valid is not None:
            valid.close()
        elif not os.access(index_path.parent, os.W_OK):
            log.warning("cannot write an index at %s: reading %s whole", index_path, path)
            return EventLogSource(path, **options)
        elif quick:
            source = QuickSource(path)
            source.index_path = index_path
            return source
    return IndexedEventLog(path, index_path=index_path, build=build, **options)


def main(argv: list[str] | None = None, *, exit_when_built: bool = False) -> int:
    """Build the index of a log (the command line of ``python -m airflow_lineage_plus.graph.index``).

    ``exit_when_built``: end the process as soon as the index is written and the lock released, without
    freeing the folded graph object by object, which a process that ends anyway need not do (what that
    saves: docs/graph.md, "The index: DuckDB or our own format").
    """
    parser = argparse.ArgumentParser(prog="python -m airflow_lineage_plus.graph.index", description=__doc__)
    parser.add_argument("log", type=Path)
    parser.add_argument("--index", type=Path, default=None)
    parser.add_argument("--workers", type=int, default=None)
    args = parser.parse_args(argv)
    try:
        folded = _build(args.log, args.index or index_path_for(args.log), args.workers)
    except (SourceUnavailable, OSError) as exc:
        print(f"cannot index {args.log}: {exc}", file=sys.stderr)
        return 1
    if exit_when_built and folded is not None:
        sys.stdout.flush()
        sys.stderr.flush()
        logging.shutdown()
        os._exit(0)
    return 0


if __name__ == "__main__":
    raise SystemExit(main(exit_when_built=True))
