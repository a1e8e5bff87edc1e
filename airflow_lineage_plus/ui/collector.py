"""The OpenLineage endpoint of the API server: producers' events into the lineage store.

``POST /lineage-plus/api/v1/lineage`` takes one RunEvent, JobEvent or DatasetEvent, as OpenLineage's
``http`` transport and Marquez speak it; ``POST /lineage-plus/api/v1/lineage/batch`` takes a JSON array
of them (the spec's ``/lineage/batch``; all or nothing: one bad event refuses the batch). In order:

1. who writes (:mod:`.ingest_auth`): 401/403 before the body is read;
2. a write slot (``[lineage_plus] collector_max_writes`` at once): none free, 429 with ``Retry-After``;
3. the body (:mod:`.request_body`), at most ``[lineage_plus] collector_max_bytes``, gzip or not: 413;
4. each event's required shape (:mod:`.event_shape`): 400 naming the field;
5. the event budget (:func:`airflow_lineage_plus.deliver.event_budget.check`: values policy, limits,
   redaction), then :meth:`LineageStore.append`, both in a thread, off the event loop;
6. **202** once the append committed; a store that cannot be written answers 503 with ``Retry-After``.

The app is separate from the Lineage view's (which only reads, for readers):
:class:`airflow_lineage_plus.ui.mount.LineageApp` sends ``/api/v1/lineage...`` here.
"""

from __future__ import annotations

import logging
import threading
from typing import Any

import orjson
from fastapi import APIRouter, Depends, FastAPI, HTTPException, Request, status
from fastapi.responses import JSONResponse
from starlette.concurrency import run_in_threadpool

from airflow_lineage_plus import conf
from airflow_lineage_plus.deliver.event_budget import check
from airflow_lineage_plus.exceptions import BadEventError, BodyTooLargeError, LineagePlusError
from airflow_lineage_plus.store import raw_event
from airflow_lineage_plus.store.database import AppendResult, LineageStore
from airflow_lineage_plus.ui.event_shape import check_shape
from airflow_lineage_plus.ui.ingest_auth import require_ingest
from airflow_lineage_plus.ui.request_body import read_body

log = logging.getLogger(__name__)

ENDPOINT = "/api/v1/lineage"
BATCH_ENDPOINT = "/api/v1/lineage/batch"
#: seconds a 429 or 503 asks the producer to wait
RETRY_AFTER = "1"


class WriteSlots:
    """At most ``size`` requests writing at once; one more is refused at once (never queued unbounded)."""

    def __init__(self, size: int) -> None:
        self.size = size
        self.busy = 0  # touched only on the event loop

    def take(self) -> None:
        """Take a slot, or 429 with ``Retry-After``."""
        if self.busy >= self.size:
            raise HTTPException(
                status.HTTP_429_TOO_MANY_REQUESTS,
                "The lineage endpoint is at its limit of concurrent writes; retry later",
                headers={"Retry-After": RETRY_AFTER},
            )
        self.busy += 1

    def give(self) -> None:
        self.busy -= 1


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


def _events(body: bytes, batch: bool) -> list[Any]:
    try:
        data = orjson.loads(body)
    except orjson.JSONDecodeError as exc:
        raise BadEventError("malformed", f"the body is not JSON: {exc}") from None
    if not batch:
        return [data]
    if not isinstance(data, list):
        raise BadEventError("malformed", "a batch is a JSON array of events")
    return data


def _checked(events: list[Any], batch: bool) -> list[bytes]:
    """Each event's shape checked (400 names ``[index].field`` in a batch), then budgeted and redacted."""
    for index, event in enumerate(events):
        try:
            check_shape(event)
        except BadEventError as exc:
            if batch:
                raise BadEventError(exc.kind, f"[{index}].{str(exc).partition(': ')[2]}") from None
            raise
    lines = []
    for index, event in enumerate(events):
        try:
            lines.append(check(event))
        except Exception as exc:  # fail closed, and a 400: a client retries a 5xx forever
            where = f"[{index}]: " if batch else ""
            raise BadEventError(
                "unchecked", f"{where}the event could not be checked for secrets ({type(exc).__name__})"
            ) from None
    return lines


def _store(holder: StoreHolder, events: list[Any], batch: bool) -> tuple[int, AppendResult]:
    lines = _checked(events, batch)
    store = holder.get()
    if len(lines) == 1:  # one event: the store's shortest path (the transport's)
        added = store.add(raw_event(lines[0]))
        return 1, AppendResult(int(added), int(not added), {})
    return len(lines), store.append(lines)


async def _ingest(request: Request, batch: bool) -> JSONResponse:
    slots: WriteSlots = request.app.state.write_slots
    slots.take()
    try:
        body = await read_body(request, conf.collector_max_bytes())
        events = _events(body, batch)
        received, result = await run_in_threadpool(_store, request.app.state.store, events, batch)
    except BodyTooLargeError as exc:
        raise HTTPException(status.HTTP_413_REQUEST_ENTITY_TOO_LARGE, str(exc)) from None
    except BadEventError as exc:
        raise HTTPException(status.HTTP_400_BAD_REQUEST, str(exc).partition(": ")[2] or str(exc)) from None
    except LineagePlusError as exc:  # the store cannot be written now (StoreUnavailable...)
        log.warning("OpenLineage endpoint: could not store events: %s", exc)
        raise HTTPException(
            status.HTTP_503_SERVICE_UNAVAILABLE,
            "The lineage store cannot be written now",
            headers={"Retry-After": RETRY_AFTER},
        ) from None
    finally:
        slots.give()
    content = {"received": received, "stored": result.added, "duplicates": result.duplicates}
    return JSONResponse(content, status_code=status.HTTP_202_ACCEPTED)


router = APIRouter(dependencies=[Depends(require_ingest)])


@router.post(ENDPOINT, status_code=status.HTTP_202_ACCEPTED)
async def lineage(request: Request) -> JSONResponse:
    """One OpenLineage event; 202 once it is in the store."""
    return await _ingest(request, batch=False)


@router.post(BATCH_ENDPOINT, status_code=status.HTTP_202_ACCEPTED)
async def lineage_batch(request: Request) -> JSONResponse:
    """A JSON array of OpenLineage events; 202 once all are stored; one bad: 400, none stored."""
    return await _ingest(request, batch=True)


def create_collector_app(store: LineageStore | None = None) -> FastAPI:
    """The endpoint's app; ``store`` defaults to ``[lineage_plus] store_url``, opened on first write."""
    app = FastAPI(title="Airflow Lineage Plus collector", docs_url=None, redoc_url=None, openapi_url=None)
    app.state.write_slots = WriteSlots(conf.collector_max_writes())
    app.state.store = StoreHolder(store)
    app.include_router(router)
    return app
