"""The one door every lineage route goes through: who asks, what they may see, within the deadline.

A route of the JSON API never touches the lineage source itself: it declares a :data:`Lineage` parameter
(the FastAPI dependency :func:`reader_lineage`) and asks its question through :meth:`ReaderLineage.ask`.
That is where, for every route, present and future:

* the user is the one :func:`~airflow_lineage_plus.ui.auth.require_lineage_reader` authenticated and
  authorised (401/403 before anything else);
* the DAGs they may read are looked up (:func:`~airflow_lineage_plus.ui.permissions.dag_access`) and the
  question gets a query layer scoped to them (:meth:`LineageQueries.scoped`), so a node, run or DAG they
  may not read is "not found" and never named;
* the question runs in the view's own threads (:class:`~airflow_lineage_plus.ui.pool.QueryPool`) within
  the request's deadline;
* errors become fixed texts: 404 "Not found in the lineage graph"; 503 with ``Retry-After`` for a source
  that is loading, failing or too slow. What failed (a path, a URL, a status) goes to the API server log
  only, never into a response.

``tests/ui/test_lineage_routes.py`` fails for a route under ``/api`` that does not take this dependency.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable
from typing import Annotated, Any, TypeVar

from fastapi import Depends, HTTPException, Request, status

from airflow_lineage_plus.exceptions import DeadlineExceeded, NodeNotFound, SourceLoading, SourceUnavailable
from airflow_lineage_plus.ui import permissions
from airflow_lineage_plus.ui.auth import BUSY, RETRY_AFTER, request_deadline, require_lineage_reader
from airflow_lineage_plus.ui.pool import QueryPool
from airflow_lineage_plus.ui.view_source import LineageReader

log = logging.getLogger(__name__)

T = TypeVar("T")

NOT_FOUND = "Not found in the lineage graph"
UNAVAILABLE = (
    "The lineage source cannot be read right now; try again in a moment. "
    "The Airflow API server's log says why."
)
#: how many distinct failure texts are logged as warnings (later repeats go to DEBUG)
_LOGGED_LIMIT = 200
_logged: set[str] = set()
_logged_lock = threading.Lock()


def _log_once(text: str) -> None:
    with _logged_lock:
        first = text not in _logged and len(_logged) < _LOGGED_LIMIT
        if first:
            _logged.add(text)
    log.log(logging.WARNING if first else logging.DEBUG, "Lineage view: answered 503: %s", text)


def _unavailable(detail: str, retry_after: str = RETRY_AFTER) -> HTTPException:
    return HTTPException(status.HTTP_503_SERVICE_UNAVAILABLE, detail, headers={"Retry-After": retry_after})


class ReaderLineage:
    """The lineage as one authenticated request may see it."""

    def __init__(self, request: Request, user: Any) -> None:
        self._request = request
        self.user = user

    async def ask(self, question: Callable[[Any], T]) -> T:
        """``question(queries)`` with ``queries`` scoped to the user's DAGs, in the view's threads, within
        the request's deadline; errors as fixed texts (see the module docstring)."""
        state = self._request.app.state
        reader: LineageReader = state.lineage_reader
        pool: QueryPool = state.query_pool
        user = self.user

        def work() -> T:
            try:
                access = permissions.dag_access(user)
            except Exception as error:  # fail closed: no permissions read, no lineage shown
                log.exception("Lineage view: could not read the user's DAG permissions")
                raise SourceUnavailable("the auth manager could not list the user's DAGs") from error
            return reader.run(lambda queries: question(queries.scoped(access.predicate())))

        try:
            return await pool.run(work, request_deadline(self._request))
        except NodeNotFound:
            raise HTTPException(status.HTTP_404_NOT_FOUND, NOT_FOUND) from None
        except SourceLoading as loading:  # "Still loading the lineage (N s so far)": no detail to hide
            raise _unavailable(str(loading), retry_after="3") from None
        except DeadlineExceeded as late:
            _log_once(str(late))
            raise _unavailable(BUSY) from None
        except SourceUnavailable as error:
            _log_once(f"{error}")
            raise _unavailable(UNAVAILABLE) from None


async def reader_lineage(
    request: Request, user: Annotated[Any, Depends(require_lineage_reader)]
) -> ReaderLineage:
    """The dependency every lineage route takes (see the module docstring)."""
    return ReaderLineage(request, user)


#: a route parameter of this type is how a route reads lineage
Lineage = Annotated[ReaderLineage, Depends(reader_lineage)]
