"""The ASGI app the plugin hands to Airflow; it builds the real FastAPI apps on the first request.

Airflow imports plugins in every process, task processes included. Importing FastAPI there would cost
each task about half a second for a page only the API server serves, so the apps are built lazily, once,
on the API server. Two apps share the ``/lineage-plus`` prefix: the OpenLineage endpoint
(:mod:`airflow_lineage_plus.ui.collector`, ``/api/v1/lineage...``, for producers) and the Lineage view
(:mod:`airflow_lineage_plus.ui.view_app`, everything else, for readers).
"""

from __future__ import annotations

import threading
from typing import Any

URL_PREFIX = "/lineage-plus"
COLLECTOR_PATH = "/api/v1/lineage"


def _route_path(scope: Any) -> str:
    """The path below the mount (Starlette keeps the full path and puts the prefix in ``root_path``)."""
    path = str(scope.get("path", ""))
    root = str(scope.get("root_path", ""))
    return path[len(root) :] if root and path.startswith(root) else path


class LineageApp:
    """ASGI callable standing for the view's and the collector's apps."""

    def __init__(self) -> None:
        self._app: Any = None
        self._collector: Any = None
        self._lock = threading.Lock()

    def build(self) -> Any:
        """The view's FastAPI app, created on first use."""
        if self._app is None:
            with self._lock:
                if self._app is None:
                    from airflow_lineage_plus.ui.view_app import create_app

                    self._app = create_app()
        return self._app

    def build_collector(self) -> Any:
        """The OpenLineage endpoint's FastAPI app, created on first use."""
        if self._collector is None:
            with self._lock:
                if self._collector is None:
                    from airflow_lineage_plus.ui.collector import create_collector_app

                    self._collector = create_collector_app()
        return self._collector

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        path = _route_path(scope)
        if scope.get("type") == "http" and (path == COLLECTOR_PATH or path.startswith(COLLECTOR_PATH + "/")):
            await self.build_collector()(scope, receive, send)
            return
        await self.build()(scope, receive, send)
