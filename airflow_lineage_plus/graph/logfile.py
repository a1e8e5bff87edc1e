"""Reading the event log file: complete lines by plain reads, and single events by their place.

No memory map: a log truncated in place (logrotate's ``copytruncate``) makes a mapped page vanish, and the
next access to it kills the process with SIGBUS. A read of a truncated file just returns fewer bytes.
Lines are handed out as views into a reused buffer (no copy per line); a line longer than the buffer gets a
bigger one, up to the size budget, beyond which it is skipped and counted.
"""

from __future__ import annotations

import os
from collections.abc import Iterator, Sequence
from io import BufferedReader

CHUNK_BYTES = 8 * 1024 * 1024
#: a ref is one 64-bit number: the event's offset in the top 38 bits (logs up to 256 GiB), its length in
#: the low 26 (events up to 64 MiB, the size budget: a longer line is skipped as too large)
LENGTH_BITS = 26
LENGTH_MASK = (1 << LENGTH_BITS) - 1
MAX_LINE = LENGTH_MASK
MAX_LOG_BYTES = 1 << (64 - LENGTH_BITS)


def check_size(path: os.PathLike[str] | str, size: int) -> None:
    """A log whose events a ref cannot place is refused, with the fix."""
    if size >= MAX_LOG_BYTES:
        raise ValueError(f"event log {path} is over {MAX_LOG_BYTES // 2**30} GiB: rotate it (logrotate)")


def ref_of(offset: int, length: int) -> int:
    """One int for an event's place in the file: its offset and its length."""
    return (offset << LENGTH_BITS) | length


def split_ref(ref: int) -> tuple[int, int]:
    return ref >> LENGTH_BITS, ref & LENGTH_MASK


def chunks(
    handle: BufferedReader,
    start: int,
    stop: int,
    problems: dict[str, int],
    *,
    chunk_bytes: int = CHUNK_BYTES,
    max_line: int = MAX_LINE,
) -> Iterator[tuple[int, memoryview]]:
    """(file offset, view) of consecutive runs of complete lines in [start, stop), each view ending with a
    newline. Stops early at the end of the file (a file truncated meanwhile) and before a last line that
    has no newline yet. The view is valid until the next one is asked for. Lines over ``max_line`` bytes
    are skipped and counted as ``too_large``."""
    max_line = min(max_line, MAX_LINE)
    buffer = bytearray(max(4096, chunk_bytes))
    base, filled = start, 0  # file offset of buffer[0], bytes in the buffer
    handle.seek(start)
    while base + filled < stop:
        room = min(len(buffer) - filled, stop - base - filled)
        got = handle.readinto(memoryview(buffer)[filled : filled + room])
        if not got:
            return  # the file ended earlier than it said (truncated while being read)
        filled += got
        end = buffer.rfind(b"\n", 0, filled)
        if end < 0:
            if filled < len(buffer):
                continue
            if (
                len(buffer) <= max_line
            ):  # a line longer than the buffer: a bigger one (never resized in place)
                bigger = bytearray(min(2 * len(buffer), max_line + 1))
                bigger[:filled] = buffer[:filled]
                buffer = bigger
                continue
            skipped = _skip_line(handle, base + filled, stop)
            if skipped < 0:
                return
            problems["too_large"] = problems.get("too_large", 0) + 1
            base, filled = skipped, 0
            handle.seek(base)
            continue
        yield base, memoryview(buffer)[: end + 1]
        rest = filled - end - 1
        if rest:
            buffer[:rest] = buffer[end + 1 : filled]
        base, filled = base + end + 1, rest


def _skip_line(handle: BufferedReader, position: int, stop: int) -> int:
    """Offset just after the next newline at or after ``position`` (before ``stop``), or -1."""
    handle.seek(position)
    while position < stop:
        block = handle.read(min(CHUNK_BYTES, stop - position))
        if not block:
            return -1
        newline = block.find(b"\n")
        if newline >= 0:
            return position + newline + 1
        position += len(block)
    return -1


def read_payloads(path: str | os.PathLike[str], refs: Sequence[int]) -> dict[int, bytes]:
    """The bytes of the events at ``refs`` of the file at ``path``, read in the order of their places;
    those that cannot be read (a file truncated or removed since) are missing."""
    found: dict[int, bytes] = {}
    try:
        with open(path, "rb") as handle:
            wanted = sorted(set(refs))
            prefetch(handle, wanted)
            for ref in wanted:
                data = read_ref_bytes(handle, ref)
                if len(data) == ref & LENGTH_MASK:
                    found[ref] = data
    except OSError:
        pass
    return found


def prefetch(handle: BufferedReader, refs: list[int]) -> None:
    """Tell the kernel which events (``refs``, sorted) are about to be read, so that it reads the ones not
    in the page cache from disk together rather than one after the other; nothing where it cannot."""
    advise = getattr(os, "posix_fadvise", None)
    if advise is None:
        return
    fd = handle.fileno()
    try:
        for ref in refs:
            advise(fd, ref >> LENGTH_BITS, ref & LENGTH_MASK, os.POSIX_FADV_WILLNEED)
    except OSError:
        return  # advice only


def read_ref_bytes(handle: BufferedReader, ref: int) -> bytes:
    offset, length = split_ref(ref)
    handle.seek(offset)
    return handle.read(length)
