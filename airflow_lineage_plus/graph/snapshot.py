"""The index file: a snapshot of the folded graph of an event log, up to a byte offset of the log.

Layout: a magic string, the format version, a header (``marshal``: what log it indexes, up to where, the
sections) and three sections:

* ``hot``: what every answer needs, loaded whole when the index is opened: jobs (owners, edges, and a
  summary of their runs: the latest run, the latest completed one and the current edges, see
  :mod:`.retirement`), datasets (their folded facts), the first time each edge was seen, column-lineage
  readers, the scheduler's skips. Plain tuples, dicts and sets in ``marshal``, which loads them several
  times faster than pickle.
* ``refs``: the place in the log of every event of every job (8 bytes each), read per job when a question
  needs a job's history (details, time travel, a run continuing after the snapshot).
* ``runs``: a hash table of run ids (64-bit hashes, open addressing) and the job each belongs to, read the
  first time a run must be found (an appended event of a run that started before the snapshot, the
  details of a run).

The file is written whole to a temporary name and renamed over the old one (atomic): a reader that opened
the old one keeps reading it (same inode), a new reader gets the new one. Sections are read with
``os.pread`` (no shared file position), so one open index serves many threads.
"""

from __future__ import annotations

import marshal
import os
import sys
import threading
import weakref
import zlib
from array import array
from collections.abc import Iterable
from pathlib import Path
from typing import Any

MAGIC = b"LPINDEX\x00"
#: bumped whenever the layout or the meaning of a section changes: an index of another format is rebuilt
FORMAT = 1
_HEAD = len(MAGIC) + 8


class SnapshotError(Exception):
    """The file is not an index this version can read (missing, partial, another format)."""


def run_hash(run_id: str) -> int:
    """A non-zero 64-bit hash of a run id, the same in every process (unlike ``hash``)."""
    data = run_id.encode()
    return (zlib.crc32(data) << 32 | zlib.adler32(data)) or 1


class RunTable:
    """Run hash -> index of its job, as open addressing over two arrays (no sort, no per-run objects:
    5 million runs take 120 MB). A lookup returns every job whose run has that hash."""

    def __init__(self, hashes: array, jobs: array, count: int) -> None:
        self.hashes, self.jobs, self.count = hashes, jobs, count

    @classmethod
    def empty(cls, expected: int) -> RunTable:
        size = max(16, 2 * expected)
        return cls(array("Q", bytes(8 * size)), array("I", bytes(4 * size)), 0)

    def add(self, run_hash_value: int, job: int) -> None:
        if 10 * (self.count + 1) > 7 * len(self.hashes):
            self._grow()
        hashes, size = self.hashes, len(self.hashes)
        slot = run_hash_value % size
        while hashes[slot]:
            if hashes[slot] == run_hash_value and self.jobs[slot] == job:
                return
            slot = (slot + 1) % size
        hashes[slot], self.jobs[slot] = run_hash_value, job
        self.count += 1

    def _grow(self) -> None:
        old = self.hashes, self.jobs
        bigger = RunTable.empty(len(old[0]))
        for value, job in zip(*old, strict=True):
            if value:
                bigger.add(value, job)
        self.hashes, self.jobs, self.count = bigger.hashes, bigger.jobs, bigger.count

    def lookup(self, run_id: str) -> list[int]:
        wanted, hashes = run_hash(run_id), self.hashes
        size = len(hashes)
        slot, found = wanted % size, []
        while hashes[slot]:
            if hashes[slot] == wanted:
                found.append(self.jobs[slot])
            slot = (slot + 1) % size
        return found


