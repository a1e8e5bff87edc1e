"""The OpenLineage endpoint of the API server: producers' events into the lineage store.

``POST /lineage-plus/api/v1/lineage`` takes one RunEvent, JobEvent or DatasetEvent, as OpenLineage's
``http`` transport and Marquez speak it, and answers 202 once it is in the store.
``POST /lineage-plus/api/v1/lineage/batch`` takes a JSON array of them (the spec's ``/lineage/batch``,
OpenLineage#4109) and answers 200 with the spec's processing details: ``status`` (``success`` or
``partial_success``), ``summary`` and ``failed_events`` (``index``, ``reason``, ``retriable``), so one bad
event does not refuse the others. In order:

1. a place in the endpoint's queue (:mod:`.ingest_queue`, ``[lineage_plus] collector_queue_size`` events):
   full, 429 with ``Retry-After``;
2. who writes (:mod:`.ingest_auth`): 401/403 before the body is read;
3. the body (:mod:`.request_body`), at most ``[lineage_plus] collector_max_bytes``, gzip or not: 413;
4. in one of the queue's threads: the JSON, each event's required shape (:mod:`.event_shape`; a single
   event: 400 naming the field) and the event budget (:func:`airflow_lineage_plus.deliver.event_budget.
   check`: values policy, limits, redaction; an event that cannot be checked is refused, fail closed);
5. the request counted as its number of events in the queue (429 past the capacity);
6. :meth:`LineageStore.add` (one event) or :meth:`LineageStore.append` (a batch) in one of the queue's
   threads; the answer once that committed. A store that cannot be written answers 503 with
   ``Retry-After``, and nothing of the request is claimed stored.

The app is separate from the Lineage view's (which only reads, for readers):
:class:`airflow_lineage_plus.ui.mount.LineageApp` sends ``/api/v1/lineage...`` here.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import AsyncIterator
from typing import Annotated, Any

import attrs
import orjson
from fastapi import APIRouter, Depends, FastAPI, HTTPException, Request, status
from fastapi.responses import JSONResponse

from airflow_lineage_plus import conf
from airflow_lineage_plus.deliver.event_budget import check
from airflow_lineage_plus.exceptions import BadEventError, BodyTooLargeError, LineagePlusError
from airflow_lineage_plus.store import RawEvent, raw_event
from airflow_lineage_plus.store.database import AppendResult, LineageStore
from airflow_lineage_plus.ui.event_shape import check_shape
from airflow_lineage_plus.ui.ingest_auth import require_ingest
from airflow_lineage_plus.ui.ingest_queue import RETRY_AFTER, IngestQueue, Ticket
from airflow_lineage_plus.ui.request_body import read_body

log = logging.getLogger(__name__)

ENDPOINT = "/api/v1/lineage"
BATCH_ENDPOINT = "/api/v1/lineage/batch"


class StoreHolder:
    """The configured lineage store, opened on first write (in a thread) and kept for the process."""

    def __init__(self, store: LineageStore | None = None) -> None:
        self._store = store
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


def _checked(body: bytes, batch: bool) -> Checked:
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
            failed.append((index, str(exc).partition(": ")[2] or str(exc)))
    return Checked(len(data), events, failed)


def _write(holder: StoreHolder, events: list[RawEvent]) -> AppendResult:
    """The events into the store, committed; a single event takes the store's shortest path."""
    store = holder.get()
    if len(events) == 1:
        added = store.add(events[0])
        return AppendResult(int(added), int(not added), {})
    return store.append(events)


def _unavailable(exc: Exception) -> HTTPException:
    if isinstance(exc, LineagePlusError):  # the store cannot be written now (StoreUnavailable...)
        log.warning("OpenLineage endpoint: could not store events: %s", exc)
    else:
        log.warning("OpenLineage endpoint: could not store events", exc_info=True)
    return HTTPException(
        status.HTTP_503_SERVICE_UNAVAILABLE,
        "The lineage store cannot be written now",
        headers={"Retry-After": RETRY_AFTER},
    )


async def _ingest(request: Request, ticket: Ticket, batch: bool) -> tuple[Checked, AppendResult]:
    queue: IngestQueue = request.app.state.ingest_queue
    try:
        body = await read_body(request, conf.collector_max_bytes())
        checked = await queue.run(_checked, body, batch)
    except BodyTooLargeError as exc:
        raise HTTPException(status.HTTP_413_REQUEST_ENTITY_TOO_LARGE, str(exc)) from None
    except BadEventError as exc:
        raise HTTPException(status.HTTP_400_BAD_REQUEST, str(exc).partition(": ")[2] or str(exc)) from None
    if not checked.events:
        return checked, AppendResult(0, 0, {})
    ticket.resize(len(checked.events))
    try:
        result = await queue.run(_write, request.app.state.store, checked.events)
    except Exception as exc:
        raise _unavailable(exc) from None
    return checked, result


async def admitted(request: Request) -> AsyncIterator[Ticket]:
    """FastAPI dependency, the endpoint's first: a place in the queue for the whole request, or 429."""
    queue: IngestQueue = request.app.state.ingest_queue
    ticket = queue.admit()
    try:
        yield ticket
    finally:
        ticket.release()


router = APIRouter(dependencies=[Depends(admitted), Depends(require_ingest)])


@router.post(ENDPOINT, status_code=status.HTTP_202_ACCEPTED)
async def lineage(request: Request, ticket: Annotated[Ticket, Depends(admitted)]) -> JSONResponse:
    """One OpenLineage event; 202 once it is in the store."""
    checked, result = await _ingest(request, ticket, batch=False)
    content = {"received": checked.received, "stored": result.added, "duplicates": result.duplicates}
    return JSONResponse(content, status_code=status.HTTP_202_ACCEPTED)


@router.post(BATCH_ENDPOINT, status_code=status.HTTP_200_OK)
async def lineage_batch(request: Request, ticket: Annotated[Ticket, Depends(admitted)]) -> JSONResponse:
    """A JSON array of OpenLineage events; once every acceptable one is in the store, 200 with the spec's
    ``status``, ``summary`` and ``failed_events`` (an event refused: its index, why, ``retriable`` false)."""
    checked, result = await _ingest(request, ticket, batch=True)
    failed = len(checked.failed)
    summary = {
        "received": checked.received,
        "successful": checked.received - failed,
        "failed": failed,
        "retriable": 0,
        "non_retriable": failed,
        # beyond the spec: of the successful, how many were new and how many the store had already
        "stored": result.added,
        "duplicates": result.duplicates,
    }
    content = {
        "status": "partial_success" if failed else "success",
        "summary": summary,
        "failed_events": [
            {"index": index, "reason": reason, "retriable": False} for index, reason in checked.failed
        ],
    }
    return JSONResponse(content, status_code=status.HTTP_200_OK)


def create_collector_app(store: LineageStore | None = None) -> FastAPI:
    """The endpoint's app; ``store`` defaults to ``[lineage_plus] store_url``, opened on first write."""
    app = FastAPI(title="Airflow Lineage Plus collector", docs_url=None, redoc_url=None, openapi_url=None)
    app.state.ingest_queue = IngestQueue(conf.collector_queue_size(), conf.collector_max_writes())
    app.state.store = StoreHolder(store)
    app.include_router(router)
    return app
