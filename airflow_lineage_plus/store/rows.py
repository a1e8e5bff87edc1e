"""One raw event as the store keeps it: its bytes and the columns questions filter on.

Every field of an event is hostile: only a JSON object whose ``eventTime`` is an ISO 8601 time is kept
(what the graph cannot use at all), and the columns are cut to their width. What the graph later makes
of the payload is the graph's business (it folds the bytes as it folds a line of the event log).
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping
from typing import Any

import attrs
import orjson

from airflow_lineage_plus.exceptions import BadEventError
from airflow_lineage_plus.timestamps import to_micros

_WIDTH = {"event_type": 32, "run_id": 255, "parent_run_id": 255, "job_namespace": 255, "job_name": 1000}


@attrs.frozen
class RawEvent:
    """A raw event: ``payload`` (its JSON bytes), ``digest`` (BLAKE2b-128 of them) and the columns."""

    payload: bytes
    digest: bytes
    event_time: int
    event_type: str | None
    run_id: str | None
    parent_run_id: str | None
    job_namespace: str | None
    job_name: str | None

    def row(self) -> dict[str, Any]:
        """The ``lineage_plus_event`` row (without its id)."""
        return attrs.asdict(self)


def raw_event(payload: bytes | memoryview) -> RawEvent:
    """The raw event of one event's JSON bytes; :class:`BadEventError` (``malformed``/``invalid``)."""
    data = bytes(payload).strip()
    try:
        event = orjson.loads(data)
    except orjson.JSONDecodeError as exc:
        raise BadEventError("malformed", str(exc)) from exc
    if not isinstance(event, dict):
        raise BadEventError("malformed", "not a JSON object")
    event_time = event.get("eventTime")
    try:
        micros = to_micros(event_time) if isinstance(event_time, str) else None
    except ValueError:
        micros = None
    if micros is None:
        raise BadEventError("invalid", "eventTime is missing or not an ISO 8601 time")
    run = _mapping(event.get("run"))
    job = _mapping(event.get("job"))
    parent = _mapping(_mapping(_mapping(run.get("facets")).get("parent")).get("run"))
    return RawEvent(
        payload=data,
        digest=hashlib.blake2b(data, digest_size=16).digest(),
        event_time=micros,
        event_type=_text(event.get("eventType"), "event_type"),
        run_id=_text(run.get("runId"), "run_id"),
        parent_run_id=_text(parent.get("runId"), "parent_run_id"),
        job_namespace=_text(job.get("namespace"), "job_namespace"),
        job_name=_text(job.get("name"), "job_name"),
    )


def _mapping(value: Any) -> Mapping[str, Any]:
    return value if isinstance(value, dict) else {}


def _text(value: Any, column: str) -> str | None:
    return value[: _WIDTH[column]] if isinstance(value, str) else None