def write(path: Path, header: dict[str, Any], hot: Any, refs: Iterable[array], runs: RunTable) -> None:
    """Write an index atomically: ``refs`` are the jobs' refs in the order ``hot`` lists them (their
    ``(start, count)`` is in ``hot``); ``runs`` the run table."""
    temporary = path.with_name(f".{path.name}.{os.getpid()}.{threading.get_ident()}.tmp")
    try:
        with open(temporary, "wb") as out:
            out.write(MAGIC)
            out.write(b"\0" * 8)  # format and header length, once the sections are known
            sections: dict[str, tuple[int, ...]] = {}
            start = out.tell()
            hot_bytes = marshal.dumps(hot)
            out.write(hot_bytes)
            sections["hot"] = (start, len(hot_bytes))
            start = out.tell()
            for block in refs:
                out.write(_native(block))
            sections["refs"] = (start, out.tell() - start)
            start = out.tell()
            out.write(_native(runs.hashes))
            out.write(_native(runs.jobs))
            sections["runs"] = (start, len(runs.hashes), runs.count)  # (offset, slots, runs)
            header = {**header, "sections": sections}
            header_bytes = marshal.dumps(header)
            out.write(header_bytes)
            out.seek(len(MAGIC))
            out.write(FORMAT.to_bytes(4, "little") + len(header_bytes).to_bytes(4, "little"))
            out.flush()
            os.fsync(out.fileno())
        os.replace(temporary, path)
    finally:
        temporary.unlink(missing_ok=True)


def _native(values: array) -> bytes:
    """Array bytes in little-endian order (the file's), whatever the machine's."""
    if sys.byteorder == "little":
        return values.tobytes()
    swapped = array(values.typecode, values)
    swapped.byteswap()
    return swapped.tobytes()


def _from_file(typecode: str, data: bytes) -> array:
    values = array(typecode)
    values.frombytes(data)
    if sys.byteorder != "little":
        values.byteswap()
    return values


class Snapshot:
    """An open index file: its header, its hot section, and reads of its cold sections."""

    def __init__(self, path: Path) -> None:
        self.path = path
        try:
            self.fd = os.open(path, os.O_RDONLY)
        except OSError as exc:
            raise SnapshotError(f"no index at {path}: {exc}") from exc
        try:
            self.header = self._header()
        except BaseException:
            os.close(self.fd)
            raise
        self._runs: RunTable | None = None
        self._lock = threading.Lock()
        self._closer = weakref.finalize(self, os.close, self.fd)

    def _read(self, offset: int, length: int) -> bytes:
        data = os.pread(self.fd, length, offset)
        if len(data) != length:
            raise SnapshotError(f"index {self.path} is shorter than it says")
        return data

    def _header(self) -> dict[str, Any]:
        head = os.pread(self.fd, _HEAD, 0)
        if len(head) != _HEAD or not head.startswith(MAGIC):
            raise SnapshotError(f"{self.path} is not an index")
        version = int.from_bytes(head[len(MAGIC) : len(MAGIC) + 4], "little")
        if version != FORMAT:
            raise SnapshotError(f"index {self.path} has format {version}, this version reads {FORMAT}")
        length = int.from_bytes(head[len(MAGIC) + 4 :], "little")
        size = os.fstat(self.fd).st_size
        try:
            header = marshal.loads(self._read(size - length, length))
        except (ValueError, EOFError, TypeError) as exc:
            raise SnapshotError(f"index {self.path} has a damaged header") from exc
        if not isinstance(header, dict) or "sections" not in header:
            raise SnapshotError(f"index {self.path} has a damaged header")
        return header

    def hot(self) -> Any:
        offset, length = self.header["sections"]["hot"]
        try:
            return marshal.loads(self._read(offset, length))
        except (ValueError, EOFError, TypeError) as exc:
            raise SnapshotError(f"index {self.path} is damaged") from exc

    def job_refs(self, start: int, count: int) -> array:
        """The refs of one job (``start``, ``count`` as the hot section lists them)."""
        offset, _ = self.header["sections"]["refs"]
        return _from_file("Q", self._read(offset + 8 * start, 8 * count))

    def runs(self) -> RunTable:
        """The run table, read on first use."""
        with self._lock:
            if self._runs is None:
                offset, slots, count = self.header["sections"]["runs"]
                hashes = _from_file("Q", self._read(offset, 8 * slots))
                jobs = _from_file("I", self._read(offset + 8 * slots, 4 * slots))
                self._runs = RunTable(hashes, jobs, count)
            return self._runs

    def jobs_of_run(self, run_id: str) -> list[int]:
        """Indices of the jobs that may hold the run (a hash collision may name a job the run is not in:
        it costs a needless look, never a wrong answer); empty when no run of the snapshot has that id."""
        return self.runs().lookup(run_id)

    def close(self) -> None:
        self._closer()
