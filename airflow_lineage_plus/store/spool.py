"""The spool: the newline-delimited event log that holds events the store could not take yet.

The transport writes each event to the store; when the store cannot be reached in time, the event is
appended to the local JSONL log instead (the *spool*, ``[lineage_plus] event_log_path``), and later

* :func:`flush` moves it aside (under the writers' lock, so no line is split between the old file and
  the new one), appends it to the store and removes the moved file only once every line is stored;
  a flush that fails leaves the moved file (``<log>.flushing-*``) for the next flush;
* :func:`drain` appends what was added to a log since the last drain, by byte offset, and never
  changes the file: a reader opening the store does it, so the JSONL history of an earlier version, a
  log another transport still writes, and a spool nobody flushed all reach the store.

Both are idempotent (the store keeps each event's bytes once), so a line drained and later flushed is
stored once. Nothing here imports Airflow.
"""

from __future__ import annotations

import contextlib
import fcntl
import hashlib
import os
import time
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Protocol

import attrs

from airflow_lineage_plus.store.database import AppendResult, LineageStore

#: bytes read at a time
CHUNK_BYTES = 8 * 1024 * 1024
#: the longest line kept (the size budget's largest event); longer lines are counted as too_large
MAX_LINE = (1 << 26) - 1
FLUSHING = ".flushing-"


class Sink(Protocol):
    """Where a flush sends the spool: a :class:`LineageStore`, or the OpenLineage endpoint of an API
    server (:class:`airflow_lineage_plus.deliver.collector_writer.CollectorSink`)."""

    def append(self, lines: Iterable[bytes]) -> AppendResult:
        """Store the events (JSON lines without newline); raise when they are not all stored."""
        ...


@attrs.frozen
class SpoolResult:
    """What a flush or a drain did: events ``added`` to the store, ``duplicates`` it had already, and
    ``problems`` (lines that are not events, by kind)."""

    added: int
    duplicates: int
    problems: dict[str, int]


def complete_lines(
    path: Path, start: int = 0, problems: dict[str, int] | None = None
) -> Iterator[tuple[int, bytes]]:
    """(offset just past the line, line) of every complete non-blank line from byte ``start`` on; a last
    line without its newline (a writer still writing it) is left for later. Lines over :data:`MAX_LINE`
    bytes are skipped and counted in ``problems`` as ``too_large``."""
    problems = problems if problems is not None else {}
    with open(path, "rb") as handle:
        handle.seek(start)
        position, pending, skipping = start, b"", False
        while chunk := handle.read(CHUNK_BYTES):
            data = pending + chunk
            lines = data.split(b"\n")
            pending = lines.pop()  # after the last newline: incomplete
            for line in lines:
                position += len(line) + 1
                if skipping:  # the rest of a line already counted as too large
                    skipping = False
                elif len(line) > MAX_LINE:
                    problems["too_large"] = problems.get("too_large", 0) + 1
                elif line.strip():
                    yield position, line
            if len(pending) > MAX_LINE:
                if not skipping:
                    problems["too_large"] = problems.get("too_large", 0) + 1
                position += len(pending)
                pending, skipping = b"", True


def drain(store: LineageStore, log: Path) -> SpoolResult:
    """Append to ``store`` the complete lines ``log`` gained since the last drain of it (the file and its
    offset are remembered in the store); a log replaced or cut since starts over (duplicates cost nothing)."""
    try:
        stat = log.stat()
    except FileNotFoundError:
        return SpoolResult(0, 0, {})
    key = "drained:" + hashlib.blake2b(str(log.absolute()).encode(), digest_size=16).hexdigest()
    identity, offset = _position(store.meta_value(key))
    if identity != f"{stat.st_dev}:{stat.st_ino}" or offset > stat.st_size:
        offset = 0
    if offset == stat.st_size:
        return SpoolResult(0, 0, {})
    problems: dict[str, int] = {}
    end = [offset]

    def lines() -> Iterator[bytes]:
        for position, line in complete_lines(log, offset, problems):
            end[0] = position
            yield line

    result = store.append(lines())
    store.set_meta_value(key, f"{stat.st_dev}:{stat.st_ino}:{end[0]}")
    return _result(result, problems)


def flush(store: Sink, log: Path, *, lock_timeout: float = 2.0) -> SpoolResult:
    """Move the spool aside and append it, and any earlier flush's leftovers, to ``store``; each moved file
    is removed once all its lines are stored. Raises what the store raises (the files stay)."""
    moved = sorted(log.parent.glob(log.name + FLUSHING + "*"))
    if log.exists() and log.stat().st_size:
        target = log.with_name(f"{log.name}{FLUSHING}{time.time_ns()}-{os.getpid()}")
        if _move_locked(log, target, lock_timeout):
            moved.append(target)
    added = duplicates = 0
    problems: dict[str, int] = {}
    for path in moved:
        result = _result(store.append(line for _, line in complete_lines(path, 0, problems)), problems)
        added, duplicates = added + result.added, duplicates + result.duplicates
        path.unlink(missing_ok=True)  # another flush of the same file may have finished it
    return SpoolResult(added, duplicates, problems)


def pending_bytes(log: Path) -> int:
    """Bytes waiting in the spool and in moved files a failed flush left behind."""
    total = 0
    for path in [log, *log.parent.glob(log.name + FLUSHING + "*")]:
        with contextlib.suppress(FileNotFoundError):
            total += path.stat().st_size
    return total


def lock_exclusive(fd: int, timeout: float) -> bool:
    """Take the exclusive ``flock`` of the event log's writers on ``fd`` with non-blocking tries until
    ``timeout`` seconds; False when it stayed locked (writers hold it for one write, about a millisecond,
    so tries start 0.1 ms apart and back off to 2 ms)."""
    deadline = time.monotonic() + timeout
    pause = 0.0001
    while True:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            return True
        except BlockingIOError:
            if time.monotonic() >= deadline:
                return False
            time.sleep(pause)
            pause = min(pause * 2, 0.002)


def _move_locked(log: Path, target: Path, timeout: float) -> bool:
    """Rename ``log`` to ``target`` while holding the writers' lock; False when it stayed locked. A writer
    that opened the old file checks, once it has the lock, that its file is still the log (the
    transport's append does)."""
    try:
        fd = os.open(log, os.O_RDONLY | os.O_CLOEXEC)
    except FileNotFoundError:
        return False
    try:
        if not lock_exclusive(fd, timeout):
            return False
        try:
            if os.fstat(fd).st_ino != os.stat(log).st_ino:
                return False  # another flush moved it first
            os.rename(log, target)
        except FileNotFoundError:
            return False
        return True
    finally:
        os.close(fd)


def _position(value: str | None) -> tuple[str, int]:
    if not value:
        return "", 0
    identity, _, offset = value.rpartition(":")
    try:
        return identity, int(offset)
    except ValueError:
        return "", 0


def _result(result: AppendResult, problems: dict[str, int]) -> SpoolResult:
    for kind, number in result.rejected.items():
        problems[kind] = problems.get(kind, 0) + number
    return SpoolResult(result.added, result.duplicates, problems)
