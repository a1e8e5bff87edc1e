"""The index file: a snapshot of the folded graph of an event log, up to a byte offset of the log.

Layout: a magic string, the format version and the header's length, then the sections, then the header
(``marshal``: what log it indexes and up to where, where the sections are). Sections:

* ``ids``: every node id (jobs and datasets); a node's position in it is its number, kept when a new index
  is written from this one (new nodes come last), and ``order``, the positions sorted by id.
* ``nodes``: one ``marshal`` record per node (a job's owners, edges with the time each was first seen,
  a summary of its runs: the latest, the latest completed one's key, the current edges, see
  :mod:`.indexed`, and its latest declaration; a dataset's folded facts and its column-lineage readers;
  for both, the neighbours over edges ever declared), and ``spans``, where each record starts. A
  question reads just the records of the nodes it touches, so opening an index of any size costs the id
  list, and an answer a few small reads.
* ``refs``: the place in the log of every event of every job (8 bytes each), and ``refspans``: where each
  node's start (datasets have none). Read per job when a question needs its history.
* ``runs``: a hash table of run ids (64-bit hashes, open addressing) and the position of the job each
  belongs to, probed with a small read per lookup (an appended event of a run that began before the
  snapshot, the details of a run).
* ``children``: the same kind of table, of parent run ids and the position of each job with a run under
  that parent (the jobs a run ran: an Airflow task's dbt runs, :mod:`.ancestry`).

The file is written whole to a temporary name and renamed over the old one (atomic): a reader that opened
the old one keeps reading it (same inode), a new reader gets the new one. Everything is read with
``os.pread`` (no shared file position), so one open index serves many threads.
"""

from __future__ import annotations

import bisect
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

from airflow_lineage_plus.exceptions import SnapshotError

MAGIC = b"LPINDEX\x00"
#: bumped whenever the layout or the meaning of a section changes: an index of another format is rebuilt
FORMAT = 5
_HEAD = len(MAGIC) + 8
_PROBE = 32  # slots read at once when looking a run up


def run_hash(run_id: str) -> int:
    """A non-zero 64-bit hash of a run id, the same in every process (unlike ``hash``)."""
    data = run_id.encode()
    return (zlib.crc32(data) << 32 | zlib.adler32(data)) or 1


def home_slot(value: int, slots: int) -> int:
    """Where a run hash's probe starts in a table of ``slots`` (a power of two): its top bits, so a table
    of sorted hashes is in home order (:meth:`RunTable.add_all` builds one with a sort)."""
    return value >> (65 - slots.bit_length())


