"""Raw events' bytes as a SQLite store keeps them: zstd-compressed when that is smaller.

PostgreSQL compresses large values itself (TOAST) and keeps payloads as the JSON bytes received, so
``convert_from(payload, 'UTF8')::jsonb`` reads them there; SQLite does not compress (docs/graph.md gives
the sizes). What users query with SQL on SQLite is the folded state (docs/graph.md);
a payload is read back through :func:`expand` (``lineage-plus`` and the Python API do), or with any zstd
tool. Payloads are told apart by their first bytes: a zstd frame's magic number, or JSON.
"""

from __future__ import annotations

import threading

import zstandard

_MAGIC = b"\x28\xb5\x2f\xfd"
#: zstd's level: the ratio and the cost per event are in docs/graph.md
LEVEL = 3
_local = threading.local()


def pack(data: bytes) -> bytes:
    """``data`` as a SQLite store keeps it: a zstd frame when that is smaller, else as it is."""
    compressor = getattr(_local, "compressor", None)
    if compressor is None:
        compressor = _local.compressor = zstandard.ZstdCompressor(level=LEVEL)
    frame: bytes = compressor.compress(data)
    return frame if len(frame) < len(data) else data


def expand(stored: bytes) -> bytes:
    """The event's JSON bytes of a stored payload (compressed or not)."""
    if not stored.startswith(_MAGIC):
        return stored
    decompressor = getattr(_local, "decompressor", None)
    if decompressor is None:
        decompressor = _local.decompressor = zstandard.ZstdDecompressor()
    data: bytes = decompressor.decompress(stored)
    return data
