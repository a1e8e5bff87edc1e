"""Who is asking: an authenticated Airflow user who may read DAGs, task instances and assets.

Airflow does not protect a plugin's FastAPI app, so every route of the Lineage app depends on
:func:`require_lineage_reader`. The user is resolved exactly as Airflow's own API resolves it, through the
configured auth manager:

* an ``Authorization: Bearer <jwt>`` header wins (API clients);
* else the user already built by Airflow's ``JWTRefreshMiddleware`` from the UI's ``_token`` cookie;
* else the ``_token`` cookie itself (the UI sends it on same-origin requests, the view runs in an iframe
  of the same origin).

No token, an expired, forged or otherwise unreadable token: **401**. A valid user the auth manager does
not allow to read DAGs, their task instances and assets (:func:`.permissions.may_read_lineage`): **403**.
Neither answer carries any lineage data. Which DAGs' lineage the user then sees is
:mod:`airflow_lineage_plus.ui.permissions`' business, applied by :mod:`airflow_lineage_plus.ui.access`.
"""

from __future__ import annotations

import logging
import time
from typing import Any

from fastapi import HTTPException, Request, status

from airflow_lineage_plus import _compat, conf
from airflow_lineage_plus.exceptions import DeadlineExceeded
from airflow_lineage_plus.ui.permissions import may_read_lineage
from airflow_lineage_plus.ui.pool import QueryPool

log = logging.getLogger(__name__)

TOKEN_COOKIE = "_token"
#: seconds a 503 asks the client to wait before asking again
RETRY_AFTER = "5"
BUSY = "The Lineage view is busy or its lineage source is slow right now; try again in a moment."


def request_deadline(request: Request) -> float:
    """The monotonic time ``request`` must be answered by: ``[lineage_plus] ui_request_timeout`` after it
    reached the view (authorisation and the lineage question share it)."""
    deadline = getattr(request.state, "lineage_deadline", None)
    if deadline is None:
        deadline = request.state.lineage_deadline = time.monotonic() + conf.ui_request_timeout()
    return float(deadline)


def _bearer_token(request: Request) -> str | None:
    header = request.headers.get("authorization", "")
    scheme, _, credentials = header.partition(" ")
    if scheme.lower() == "bearer" and credentials.strip():
        return credentials.strip()
    return None


def _user_from_trusted_middleware(request: Request) -> Any | None:
    """The user ``JWTRefreshMiddleware`` built from the cookie, only when Airflow marked it as trusted."""
    marker = _compat.trusted_middleware_marker()
    if marker is None:  # Airflow before 3.3 has no trust marker: validate the cookie ourselves.
        return None
    user = getattr(request.state, "user", None)
    if user is not None and getattr(request.state, "user_authenticated_via", None) is marker:
        return user
    return None


async def _user_from_token(token: str) -> Any:
    from airflow.api_fastapi.app import get_auth_manager
    from jwt import InvalidTokenError

    try:
        return await get_auth_manager().get_user_from_token(token)
    except InvalidTokenError as error:  # expired, bad signature, wrong audience, revoked...: all mean "who?"
        log.info("Lineage view: rejected a token (%s)", type(error).__name__)
    except (
        Exception
    ):  # the auth manager could not check it (its database, say): fail closed, say why in the log
        log.warning("Lineage view: could not validate a token; refusing the request", exc_info=True)
    raise HTTPException(status.HTTP_401_UNAUTHORIZED, "Not authenticated")


async def require_lineage_reader(request: Request) -> Any:
    """FastAPI dependency of every Lineage route: the user, or 401/403 with no data."""
    request_deadline(request)  # the clock starts now
    token = _bearer_token(request)
    if token is not None:
        user = await _user_from_token(token)
    else:
        user = _user_from_trusted_middleware(request)
        if user is None:
            cookie = request.cookies.get(TOKEN_COOKIE)
            if not cookie:
                raise HTTPException(status.HTTP_401_UNAUTHORIZED, "Not authenticated")
            user = await _user_from_token(cookie)
    try:  # in the view's own threads: an auth manager may ask a database or a server (Keycloak)
        pool: QueryPool = request.app.state.query_pool
        allowed = await pool.run(lambda: may_read_lineage(user), request_deadline(request), "authorisation")
    except DeadlineExceeded:
        raise HTTPException(
            status.HTTP_503_SERVICE_UNAVAILABLE, BUSY, headers={"Retry-After": RETRY_AFTER}
        ) from None
    except Exception:
        log.exception("Lineage view: the auth manager failed to authorise a request; denying it")
        allowed = False
    if not allowed:
        raise HTTPException(status.HTTP_403_FORBIDDEN, "Forbidden")
    return user
