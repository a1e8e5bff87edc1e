"""The one parser of ISO 8601 times in events and on the command line, the same on every supported Python.

``datetime.fromisoformat`` on Python 3.10 accepts only what ``isoformat()`` writes: it rejects a trailing
``Z`` (``2024-05-01T10:00:00Z``, as Java and Spark producers and Marquez write), fractions of other than
3 or 6 digits (nanoseconds from Java) and offsets without a colon (``+0000``); 3.11 accepts all three.
:func:`parse_iso` normalises those forms first, so every supported Python reads the same times. A base
module with no Airflow import: the graph (which must stay Airflow-free) and replay share it.
"""

from __future__ import annotations

import re
from datetime import datetime, timedelta, timezone

#: Longer than any ISO 8601 time: such input is rejected before any parsing (event fields are hostile).
MAX_LENGTH = 64
_PARTS = re.compile(
    r"(?P<base>[0-9T:\- ]+?)(?:[.,](?P<fraction>[0-9]+))?(?P<zone>[Zz]|[+-][0-9]{2}:?[0-9]{2})?"
)


def parse_iso(text: str) -> datetime:
    """An aware datetime for an ISO 8601 time; ``Z`` (any case) means UTC, a time without zone is UTC.

    Fractions of a second beyond microseconds are cut (as Python 3.11 does). Raises ValueError for
    anything that is not an ISO 8601 date or time.
    """
    if len(text) > MAX_LENGTH:
        raise ValueError(f"not an ISO 8601 time (longer than {MAX_LENGTH} characters)")
    try:  # the fast path: what isoformat() writes (the graph parses every event's time)
        moment = datetime.fromisoformat(text)
    except ValueError:
        moment = _parse_normalised(text)
    return moment if moment.tzinfo is not None else moment.replace(tzinfo=timezone.utc)


def _parse_normalised(text: str) -> datetime:
    value = text.strip()
    parts = _PARTS.fullmatch(value)
    if parts is None:
        raise ValueError(f"not an ISO 8601 time: {value!r}")
    normal = parts["base"]
    if parts["fraction"]:
        normal += "." + parts["fraction"][:6].ljust(6, "0")
    zone = parts["zone"]
    if zone:
        normal += "+00:00" if zone in ("Z", "z") else f"{zone[:3]}:{zone[-2:]}"
    return datetime.fromisoformat(normal)


_EPOCH = datetime(1970, 1, 1, tzinfo=timezone.utc)
_MICRO = timedelta(microseconds=1)


def to_micros(value: str) -> int:
    """Epoch microseconds (UTC) of an ISO 8601 time; a time without zone is taken as UTC. ValueError
    otherwise."""
    return (parse_iso(value) - _EPOCH) // _MICRO
