"""Events as JSON: the client's shape (``Serde``), produced with orjson.

:func:`plain` shapes an event (``openlineage.client`` attrs objects, or dicts) as the client's
``Serde.to_dict`` would; :func:`dumps` writes it as compact JSON bytes, faster than the client
(docs/reliability.md, "Measurements"); :func:`describe` names an event in messages.
"""

from __future__ import annotations

import datetime
import enum
import sys
import uuid
from typing import Any

import orjson
import re2
from openlineage.client.serde import Serde

_DUMPS_OPTIONS = orjson.OPT_SORT_KEYS | orjson.OPT_NON_STR_KEYS


def _options() -> int:
    """orjson's options: numpy's values too once numpy is imported. Not before: with
    ``OPT_SERIALIZE_NUMPY`` orjson imports numpy at its first call (0.1-0.25 s, paid in every process the
    provider forks to emit an event), and a process that never imported numpy holds no numpy value."""
    return _DUMPS_OPTIONS | (orjson.OPT_SERIALIZE_NUMPY if "numpy" in sys.modules else 0)


def plain(value: Any) -> Any:
    """``value`` as JSON-ready data, the way the client's ``Serde.to_dict`` shapes it.

    attrs objects become dicts of their fields, ``None`` values are dropped from dicts, ``None`` and
    empty dicts are dropped from lists, enums become their values, dates ISO strings, UUIDs strings.
    """
    if value is None or isinstance(value, str | int | float | bool):
        return value
    if isinstance(value, dict):
        return _plain_dict(value.items())
    if isinstance(value, list | tuple | set | frozenset):
        items = []
        for item in value:
            if item is None:
                continue
            item = plain(item)
            if item is not None and item != {}:
                items.append(item)
        return items
    fields = getattr(type(value), "__attrs_attrs__", None)
    if fields is not None:
        return _plain_dict((field.name, getattr(value, field.name)) for field in fields)
    if isinstance(value, enum.Enum):
        return value.value
    if isinstance(value, datetime.date):
        return value.isoformat()
    if isinstance(value, uuid.UUID):
        return str(value)
    return value


def _plain_dict(items: Any) -> dict[Any, Any]:
    out = {}
    for key, item in items:
        item = plain(item)
        if item is not None:
            out[key] = item
    return out


def _fallback(value: Any) -> Any:
    if getattr(type(value), "__name__", None) == "int64":
        return int(value)
    return f"<<non-serializable: {type(value).__qualname__}>>"


_FIELD_NAMES: dict[type, tuple[str, ...]] = {}


def fields_of(value: Any) -> dict[str, Any]:
    """A new dict of ``value``'s fields: its set fields (attrs object) or its items (dict), unshaped."""
    if isinstance(value, dict):
        return dict(value)
    out = _direct(value)
    return out if isinstance(out, dict) else {}


def _direct(value: Any) -> Any:
    """orjson's ``default`` for an event object: attrs objects as dicts of their set fields."""
    cls = type(value)
    names = _FIELD_NAMES.get(cls)
    if names is None:
        fields = getattr(cls, "__attrs_attrs__", None)
        if fields is None:
            if isinstance(value, datetime.date):
                return value.isoformat()
            if isinstance(value, set | frozenset):
                return list(value)
            return _fallback(value)
        names = _FIELD_NAMES[cls] = tuple(field.name for field in fields)
    out = {}
    for name in names:
        item = getattr(value, name)
        if item is not None:
            out[name] = item
    return out


#: RE2 for what only Serde's clean-up changes: a null in a dict or list, an empty object in a list. In
#: compact JSON these appear only there (or inside a string, which then just takes the exact path).
CLEANUP_MARKERS = r"[:\[,]null[,\]}]|[\[,]\{\}"
_OPTIONS = re2.Options()
_OPTIONS.encoding = re2.Options.Encoding.LATIN1
CLEANUP = re2.compile(CLEANUP_MARKERS.encode(), _OPTIONS)


def dumps(event: Any) -> bytes:
    """One event as compact JSON bytes (no newline), the same JSON as the client's ``Serde``.

    Event objects are serialised by orjson directly (:func:`dumps_direct`); only when the result holds
    what ``Serde`` would have cleaned up (nulls, empty objects in lists) is it made by :func:`dumps_exact`.
    """
    raw = dumps_direct(event)
    return raw if CLEANUP.search(raw) is None else dumps_exact(event)


def dumps_direct(event: Any) -> bytes:
    """``event`` as JSON, attrs objects through orjson's ``default`` (one Python call per object, not one
    per value); the same as ``Serde`` unless :data:`CLEANUP_MARKERS` match (then use :func:`dumps_exact`)."""
    try:
        return orjson.dumps(event, default=_direct, option=_options() | orjson.OPT_PASSTHROUGH_DATETIME)
    except (TypeError, orjson.JSONEncodeError):  # e.g. integers beyond 64 bits
        return dumps_exact(event)


def dumps_exact(event: Any) -> bytes:
    """``event`` as JSON shaped by :func:`plain` (what ``Serde`` writes), whatever it holds."""
    try:
        return orjson.dumps(plain(event), default=_fallback, option=_options())
    except (TypeError, orjson.JSONEncodeError):  # e.g. integers beyond 64 bits
        return Serde.to_json(plain(event)).encode()


def describe(event: Any) -> str:
    """``<eventType> event of job <namespace>/<name> (run <runId>)`` of an event object or dict."""
    try:
        return _describe(event)
    except Exception:  # a description must never fail the caller that is reporting a problem
        return f"an event ({type(event).__name__})"


def _get(obj: Any, name: str) -> Any:
    return obj.get(name) if isinstance(obj, dict) else getattr(obj, name, None)


def _describe(event: Any) -> str:
    job, run = _get(event, "job"), _get(event, "run")
    kind = _get(event, "eventType")
    kind = getattr(kind, "value", kind)
    if job is None:
        dataset = _get(event, "dataset")
        return f"dataset event {_get(dataset, 'namespace')}/{_get(dataset, 'name')}"
    text = f"{kind or 'job'} event of job {_get(job, 'namespace')}/{_get(job, 'name')}"
    return text + (f" (run {_get(run, 'runId')})" if run is not None else "")
