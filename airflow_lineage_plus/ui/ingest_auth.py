"""Who may write lineage through the OpenLineage endpoint: an Airflow user allowed to, or the ingest key.

Two credentials, both resolved by Airflow, never read from the event:

* **a token of the auth manager** (``Authorization: Bearer <jwt>``, what ``/auth/token`` gives, as
  Airflow's own REST API takes it), whose user the auth manager allows ``POST`` on the custom view
  :data:`INGEST_RESOURCE` (``is_authorized_custom_view``). Under FAB that is the permission
  ``can_create`` on ``Lineage Plus Ingest`` that an admin grants to a role; the Simple auth manager
  grants custom views to every user of role Viewer and above (docs/collector.md);
* **the ingest key**: the password of the Airflow connection ``[lineage_plus] collector_connection_id``,
  sent as ``Authorization: Bearer <key>`` (the OpenLineage client's ``api_key`` auth) or in the
  ``X-Lineage-Plus-Key`` header, compared in constant time.

No credential, or an unreadable/forged one: 401. A user without the permission: 403. Both before the
body is read, so nothing of such a request is stored. The blocking steps (reading the connection, the
auth manager's check) run in the endpoint's own threads (:class:`~.ingest_queue.IngestQueue`, on
``request.app.state.ingest_queue``), never in the thread pool Airflow's routes share; a key read less than
30 s ago is compared without a thread.
"""

from __future__ import annotations

import hmac
import logging
from typing import Any

from fastapi import HTTPException, Request, status

from airflow_lineage_plus import conf
from airflow_lineage_plus.deliver.ingest_key import cached_ingest_key
from airflow_lineage_plus.deliver.ingest_key import ingest_key as shared_ingest_key
from airflow_lineage_plus.ui.ingest_queue import IngestQueue

log = logging.getLogger(__name__)

INGEST_RESOURCE = "Lineage Plus Ingest"
KEY_HEADER = "x-lineage-plus-key"
INGEST_KEY_USER = "ingest-key"


def ingest_key() -> str | None:
    """The ingest key (:mod:`airflow_lineage_plus.deliver.ingest_key`); None when it cannot be read now (fail
    closed: a key request is refused), with a warning saying why."""
    try:
        return shared_ingest_key()
    except Exception:  # a secrets backend down
        conn_id = conf.collector_connection_id()
        log.warning("OpenLineage endpoint: could not read connection %s", conn_id, exc_info=True)
        return None


def _presented(request: Request) -> tuple[str | None, str | None]:
    """(key header, bearer credentials) of the request."""
    scheme, _, credentials = request.headers.get("authorization", "").partition(" ")
    bearer = credentials.strip() if scheme.lower() == "bearer" and credentials.strip() else None
    return request.headers.get(KEY_HEADER), bearer


def _matches(presented: str, key: str | None) -> bool:
    return key is not None and hmac.compare_digest(presented.encode(), key.encode())


def may_ingest(user: Any) -> bool:
    """Whether the auth manager lets ``user`` write lineage (``POST`` on :data:`INGEST_RESOURCE`)."""
    from airflow.api_fastapi.app import get_auth_manager

    return bool(
        get_auth_manager().is_authorized_custom_view(method="POST", resource_name=INGEST_RESOURCE, user=user)
    )


async def _user_of(token: str) -> Any:
    from airflow.api_fastapi.app import get_auth_manager
    from jwt import InvalidTokenError

    try:
        return await get_auth_manager().get_user_from_token(token)
    except InvalidTokenError as error:
        log.info("OpenLineage endpoint: rejected a token (%s)", type(error).__name__)
    except Exception:
        log.warning("OpenLineage endpoint: could not validate a token; refusing", exc_info=True)
    raise HTTPException(status.HTTP_401_UNAUTHORIZED, "Not authenticated")


async def require_ingest(request: Request) -> str:
    """FastAPI dependency of the endpoint: who writes (``ingest-key`` or the user's name), else 401/403."""
    header, bearer = _presented(request)
    if header is None and bearer is None:
        raise HTTPException(status.HTTP_401_UNAUTHORIZED, "Not authenticated")
    threads: IngestQueue = request.app.state.ingest_queue
    fresh, key = cached_ingest_key()
    if not fresh:
        key = await threads.run(ingest_key)
    if header is not None:
        if _matches(header, key):
            return INGEST_KEY_USER
        raise HTTPException(status.HTTP_401_UNAUTHORIZED, "Not authenticated")
    assert bearer is not None
    if _matches(bearer, key):
        return INGEST_KEY_USER
    user = await _user_of(bearer)
    try:
        allowed = await threads.run(may_ingest, user)
    except Exception:
        log.exception("OpenLineage endpoint: the auth manager failed to authorise a write; denying it")
        allowed = False
    if not allowed:
        raise HTTPException(status.HTTP_403_FORBIDDEN, "Forbidden: writing lineage needs " + INGEST_RESOURCE)
    return str(getattr(user, "get_name", lambda: "user")())