class RunTable:
    """Run hash -> position of its job: a lookup returns every job whose run has that hash.

    Open addressing (linear probing from :func:`home_slot`) over two arrays of a power-of-two length, with
    no object per run (its size: docs/graph.md, "The index").
    """

    def __init__(self, hashes: array, jobs: array, count: int) -> None:
        self.hashes, self.jobs, self.count = hashes, jobs, count

    @staticmethod
    def slots_for(expected: int) -> int:
        """The table's length for ``expected`` entries: a power of two, at most 70 % full, as add keeps it."""
        return 1 << max(4, (10 * expected // 7).bit_length())

    @classmethod
    def empty(cls, expected: int) -> RunTable:
        size = cls.slots_for(expected)
        return cls(array("Q", bytes(8 * size)), array("I", bytes(4 * size)), 0)

    def add(self, value: int, job: int) -> None:
        if 10 * (self.count + 1) > 7 * len(self.hashes):
            self._grow()
        hashes, jobs, size = self.hashes, self.jobs, len(self.hashes)
        slot = home_slot(value, size)
        while hashes[slot]:
            if hashes[slot] == value and jobs[slot] == job:
                return
            slot = (slot + 1) % size
        hashes[slot], jobs[slot] = value, job
        self.count += 1

    def add_all(self, hashes: array, jobs: array, *, distinct: bool = False) -> None:
        """Add the pairs (``hashes[i]``, ``jobs[i]``) (``distinct``: the caller knows no pair is given
        twice): into an empty table at once (about a second for 5 million, a sort; :meth:`add` takes
        about as long per 10 000), else one by one."""
        if self.count:
            for value, job in zip(hashes, jobs, strict=True):
                self.add(value, job)
            return
        import numpy as np  # only for building: readers probe the file

        size = self.slots_for(len(hashes))
        values, jobs_of = np.frombuffer(hashes, dtype="=u8"), np.frombuffer(jobs, dtype="=u4")
        order = np.argsort(values, kind="stable")
        values, jobs_of = values[order], jobs_of[order]
        del order
        if not distinct and len(values) > 1 and bool((values[1:] == values[:-1]).any()):
            order = np.lexsort((jobs_of, values))  # a pair given twice now lies next to itself
            values, jobs_of = values[order], jobs_of[order]
            once = np.ones(len(values), dtype=bool)
            once[1:] = (values[1:] != values[:-1]) | (jobs_of[1:] != jobs_of[:-1])
            values, jobs_of = values[once], jobs_of[once]
            del order, once
        # sorted hashes are in home order: each pair goes to its home slot or just after the pair before,
        # whichever is later (a running maximum), so no empty slot lies between a pair and its home
        steps = np.arange(len(values), dtype=np.int64)
        home = (values >> np.uint64(65 - size.bit_length())).astype(np.int64)
        placed = np.maximum.accumulate(home - steps) + steps if len(values) else steps
        del home, steps
        fits = placed < size
        table_hashes, table_jobs = np.zeros(size, dtype="=u8"), np.zeros(size, dtype="=u4")
        table_hashes[placed[fits]], table_jobs[placed[fits]] = values[fits], jobs_of[fits]
        self.hashes, self.jobs = array("Q"), array("I")
        self.hashes.frombytes(table_hashes.data.cast("B"))  # one copy, no bytes in between
        self.jobs.frombytes(table_jobs.data.cast("B"))
        del table_hashes, table_jobs, placed
        self.count = int(fits.sum())
        for value, job in zip(values[~fits].tolist(), jobs_of[~fits].tolist(), strict=True):
            self.add(value, job)  # past the end: they wrap to the start, where add puts them

    def _grow(self) -> None:
        bigger = RunTable.empty(len(self.hashes))
        for value, job in zip(self.hashes, self.jobs, strict=True):
            if value:
                bigger.add(value, job)
        self.hashes, self.jobs, self.count = bigger.hashes, bigger.jobs, bigger.count


def write(
    path: Path, header: dict[str, Any], nodes: Iterable[tuple[str, bytes, array]], tables: dict[str, RunTable]
) -> None:
    """Write an index atomically. ``nodes``: (id, record bytes, refs) in position order; ``tables``: the
    ``runs`` and ``children`` tables."""
    temporary = path.with_name(f".{path.name}.{os.getpid()}.{threading.get_ident()}.tmp")
    try:
        with open(temporary, "wb") as out:
            out.write(MAGIC + b"\0" * 8)  # format and header length, once the sections are known
            sections = _write_nodes(out, nodes)
            for name, table in tables.items():
                start = out.tell()
                out.write(_native(table.hashes))
                out.write(_native(table.jobs))
                sections[name] = (start, len(table.hashes), table.count)  # (offset, slots, entries)
            header_bytes = marshal.dumps({**header, "sections": sections})
            out.write(header_bytes)
            out.seek(len(MAGIC))
            out.write(FORMAT.to_bytes(4, "little") + len(header_bytes).to_bytes(4, "little"))
            out.flush()
            os.fsync(out.fileno())
        os.replace(temporary, path)
    finally:
        temporary.unlink(missing_ok=True)


def _write_nodes(out: Any, nodes: Iterable[tuple[str, bytes, array]]) -> dict[str, tuple[int, ...]]:
    """The records section, with the refs gathered on the side and written after it."""
    node_ids: list[str] = []
    spans, refspans = array("Q", [0]), array("Q", [0])
    refs_file = _spill(out)
    start = out.tell()
    for node_id, record, refs in nodes:
        node_ids.append(node_id)
        out.write(record)
        spans.append(out.tell() - start)
        refs_file.write(_native(refs))
        refspans.append(refspans[-1] + len(refs))
    sections: dict[str, tuple[int, ...]] = {"nodes": (start, spans[-1])}
    order = array("I", sorted(range(len(node_ids)), key=node_ids.__getitem__))
    parts = (
        ("ids", marshal.dumps(node_ids)),
        ("order", _native(order)),
        ("spans", _native(spans)),
        ("refspans", _native(refspans)),
    )
    for name, data in parts:
        sections[name] = (out.tell(), len(data))
        out.write(data)
    refs_file.seek(0)
    sections["refs"] = (out.tell(), refspans[-1])
    while block := refs_file.read(16 * 1024 * 1024):
        out.write(block)
    refs_file.close()
    return sections


def _spill(out: Any) -> Any:
    import tempfile

    return tempfile.TemporaryFile(dir=os.path.dirname(out.name) or ".")


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
    """An open index file: its header, and reads of nodes, refs and runs."""

    def __init__(self, path: Path) -> None:
        self.path = path
        try:
            self.fd = os.open(path, os.O_RDONLY)
        except OSError as exc:
            raise SnapshotError(f"no index at {path}: {exc}") from exc
        self._closer = weakref.finalize(self, os.close, self.fd)
        try:
            self.header = self._header()
        except BaseException:
            self.close()
            raise
        self._ids: list[str] | None = None
        self._order = array("I")
        self._spans: tuple[array, array] | None = None
        self._lock = threading.Lock()

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
        except (ValueError, EOFError, TypeError, SnapshotError) as exc:
            raise SnapshotError(f"index {self.path} has a damaged header") from exc
        if not isinstance(header, dict) or "sections" not in header:
            raise SnapshotError(f"index {self.path} has a damaged header")
        return header

    def _section(self, name: str) -> bytes:
        offset, length = self.header["sections"][name][:2]
        return self._read(offset, length)

    def ids(self) -> list[str]:
        """Every node id, by position (read once)."""
        with self._lock:
            if self._ids is None:
                self._order = _from_file("I", self._section("order"))
                self._spans = (
                    _from_file("Q", self._section("spans")),
                    _from_file("Q", self._section("refspans")),
                )
                self._ids = marshal.loads(self._section("ids"))
            return self._ids

    def position(self, node_id: str) -> int:
        """The node's position, or -1 when the snapshot does not have it."""
        node_ids = self.ids()
        at = bisect.bisect_left(self._order, node_id, key=node_ids.__getitem__)
        if at < len(node_ids) and node_ids[self._order[at]] == node_id:
            return self._order[at]
        return -1

    def record_bytes(self, position: int) -> bytes:
        self.ids()
        assert self._spans is not None
        spans = self._spans[0]
        offset = self.header["sections"]["nodes"][0]
        return self._read(offset + spans[position], spans[position + 1] - spans[position])

    def record(self, position: int) -> Any:
        try:
            return marshal.loads(self.record_bytes(position))
        except (ValueError, EOFError, TypeError) as exc:
            raise SnapshotError(f"index {self.path} is damaged") from exc

    def refs(self, position: int) -> array:
        """The refs of the node's events (a job's; none for a dataset)."""
        self.ids()
        assert self._spans is not None
        refspans = self._spans[1]
        start, stop = refspans[position], refspans[position + 1]
        offset = self.header["sections"]["refs"][0]
        return _from_file("Q", self._read(offset + 8 * start, 8 * (stop - start)))

    def jobs_of_run(self, run_id: str) -> list[int]:
        """Positions of the jobs that may hold the run (a hash collision may name a job the run is not in:
        it costs a needless look, never a wrong answer); empty when no run of the snapshot has that id."""
        return self._probe("runs", run_id)

    def jobs_under_run(self, run_id: str) -> list[int]:
        """Positions of the jobs that may have a run whose parent run is ``run_id`` (as :meth:`jobs_of_run`:
        a collision may name one too many)."""
        return self._probe("children", run_id)

    def _probe(self, table: str, run_id: str) -> list[int]:
        offset, slots, _ = self.header["sections"][table]
        wanted = run_hash(run_id)
        slot, found = home_slot(wanted, slots), list[int]()
        while True:
            count = min(_PROBE, slots - slot)
            hashes = _from_file("Q", self._read(offset + 8 * slot, 8 * count))
            jobs = _from_file("I", self._read(offset + 8 * slots + 4 * slot, 4 * count))
            for value, job in zip(hashes, jobs, strict=True):
                if not value:
                    return found
                if value == wanted:
                    found.append(job)
            slot = (slot + count) % slots

    def table(self, name: str) -> RunTable:
        """The whole ``runs`` or ``children`` table (to write a new index from this one)."""
        offset, slots, count = self.header["sections"][name]
        hashes = _from_file("Q", self._read(offset, 8 * slots))
        jobs = _from_file("I", self._read(offset + 8 * slots, 4 * slots))
        return RunTable(hashes, jobs, count)

    def close(self) -> None:
        self._closer()
