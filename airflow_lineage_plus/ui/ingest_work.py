"""What the OpenLineage endpoint does with a request's body: check its events, then store them.

This is the blocking work of a request, done in the endpoint's writer process
(:mod:`.ingest_process`), never in the API server's own: the JSON, each event's required shape
(:mod:`.event_shape`; a single event: 400 naming the field), the event budget
(:func:`airflow_lineage_plus.deliver.event_budget.check`: values policy, limits, redaction; an event that
cannot be checked is refused, fail closed), then :meth:`LineageStore.add_all`, one transaction for a
group of requests. :func:`answer` gives each request's outcome as the plain dict that goes back to the
API server (:data:`Answer`).
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from typing import Any

import attrs
import orjson

from airflow_lineage_plus.deliver.event_budget import check
from airflow_lineage_plus.exceptions import BadEventError, LineagePlusError
from airflow_lineage_plus.store import RawEvent, raw_event
from airflow_lineage_plus.store.database import LineageStore
from airflow_lineage_plus.ui.event_shape import check_shape

log = logging.getLogger(__name__)

#: what a request's work answers: ``{"received", "stored", "duplicates", "failed": [[index, reason]]}``,
#: or ``{"error": "bad" | "unavailable", "detail": ...}`` (the endpoint's 400 and 503)
Answer = dict[str, Any]


class StoreHolder:
    """The configured lineage store, opened on first write and kept for the process (the writer
    process's one thread)."""

    def __init__(self) -> None:
        self._store: LineageStore | None = None

    def get(self) -> LineageStore:
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


#: what a request's work answers when the store cannot take its events now
UNAVAILABLE: Answer = {"error": "unavailable", "detail": "The lineage store cannot be written now"}


def write(holder: StoreHolder, requests: list[Checked]) -> list[list[bool] | None]:
    """The requests' events into the store in one transaction, committed: for each request, whether each
    of its events was new, or None when the store could not take them (logged here). A group that failed
    for another reason than the store is written again one request at a time, so one request's events
    cannot refuse the others'."""
    if not requests:
        return []
    try:
        new = holder.get().add_all([event for request in requests for event in request.events])
    except LineagePlusError as exc:  # the store cannot be written now (StoreUnavailable...)
        log.warning("OpenLineage endpoint: could not store events: %s", exc)
        return [None] * len(requests)
    except Exception:
        if len(requests) > 1:
            return [flags for request in requests for flags in write(holder, [request])]
        log.warning("OpenLineage endpoint: could not store events", exc_info=True)
        return [None]
    split: list[list[bool] | None] = []
    for request in requests:
        split.append(new[: len(request.events)])
        new = new[len(request.events) :]
    return split


def answer(holder: StoreHolder, requests: Sequence[tuple[bytes, bool]]) -> list[Answer]:
    """The whole work of a group of requests (body, batch or not): one :data:`Answer` each, their events
    stored in one transaction (group commit: one commit for all the requests that came while the last
    group was written). Never raises for a body or the store: a store that cannot be written is logged,
    and each request with events in the group is answered ``unavailable``."""
    found: list[Checked | Answer] = []
    for body, batch in requests:
        try:
            found.append(checked(body, batch))
        except BadEventError as exc:
            found.append({"error": "bad", "detail": exc.detail or str(exc)})
    storing = [item for item in found if isinstance(item, Checked) and item.events]
    written = dict(zip(map(id, storing), write(holder, storing), strict=True))
    answers: list[Answer] = []
    for item in found:
        if not isinstance(item, Checked):
            answers.append(item)
            continue
        flags = written.get(id(item), [])
        if flags is None:
            answers.append(UNAVAILABLE)
            continue
        answers.append(
            {
                "received": item.received,
                "stored": sum(flags),
                "duplicates": len(flags) - sum(flags),
                "failed": [list(failed) for failed in item.failed],
            }
        )
    return answers
