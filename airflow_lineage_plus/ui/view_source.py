"""The one lineage query layer a Lineage app reads through: the same ``LineageQueries`` the CLI uses.

It is opened on first use from ``[lineage_plus]`` configuration (the lineage store, the event log, or
Marquez) and kept for the life of the app. Before each request the source picks up what was added since
(new rows of the store, lines appended to the log: an incremental, cheap read; no GC freezing or pausing
for it, so the server's memory stays flat); the graph layer does the rest. The source guards its own
shared state (the graph is locked while it is read or refreshed); Marquez questions run side by side.

The first load of a large store or log takes a while (minutes for ten million events). It happens in a
background thread: a request that comes while it loads waits a little, then gets ``SourceLoading`` ("still
loading", answered 503) instead of holding a server thread for minutes; the page retries.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from typing import Any, TypeVar

from airflow_lineage_plus.exceptions import SourceLoading
from airflow_lineage_plus.graph import LineageQueries
from airflow_lineage_plus.sources import open_configured_source

T = TypeVar("T")

#: How long a request waits for the source to open before answering "still loading".
OPEN_WAIT_SECONDS = 3.0


def open_configured_queries() -> LineageQueries:
    """A ``LineageQueries`` over the source ``[lineage_plus] graph_source`` names."""
    return LineageQueries(open_configured_source(explain_missing_log=True))


class LineageReader:
    """Lazily opened (in the background), shared, refreshed-per-request access to the query layer."""

    def __init__(
        self, opener: Callable[[], Any] = open_configured_queries, open_wait: float = OPEN_WAIT_SECONDS
    ) -> None:
        self._opener = opener
        self._open_wait = open_wait
        self._queries: Any | None = None
        self._opening: threading.Thread | None = None
        self._opened_since = 0.0
        self._open_error: BaseException | None = None
        self._state = threading.Lock()  # guards the opening fields

    def _open(self) -> None:
        try:
            queries = self._opener()
        except BaseException as error:
            with self._state:
                self._open_error = error
                self._opening = None
            return
        with self._state:
            self._queries = queries
            self._opening = None

    def _opened(self) -> Any:
        """The queries once open; starts or waits for the opening; raises what opening raised."""
        with self._state:
            if self._queries is not None:
                return self._queries
            if self._open_error is not None:  # report it once, then try again on the next request
                error, self._open_error = self._open_error, None
                raise error
            if self._opening is None:
                self._opened_since = time.monotonic()
                self._opening = threading.Thread(target=self._open, name="lineage-plus-open", daemon=True)
                self._opening.start()
            opening = self._opening
        opening.join(self._open_wait)
        with self._state:
            if self._queries is not None:
                return self._queries
            if self._open_error is not None:
                error, self._open_error = self._open_error, None
                raise error
            waited = time.monotonic() - self._opened_since
        raise SourceLoading(f"Still loading the lineage ({waited:.0f} s so far); try again in a moment.")

    @staticmethod
    def _refresh(queries: Any) -> None:
        refresh = getattr(getattr(queries, "source", None), "refresh", None)
        if callable(refresh):
            refresh()

    def run(self, query: Callable[[Any], T]) -> T:
        """Run ``query(queries)`` on fresh data; ``SourceUnavailable`` while it cannot be read."""
        queries = self._opened()
        self._refresh(queries)
        return query(queries)
