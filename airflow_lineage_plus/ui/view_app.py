"""The Lineage view's FastAPI app: the page, its static files and the JSON API, all behind Airflow auth.

Airflow mounts it under ``/lineage-plus`` through the plugin's ``fastapi_apps``. Every route depends on
:func:`airflow_lineage_plus.ui.auth.require_lineage_reader`; every route that reads lineage also goes
through :mod:`airflow_lineage_plus.ui.access` (the user's DAGs, the view's own threads, the deadline).
Every route is ``async``: nothing here waits in the API server's shared thread pool. There is no
OpenAPI/docs route. The page is a fixed file (no server-side templating) and static files are served
from an allowlist, never by path.
"""

from __future__ import annotations

import functools
from collections.abc import Awaitable, Callable
from importlib import resources

from fastapi import APIRouter, Depends, FastAPI, HTTPException, Request, Response, status

from airflow_lineage_plus import conf
from airflow_lineage_plus.ui import api
from airflow_lineage_plus.ui.auth import require_lineage_reader
from airflow_lineage_plus.ui.pool import QueryPool
from airflow_lineage_plus.ui.view_source import LineageReader

#: The only files the app serves besides the page, with their media types.
STATIC_FILES = {
    "main.js": "text/javascript; charset=utf-8",
    "api.js": "text/javascript; charset=utf-8",
    "dom.js": "text/javascript; charset=utf-8",
    "edges.js": "text/javascript; charset=utf-8",
    "export.js": "text/javascript; charset=utf-8",
    "groups.js": "text/javascript; charset=utf-8",
    "layout.js": "text/javascript; charset=utf-8",
    "links.js": "text/javascript; charset=utf-8",
    "panel.js": "text/javascript; charset=utf-8",
    "panel-dataset.js": "text/javascript; charset=utf-8",
    "panel-job.js": "text/javascript; charset=utf-8",
    "panzoom.js": "text/javascript; charset=utf-8",
    "render.js": "text/javascript; charset=utf-8",
    "search.js": "text/javascript; charset=utf-8",
    "state.js": "text/javascript; charset=utf-8",
    "store.js": "text/javascript; charset=utf-8",
    "task-instance.js": "text/javascript; charset=utf-8",
    "widgets.js": "text/javascript; charset=utf-8",
    "timeline.js": "text/javascript; charset=utf-8",
    "columns.js": "text/javascript; charset=utf-8",
    "impact.js": "text/javascript; charset=utf-8",
    "schema.js": "text/javascript; charset=utf-8",
    "sequence.js": "text/javascript; charset=utf-8",
    "attention.js": "text/javascript; charset=utf-8",
    "what-changed.js": "text/javascript; charset=utf-8",
    "lineage.css": "text/css; charset=utf-8",
    "lineage.svg": "image/svg+xml",
}

CONTENT_SECURITY_POLICY = (
    "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; "
    "base-uri 'none'; form-action 'none'; frame-ancestors 'self'"
)


@functools.cache
def _static_text(name: str) -> str:
    """A file of ``static/`` (read once: they only change with the package)."""
    return (
        resources.files("airflow_lineage_plus.ui")
        .joinpath("static")
        .joinpath(name)
        .read_text(encoding="utf-8")
    )


page_router = APIRouter()


@page_router.get("/", include_in_schema=False)
async def page() -> Response:
    """The single page; it reads everything it shows from the JSON API."""
    return Response(_static_text("index.html"), media_type="text/html; charset=utf-8")


@page_router.get("/static/{name}", include_in_schema=False)
async def static_file(name: str) -> Response:
    """One of :data:`STATIC_FILES`; any other name (``../conf.py`` included) is 404."""
    media_type = STATIC_FILES.get(name)
    if media_type is None:
        raise HTTPException(status.HTTP_404_NOT_FOUND, "Not found")
    return Response(_static_text(name), media_type=media_type)


async def _security_headers(
    request: Request, call_next: Callable[[Request], Awaitable[Response]]
) -> Response:
    response = await call_next(request)
    response.headers["Content-Security-Policy"] = CONTENT_SECURITY_POLICY
    response.headers["X-Content-Type-Options"] = "nosniff"
    response.headers["Referrer-Policy"] = "same-origin"
    response.headers.setdefault("Cache-Control", "no-store")
    return response


def create_app(reader: LineageReader | None = None) -> FastAPI:
    """The Lineage app; ``reader`` defaults to the configured event log or Marquez."""
    app = FastAPI(
        title="Airflow Lineage Plus",
        docs_url=None,
        redoc_url=None,
        openapi_url=None,
        dependencies=[Depends(require_lineage_reader)],
    )
    app.state.lineage_reader = reader or LineageReader()
    app.state.query_pool = QueryPool(conf.ui_max_queries())
    app.include_router(page_router)
    app.include_router(api.router)
    app.middleware("http")(_security_headers)
    return app
