"""One raw event as the store keeps it: its bytes, and the columns questions filter on.

Every field of an event is hostile: only a JSON object whose ``eventTime`` is an ISO 8601 time is kept,
and the columns are cut to their width. The event is decoded once (:mod:`.wire`); what the folded state
makes of it is :mod:`.facts`' business.
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping
from typing import Any

import attrs
import orjson

from airflow_lineage_plus import node_ids as ids
from airflow_lineage_plus.exceptions import BadEventError
from airflow_lineage_plus.store import wire as w
from airflow_lineage_plus.store.facts import key_of
from airflow_lineage_plus.timestamps import to_micros

_WIDTH = {"event_type": 32, "run_id": 255, "parent_run_id": 255, "job_namespace": 255, "job_name": 1000}


def node_key(node_id: str) -> int:
    """The store's key of a node id (:func:`.facts.key_of`)."""
    return key_of(node_id)


@attrs.frozen
class RawEvent:
    """A raw event: ``payload`` (its JSON bytes), ``digest`` (BLAKE2b-128 of them), the columns, and
    ``decoded``: the event as the fold reads it (None when it has neither a job nor a dataset: stored,
    never folded)."""

    payload: bytes
    digest: bytes
    event_time: int
    event_type: str | None
    run_id: str | None
    parent_run_id: str | None
    job_namespace: str | None
    job_name: str | None
    node_key: int | None
    decoded: w.Event | None = attrs.field(default=None, eq=False, repr=False)
    salvaged: bool = attrs.field(default=False, eq=False)

    def row(self) -> dict[str, Any]:
        """The ``lineage_plus_event`` row (without its id)."""
        return {field: getattr(self, field) for field in EVENT_COLUMNS}


EVENT_COLUMNS = tuple(
    field.name for field in attrs.fields(RawEvent) if field.name not in {"decoded", "salvaged"}
)


def raw_event(payload: bytes | memoryview) -> RawEvent:
    """The raw event of one event's JSON bytes; :class:`~airflow_lineage_plus.exceptions.BadEventError`
    (``malformed``: not a JSON object; ``invalid``: no ISO 8601 ``eventTime``)."""
    data = bytes(payload).strip()
    try:
        event, micros, salvaged = w.decode_any(data)
    except BadEventError:
        event, salvaged = None, True
    if salvaged:  # an unexpected shape somewhere: the columns from the JSON as it is
        return _hostile(data, event)
    assert event is not None
    run, job = event.run, event.job
    facets = run.facets if run is not None else None
    parent = facets.parent.run.runId if facets is not None and facets.parent is not None else None
    return RawEvent(
        payload=data,
        digest=hashlib.blake2b(data, digest_size=16).digest(),
        event_time=micros,
        event_type=_text(event.eventType, "event_type"),
        run_id=_text(run.runId if run is not None else None, "run_id"),
        parent_run_id=_text(parent, "parent_run_id"),
        job_namespace=_text(job.namespace if job is not None else None, "job_namespace"),
        job_name=_text(job.name if job is not None else None, "job_name"),
        node_key=_node_key(event),
        decoded=event if job is not None or event.dataset is not None else None,
    )


def _hostile(data: bytes, salvaged: w.Event | None) -> RawEvent:
    """The raw event of an event of an unexpected shape: the columns read from its JSON as it is, and
    what the lenient decoder kept of it (``salvaged``; None when nothing) for the fold."""
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
    usable = salvaged is not None and (salvaged.job is not None or salvaged.dataset is not None)
    return RawEvent(
        payload=data,
        digest=hashlib.blake2b(data, digest_size=16).digest(),
        event_time=micros,
        event_type=_text(event.get("eventType"), "event_type"),
        run_id=_text(run.get("runId"), "run_id"),
        parent_run_id=_text(parent.get("runId"), "parent_run_id"),
        job_namespace=_text(job.get("namespace"), "job_namespace"),
        job_name=_text(job.get("name"), "job_name"),
        node_key=_node_key(salvaged) if salvaged is not None else None,
        decoded=salvaged if usable else None,
        salvaged=True,
    )


def _mapping(value: Any) -> Mapping[str, Any]:
    return value if isinstance(value, dict) else {}


def _node_key(event: w.Event) -> int | None:
    """The key of the node whose events this is: its job, else a DatasetEvent's dataset."""
    if event.job is not None:
        return key_of(ids.job_id(event.job.namespace, event.job.name))
    if event.dataset is not None:
        return key_of(ids.dataset_id(event.dataset.namespace, event.dataset.name))
    return None


def _text(value: Any, column: str) -> str | None:
    return value[: _WIDTH[column]] if isinstance(value, str) else None
