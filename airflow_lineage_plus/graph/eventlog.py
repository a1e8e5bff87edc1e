"""An event log read whole: newline-delimited OpenLineage JSON, folded into a private store.

The log's events are folded with the store's fold (:mod:`airflow_lineage_plus.store.fold`) into a
store of its own (a SQLite file in a private temporary directory, removed on :meth:`close`, or when the
source is collected or the process exits without closing it), and questions read it as they read the
lineage store (:class:`.StoreSource`). Each event is remembered by its place in the file (its byte offset
and length, a *ref*), so details are re-read from the file (:mod:`.logfile`, plain reads, never a memory
map), and answers as of a time fold again just the events of the nodes asked about (:mod:`.focus`), found
by a scan of the same lines (:class:`.scan.ScanCatalog`). :meth:`EventLogSource.refresh` reads only the
bytes appended since; a truncated or replaced file is read again from the start.

For questions asked again and again, ``lineage-plus import LOG`` keeps the log in the lineage store.
"""

from __future__ import annotations

import logging
import os
import shutil
import tempfile
import threading
import weakref
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from airflow_lineage_plus.exceptions import SourceUnavailable
from airflow_lineage_plus.graph import logfile
from airflow_lineage_plus.graph.catalog import Catalog, StoreCatalog
from airflow_lineage_plus.graph.scan import ScanCatalog
from airflow_lineage_plus.graph.store_source import StoreSource
from airflow_lineage_plus.store import LineageStore, sqlite_url
from airflow_lineage_plus.store.facts import Facts

log = logging.getLogger(__name__)

MAX_EVENT_BYTES = logfile.MAX_LINE  # 64 MiB: longer lines are skipped (and counted as too_large)
CHUNK_BYTES = logfile.CHUNK_BYTES
#: events folded per transaction of the private store
FOLD_BATCH = 5000


