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
4. the request counted as its number of events in the queue (429 past the capacity);
5. in the endpoint's writer process (:mod:`.ingest_process`, out of the API server's process): the JSON,
   each event's required shape (:mod:`.event_shape`; a single event: 400 naming the field), the event
   budget (values policy, limits, redaction; an event that cannot be checked is refused, fail closed),
   then :meth:`LineageStore.add_all`, one transaction for the requests that came together
   (:mod:`.ingest_work`); the answer once that committed. A store that cannot be written, or a writer
   process that exited, answers 503 with ``Retry-After``, and nothing of the request is claimed stored.

The app is separate from the Lineage view's (which only reads, for readers):
:class:`airflow_lineage_plus.ui.mount.LineageApp` sends ``/api/v1/lineage...`` here.
"""

from __future__ import annotations

import logging
from collections.abc import AsyncIterator
from typing import Annotated

from fastapi import APIRouter, Depends, FastAPI, HTTPException, Request, status
from fastapi.responses import JSONResponse

from airflow_lineage_plus import conf
from airflow_lineage_plus.exceptions import BadEventError, BodyTooLargeError, StoreUnavailable
from airflow_lineage_plus.ui.ingest_auth import require_ingest
from airflow_lineage_plus.ui.ingest_process import IngestProcess
from airflow_lineage_plus.ui.ingest_queue import RETRY_AFTER, IngestQueue, Ticket
from airflow_lineage_plus.ui.ingest_work import Answer
from airflow_lineage_plus.ui.request_body import read_body

log = logging.getLogger(__name__)

ENDPOINT = "/api/v1/lineage"
BATCH_ENDPOINT = "/api/v1/lineage/batch"


def _count(body: bytes, batch: bool) -> int:
    """About how many events the body carries, for the queue, without parsing it here (the writer process
    does): a batch counts its ``"eventTime"`` keys, never fewer than its valid events."""
    return max(1, body.count(b'"eventTime"')) if batch else 1


def _unavailable(exc: Exception) -> HTTPException:
    log.warning("OpenLineage endpoint: could not store events: %s", exc)
    return HTTPException(
        status.HTTP_503_SERVICE_UNAVAILABLE,
        "The lineage store cannot be written now",
        headers={"Retry-After": RETRY_AFTER},
    )


async def _ingest(request: Request, ticket: Ticket, batch: bool) -> Answer:
    try:
        body = await read_body(request, conf.collector_max_bytes())
    except BodyTooLargeError as exc:
        raise HTTPException(status.HTTP_413_REQUEST_ENTITY_TOO_LARGE, str(exc)) from None
    except BadEventError as exc:
        raise HTTPException(status.HTTP_400_BAD_REQUEST, exc.detail or str(exc)) from None
    ticket.resize(_count(body, batch))
    process: IngestProcess = request.app.state.ingest_process
    try:
        answer = await process.submit(body, batch)
    except StoreUnavailable as exc:
        raise _unavailable(exc) from None
    if answer.get("error") == "bad":
        raise HTTPException(status.HTTP_400_BAD_REQUEST, answer["detail"])
    if "error" in answer:  # the writer process logged why
        raise HTTPException(
            status.HTTP_503_SERVICE_UNAVAILABLE, answer["detail"], headers={"Retry-After": RETRY_AFTER}
        )
    return answer


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
    answer = await _ingest(request, ticket, batch=False)
    content = {key: answer[key] for key in ("received", "stored", "duplicates")}
    return JSONResponse(content, status_code=status.HTTP_202_ACCEPTED)


@router.post(BATCH_ENDPOINT, status_code=status.HTTP_200_OK)
async def lineage_batch(request: Request, ticket: Annotated[Ticket, Depends(admitted)]) -> JSONResponse:
    """A JSON array of OpenLineage events; once every acceptable one is in the store, 200 with the spec's
    ``status``, ``summary`` and ``failed_events`` (an event refused: its index, why, ``retriable`` false)."""
    answer = await _ingest(request, ticket, batch=True)
    failed = len(answer["failed"])
    summary = {
        "received": answer["received"],
        "successful": answer["received"] - failed,
        "failed": failed,
        "retriable": 0,
        "non_retriable": failed,
        # beyond the spec: of the successful, how many were new and how many the store had already
        "stored": answer["stored"],
        "duplicates": answer["duplicates"],
    }
    content = {
        "status": "partial_success" if failed else "success",
        "summary": summary,
        "failed_events": [
            {"index": index, "reason": reason, "retriable": False} for index, reason in answer["failed"]
        ],
    }
    return JSONResponse(content, status_code=status.HTTP_200_OK)


def create_collector_app() -> FastAPI:
    """The endpoint's app; its writer process writes ``[lineage_plus] store_url``."""
    app = FastAPI(title="Airflow Lineage Plus collector", docs_url=None, redoc_url=None, openapi_url=None)
    app.state.ingest_queue = IngestQueue(conf.collector_queue_size(), conf.collector_max_writes())
    app.state.ingest_process = IngestProcess()
    app.include_router(router)
    return app
