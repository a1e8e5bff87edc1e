"""The ASGI app the plugin hands to Airflow; it builds the real FastAPI app on the first request.

Airflow imports plugins in every process, task processes included. Importing FastAPI there would cost
each task about half a second for a page only the API server serves, so the app is built lazily, once,
on the API server.
"""

from __future__ import annotations

import threading
from typing import Any

URL_PREFIX = "/lineage-plus"


class LineageApp:
    """ASGI callable standing for :func:`airflow_lineage_plus.ui.view_app.create_app`'s app."""

    def __init__(self) -> None:
        self._app: Any = None
        self._lock = threading.Lock()

    def build(self) -> Any:
        """The FastAPI app, created on first use."""
        if self._app is None:
            with self._lock:
                if self._app is None:
                    from airflow_lineage_plus.ui.view_app import create_app

                    self._app = create_app()
        return self._app

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        await self.build()(scope, receive, send)