class EventLogSource(StoreSource):
    """The lineage of one event log (see the module docstring)."""

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
        self.log = Path(path)
        self.chunk_bytes = chunk_bytes
        self.missing_ok = missing_ok
        self.max_event_bytes = min(max_event_bytes, logfile.MAX_LINE)
        if not self.log.is_file() and not (missing_ok and not self.log.exists()):
            raise SourceUnavailable(f"event log {self.log} does not exist or is not a file")
        self._lock = threading.RLock()
        self._directory: str | None = None
        self._removal: weakref.finalize | None = None
        self._identity: tuple[int, int, bytes] | None = None
        self._new_store()
        super().__init__(self.store, owns_store=True)
        self.path = self.log

    # -- the private store --------------------------------------------------------------------------
    def _new_store(self) -> None:
        """A new, empty private store (the old one removed)."""
        self._remove_store()
        self._directory = tempfile.mkdtemp(prefix="lineage-plus-log-")  # mode 0700
        # removed with the source even when nobody closes it: when it is collected, or as the process exits
        self._removal = weakref.finalize(self, _remove_directory, self._directory, os.getpid())
        self.store = LineageStore(sqlite_url(Path(self._directory) / "folded.db"), file_mode=0o600)
        self.scan = ScanCatalog()
        self._whole = None
        self.problems = {}
        self.events = 0
        self.offset = 0
        self.first_time: int | None = None
        self.last_time: int | None = None

    def _remove_store(self) -> None:
        if self._directory is not None:
            self.store.close()
            if self._removal is not None:
                self._removal()
            self._directory = None

    # -- reading the log ----------------------------------------------------------------------------
    def refresh(self) -> int:
        """Read events appended since the last call; read the file again when it was truncated or
        replaced. How many events were read."""
        with self._lock:
            self._whole = None
            return self._refresh()

    def _refresh(self) -> int:
        if self.missing_ok and not self.log.exists():
            if self._identity is not None:
                self._identity = None
                self._new_store()  # the log was removed: start again from nothing
            return 0
        try:
            stat = os.stat(self.log)
            with open(self.log, "rb") as handle:
                head = handle.read(256)
        except OSError as exc:
            raise SourceUnavailable(f"cannot read event log {self.log}: {exc}") from exc
        identity = (stat.st_dev, stat.st_ino, head[: min(len(head), 256)])
        if self._identity is not None:
            same_file = identity[:2] == self._identity[:2] and head.startswith(self._identity[2])
            if not same_file or stat.st_size < self.offset:
                log.info("event log %s was truncated or replaced; reading it again", self.log)
                self._new_store()
        self._identity = identity
        if stat.st_size == self.offset:
            return 0
        return self._read_events(self.offset)

    def _read_events(self, start: int) -> int:
        """Fold every complete line from ``start``."""
        count = 0
        facts = Facts()
        try:
            with open(self.log, "rb") as handle:
                size = os.fstat(handle.fileno()).st_size
                logfile.check_size(self.log, size)
                for base, view in logfile.chunks(
                    handle,
                    start,
                    size,
                    self.problems,
                    chunk_bytes=self.chunk_bytes,
                    max_line=self.max_event_bytes,
                ):
                    count += self._fold_lines(base, view, facts)
                    self.scan.add_lines(base, view, self.max_event_bytes)
                    self.offset = base + len(view)
                    if len(facts) >= FOLD_BATCH:
                        self._fold(facts)
                        facts = Facts()
        except (OSError, ValueError) as exc:
            raise SourceUnavailable(f"cannot read event log {self.log}: {exc}") from exc
        finally:
            self._fold(facts)
            self.scan.finish()
        return count

    def _fold_lines(self, base: int, view: memoryview, facts: Facts) -> int:
        """Read the complete lines of one chunk (``view`` starts at file offset ``base``) into ``facts``."""
        find = view.obj.find  # type: ignore[attr-defined]
        end_of_view = len(view)
        count = 0
        local = 0
        while local < end_of_view:
            end = find(b"\n", local, end_of_view)
            length = end - local
            if length > self.max_event_bytes:
                self.problems["too_large"] = self.problems.get("too_large", 0) + 1
            elif (length > 2 or view[local:end].tobytes().strip()) and facts.add_bytes(
                view[local:end], logfile.ref_of(base + local, length)
            ):
                count += 1
            local = end + 1
        return count

    def _fold(self, facts: Facts) -> None:
        for kind, number in facts.problems.items():
            self.problems[kind] = self.problems.get(kind, 0) + number
        facts.problems.clear()
        self.events += len(facts)
        if facts.first_time is not None and (self.first_time is None or facts.first_time < self.first_time):
            self.first_time = facts.first_time
        if facts.last_time is not None and (self.last_time is None or facts.last_time > self.last_time):
            self.last_time = facts.last_time
        if len(facts):
            self.store.fold(facts)

    # -- what differs from the lineage store ----------------------------------------------------------
    def _payloads(self, refs: Sequence[int]) -> Mapping[int, bytes]:
        return logfile.read_payloads(self.log, refs)

    def catalog(self) -> Catalog:
        return _LogCatalog(self.store, self.scan)

    def time_range(self) -> tuple[int | None, int | None]:
        return self.first_time, self.last_time

    def guard(self) -> Any:
        return self._lock

    def close(self) -> None:
        with self._lock:
            self._remove_store()


def _remove_directory(directory: str, owner: int) -> None:
    """Remove a private store's directory, in the process that made it only (a forked child that exits
    through the interpreter runs its finalizers too)."""
    if os.getpid() == owner:
        shutil.rmtree(directory, ignore_errors=True)


class _LogCatalog(StoreCatalog):
    """The private store's catalog, with where each node's events are in the log (the scan's)."""

    def __init__(self, store: LineageStore, scan: ScanCatalog) -> None:
        super().__init__(store)
        self.scan = scan

    def job_refs(self, job_id: str, as_of: int | None = None) -> Sequence[int]:
        return self.scan.job_refs(job_id)

    def dataset_refs(self, dataset_id: str, as_of: int | None = None) -> Sequence[int]:
        return self.scan.dataset_refs(dataset_id)

    def declarations(self, job_id: str, as_of: int | None = None) -> Sequence[int]:
        return self.scan.job_refs(job_id)  # the scan does not tell JobEvents apart: all of the job's
