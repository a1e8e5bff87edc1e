"""A request body read within a byte cap, inflated when gzip-encoded, also within the cap.

Starlette does not decompress request bodies, and OpenLineage's ``http`` transport sends
``Content-Encoding: gzip`` when ``compression: gzip`` is set. :func:`read_body` reads the body chunk by
chunk and stops at ``limit`` bytes (a larger ``Content-Length`` is refused before anything is read), and
inflates with ``zlib``'s ``max_length`` so a gzip bomb never grows past ``limit`` in memory. Too large:
``BodyTooLargeError`` (the endpoint's 413); not gzip although it says so: ``BadEventError`` (400).
"""

from __future__ import annotations

import zlib

from starlette.requests import Request

from airflow_lineage_plus.exceptions import BadEventError, BodyTooLargeError


def _declared_length(request: Request, limit: int) -> None:
    declared = request.headers.get("content-length")
    if declared is not None and declared.strip().isdigit() and int(declared) > limit:
        raise BodyTooLargeError(f"the body has {int(declared)} bytes; at most {limit} are accepted")


async def _raw(request: Request, limit: int) -> bytes:
    chunks: list[bytes] = []
    size = 0
    async for chunk in request.stream():
        size += len(chunk)
        if size > limit:
            raise BodyTooLargeError(f"the body has more than {limit} bytes")
        chunks.append(chunk)
    return b"".join(chunks)


def inflate(data: bytes, limit: int) -> bytes:
    """``data`` gunzipped, never holding more than ``limit`` inflated bytes (else BodyTooLargeError)."""
    inflater = zlib.decompressobj(wbits=16 + zlib.MAX_WBITS)
    try:
        out = inflater.decompress(data, limit + 1)
        if len(out) > limit or inflater.unconsumed_tail:
            raise BodyTooLargeError(f"the body inflates to more than {limit} bytes")
        out += inflater.flush(limit + 1 - len(out))
    except zlib.error as exc:
        raise BadEventError("malformed", f"Content-Encoding says gzip but the body is not: {exc}") from None
    if len(out) > limit:
        raise BodyTooLargeError(f"the body inflates to more than {limit} bytes")
    if not inflater.eof:
        raise BadEventError("malformed", "the gzip body is truncated")
    return out


async def read_body(request: Request, limit: int) -> bytes:
    """The request's body, inflated when ``Content-Encoding: gzip``; at most ``limit`` bytes either way."""
    _declared_length(request, limit)
    raw = await _raw(request, limit)
    encoding = request.headers.get("content-encoding", "identity").strip().lower()
    if encoding in {"", "identity"}:
        return raw
    if encoding in {"gzip", "x-gzip"}:
        return inflate(raw, limit)
    raise BadEventError("malformed", f"Content-Encoding {encoding!r} is not supported (gzip or none)")
