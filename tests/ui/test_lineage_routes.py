"""Every route of the Lineage app: authenticated, async, and reading lineage only through the one door.

The door (``ui/access.py``: the ``Lineage`` dependency) scopes every question to the DAGs the user may
read and runs it in the view's own threads within the deadline. A route added without it fails here.
"""

from __future__ import annotations

import inspect
from pathlib import Path
from typing import Any

import pytest
from fastapi.routing import APIRoute

from airflow_lineage_plus.ui import access, auth
from airflow_lineage_plus.ui.view_app import create_app
from airflow_lineage_plus.ui.view_source import LineageReader
from tests.support.run_report import SHARED_RECORDINGS

# one xdist group with the other tests of the Lineage view (tests/support/run_report.py)
pytestmark = pytest.mark.xdist_group(SHARED_RECORDINGS)

UI = Path(access.__file__).parent
#: routes that carry no lineage (what the page needs to know about the installation)
NO_LINEAGE = {"/api/config"}
#: every route of the view's app: the checks below hold for each of them (a new route joins this list)
ROUTES = [
    "/",
    "/api/attention",
    "/api/columns",
    "/api/config",
    "/api/dag",
    "/api/failed-upstream",
    "/api/freshness",
    "/api/impact",
    "/api/lineage",
    "/api/node",
    "/api/run",
    "/api/schema-diff",
    "/api/search",
    "/api/task-instance",
    "/api/time-range",
    "/api/what-changed",
    "/static/{name}",
]


def _routes() -> list[APIRoute]:
    app = create_app(reader=LineageReader(opener=lambda: None))
    return [route for route in app.routes if isinstance(route, APIRoute)]


def _calls(dependant: Any) -> set[Any]:
    found = set()
    for dependency in dependant.dependencies:
        found.add(dependency.call)
        found |= _calls(dependency)
    return found


def test_every_api_route_reads_lineage_through_the_scoped_dependency() -> None:
    api_routes = [r for r in _routes() if r.path.startswith("/api/") and r.path not in NO_LINEAGE]
    assert sorted(r.path for r in api_routes) == [
        p for p in ROUTES if p.startswith("/api/") and p not in NO_LINEAGE
    ]
    missing = [r.path for r in api_routes if access.reader_lineage not in _calls(r.dependant)]
    assert missing == []


def test_every_route_requires_an_authenticated_lineage_reader() -> None:
    assert sorted(r.path for r in _routes()) == ROUTES
    missing = [r.path for r in _routes() if auth.require_lineage_reader not in _calls(r.dependant)]
    assert missing == []


def test_every_route_is_async_so_none_waits_in_the_api_servers_thread_pool() -> None:
    assert sorted(r.path for r in _routes()) == ROUTES
    blocking = [r.path for r in _routes() if not inspect.iscoroutinefunction(r.endpoint)]
    assert blocking == []


def test_routes_reach_the_lineage_source_only_through_the_door() -> None:
    for module in ("api.py", "view_app.py", "navigation.py"):
        text = (UI / module).read_text()
        assert "state.lineage_reader" not in text.replace("app.state.lineage_reader = reader", ""), module
        assert ".run(" not in text, module


#: every route of the OpenLineage endpoint's app (``ui/collector.py``), mounted beside the view's
COLLECTOR_ROUTES = ["/api/v1/lineage", "/api/v1/lineage/batch"]


def test_every_collector_route_requires_a_writer_and_is_async() -> None:
    from airflow_lineage_plus.ui import ingest_auth
    from airflow_lineage_plus.ui.collector import create_collector_app

    routes = [r for r in create_collector_app().routes if isinstance(r, APIRoute)]
    assert sorted(r.path for r in routes) == COLLECTOR_ROUTES
    assert [r.path for r in routes if ingest_auth.require_ingest not in _calls(r.dependant)] == []
    assert [r.path for r in routes if not inspect.iscoroutinefunction(r.endpoint)] == []
