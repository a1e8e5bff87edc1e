"""What the OpenLineage endpoint does with a request's body: check its events, then store them.

This is the blocking work of a request, done in the endpoint's writer process
(:mod:`.ingest_process`), never in the API server's own: the JSON, each event's required shape
(:mod:`.event_shape`; a single event: 400 naming the field), the event budget
(:func:`airflow_lineage_plus.deliver.event_budget.check`: values policy, limits, redaction; an event that
cannot be checked is refused, fail closed), then :meth:`LineageStore.add` (one event) or
:meth:`LineageStore.append` (a batch), committed. :func:`answer` gives the outcome as the plain dict that
goes back to the API server (:data:`Answer`).
"""

from __future__ import annotations

import logging
import threading
from typing import Any

import attrs
import orjson

from airflow_lineage_plus.deliver.event_budget import check
from airflow_lineage_plus.exceptions import BadEventError, LineagePlusError
from airflow_lineage_plus.store import RawEvent, raw_event
from airflow_lineage_plus.store.database import AppendResult, LineageStore
from airflow_lineage_plus.ui.event_shape import check_shape

log = logging.getLogger(__name__)

#: what a request's work answers: ``{"received", "stored", "duplicates", "failed": [[index, reason]]}``,
#: or ``{"error": "bad" | "unavailable", "detail": ...}`` (the endpoint's 400 and 503)
Answer = dict[str, Any]


class StoreHolder:
    """The configured lineage store, opened on first write and kept for the process."""

    def __init__(self) -> None:
        self._store: LineageStore | None = None
        self._lock = threading.Lock()

    def get(self) -> LineageStore:
        if self._store is None:
            with self._lock:
                if self._store is None:
                    from airflow_lineage_plus.sources import open_store

                    self._store = open_store()
        return self._store


@attrs.frozen
class Checked:
    """A request's events ready for the store, and the batch's events refused for good by index."""

    received: int
    events: list[RawEvent]
    failed: list[tuple[int, str]]


def _one(event: Any) -> RawEvent:
    """One event shape-checked, then budgeted and redacted; :class:`BadEventError` naming why not."""
    check_shape(event)
    try:
        line = check(event)
    except Exception as exc:  # fail closed, and a 400: a client retries a 5xx forever
        raise BadEventError(
            "unchecked", f"the event could not be checked for secrets ({type(exc).__name__})"
        ) from None
    return raw_event(line)


def checked(body: bytes, batch: bool) -> Checked:
    """The body's events checked: a single event raises :class:`BadEventError`; a batch keeps going and
    names each refused event's index."""
    try:
        data = orjson.loads(body)
    except orjson.JSONDecodeError as exc:
        raise BadEventError("malformed", f"the body is not JSON: {exc}") from None
    if not batch:
        return Checked(1, [_one(data)], [])
    if not isinstance(data, list):
        raise BadEventError("malformed", "a batch is a JSON array of events")
    events: list[RawEvent] = []
    failed: list[tuple[int, str]] = []
    for index, event in enumerate(data):
        try:
            events.append(_one(event))
        except BadEventError as exc:
            failed.append((index, exc.detail or str(exc)))
    return Checked(len(data), events, failed)


def write(holder: StoreHolder, events: list[RawEvent]) -> AppendResult:
    """The events into the store, committed; a single event takes the store's shortest path."""
    store = holder.get()
    if len(events) == 1:
        added = store.add(events[0])
        return AppendResult(int(added), int(not added), {})
    return store.append(events)


def answer(holder: StoreHolder, body: bytes, batch: bool) -> Answer:
    """The whole work of one request's body, as its :data:`Answer`; never raises for the body or the
    store (a store that cannot be written is logged here, and answered ``unavailable``)."""
    try:
        found = checked(body, batch)
    except BadEventError as exc:
        return {"error": "bad", "detail": exc.detail or str(exc)}
    result = AppendResult(0, 0, {})
    if found.events:
        try:
            result = write(holder, found.events)
        except Exception as exc:
            if isinstance(exc, LineagePlusError):  # the store cannot be written now (StoreUnavailable...)
                log.warning("OpenLineage endpoint: could not store events: %s", exc)
            else:
                log.warning("OpenLineage endpoint: could not store events", exc_info=True)
            return {"error": "unavailable", "detail": "The lineage store cannot be written now"}
    return {
        "received": found.received,
        "stored": result.added,
        "duplicates": result.duplicates,
        "failed": [list(item) for item in found.failed],
    }
