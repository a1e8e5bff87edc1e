"""The Lineage view's routes, mounted in the real Airflow API server app exactly as in production.

The app is Airflow's own ``create_app()`` with plugins loaded from the installed entry point; users come
from Airflow's SimpleAuthManager and log in through its real ``/auth/token`` endpoint. Lineage comes
from a real run of ``tests/ui/dags/ui_orders.py`` (one good run, then one that fails a stage).
"""

from __future__ import annotations

import json
import os
import re
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import jwt
import pytest
from fastapi.testclient import TestClient

from tests.support import timing
from tests.support.run_report import SHARED_RECORDINGS
from tests.support.view_in_process import simple_auth_airflow
from tests.ui.ui_pipeline import (
    DAG_ID,
    HOSTILE_ID,
    HOSTILE_NAME,
    JOB_IDS,
    MART_ID,
    RAW_ID,
    STG_ID,
    record_pipeline,
)

pytestmark = [pytest.mark.airflow, pytest.mark.xdist_group(SHARED_RECORDINGS)]

PASSWORDS = {"admin": "admin-pw", "viewer": "viewer-pw", "nobody": "nobody-pw"}
PROTECTED = [
    "/lineage-plus/",
    "/lineage-plus/static/main.js",
    "/lineage-plus/static/lineage.css",
    "/lineage-plus/api/config",
    "/lineage-plus/api/search?q=orders",
    f"/lineage-plus/api/lineage?node={MART_ID}&depth=3",
    f"/lineage-plus/api/node?node={MART_ID}",
    f"/lineage-plus/api/dag?dag_id={DAG_ID}",
    f"/lineage-plus/api/task-instance?dag_id={DAG_ID}&task_id=load_stg_orders",
    "/lineage-plus/api/freshness",
    f"/lineage-plus/api/what-changed?node={MART_ID}",
    "/lineage-plus/api/attention",
]


@pytest.fixture(scope="module")
def event_log(airflow_db: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    log, good, failed = record_pipeline(tmp_path_factory.getbasetemp())
    assert good.returncode == 0, good.output[-3000:]
    assert failed.returncode != 0, "the second run must fail its staging load"
    return log


@pytest.fixture(scope="module")
def client(event_log: Path, tmp_path_factory: pytest.TempPathFactory) -> Iterator[TestClient]:
    patch = pytest.MonkeyPatch()
    roles = "admin:admin,viewer:viewer,nobody:"
    with simple_auth_airflow(
        patch, event_log, roles, PASSWORDS, tmp_path_factory.mktemp("auth")
    ) as test_client:
        yield test_client
    patch.undo()


def login(client: TestClient, user: str) -> str:
    response = client.post("/auth/token", json={"username": user, "password": PASSWORDS[user]})
    assert response.status_code == 201, response.text
    token: str = response.json()["access_token"]
    return token


@pytest.fixture(scope="module")
def viewer(client: TestClient) -> dict[str, str]:
    return {"Authorization": f"Bearer {login(client, 'viewer')}"}


def assert_no_lineage(body: str) -> None:
    for leak in ("fct_daily_orders", "stg_orders", "ui_orders", "acme-raw", "onerror", "<script"):
        assert leak not in body


# -- authentication -------------------------------------------------------------------------------------


@pytest.mark.parametrize("path", PROTECTED)
def test_anonymous_request_is_refused_with_401_and_no_data(client: TestClient, path: str) -> None:
    response = client.get(path)
    assert response.status_code == 401
    assert response.headers["content-type"].startswith("application/json")
    assert_no_lineage(response.text)


@pytest.mark.parametrize(
    "credentials",
    [
        {"headers": {"Authorization": "Bearer not-a-jwt"}},
        {"headers": {"Authorization": "Bearer "}},
        {"cookies": {"_token": "not-a-jwt"}},
    ],
    ids=["garbage-bearer", "empty-bearer", "garbage-cookie"],
)
def test_unreadable_token_is_refused_with_401(client: TestClient, credentials: dict[str, Any]) -> None:
    client.cookies.clear()
    response = client.get(f"/lineage-plus/api/lineage?node={MART_ID}", **credentials)
    client.cookies.clear()
    assert response.status_code == 401
    assert_no_lineage(response.text)


def test_token_signed_with_another_key_is_refused_with_401(client: TestClient) -> None:
    forged = jwt.encode(
        {
            "sub": "admin",
            "role": "ADMIN",
            "iat": int(time.time()),
            "nbf": int(time.time()),
            "exp": int(time.time()) + 600,
        },
        "someone-elses-secret-" + "x" * 64,
        algorithm="HS512",
    )
    response = client.get(
        f"/lineage-plus/api/node?node={MART_ID}", headers={"Authorization": f"Bearer {forged}"}
    )
    assert response.status_code == 401
    assert_no_lineage(response.text)


def test_expired_token_is_refused_with_401(client: TestClient) -> None:
    from airflow.api_fastapi.app import get_auth_manager
    from airflow.api_fastapi.auth.managers.simple.user import SimpleAuthManagerUser

    expired = get_auth_manager().generate_jwt(
        SimpleAuthManagerUser(username="admin", role="ADMIN"), expiration_time_in_seconds=-120
    )
    response = client.get("/lineage-plus/api/search?q=orders", headers={"Authorization": f"Bearer {expired}"})
    assert response.status_code == 401
    assert_no_lineage(response.text)


@pytest.mark.parametrize("path", PROTECTED)
def test_user_the_auth_manager_gives_no_read_access_gets_403_and_no_data(
    client: TestClient, path: str
) -> None:
    token = login(client, "nobody")  # a real user with no role: SimpleAuthManager authorises nothing
    response = client.get(path, headers={"Authorization": f"Bearer {token}"})
    assert response.status_code == 403
    assert_no_lineage(response.text)


def test_viewer_reads_the_page_with_the_bearer_token(client: TestClient, viewer: dict[str, str]) -> None:
    response = client.get("/lineage-plus/", headers=viewer)
    assert response.status_code == 200
    assert response.headers["content-type"].startswith("text/html")
    assert "default-src 'none'" in response.headers["content-security-policy"]
    assert response.headers["x-content-type-options"] == "nosniff"


def test_the_ui_session_cookie_is_accepted(client: TestClient) -> None:
    token = login(client, "admin")
    client.cookies.set("_token", token)
    try:
        response = client.get("/lineage-plus/api/search", params={"q": "fct_daily"})
    finally:
        client.cookies.clear()
    assert response.status_code == 200
    assert MART_ID in [node["id"] for node in response.json()["results"]]


# -- what the page reads --------------------------------------------------------------------------------


def test_search_finds_the_mart_table_by_part_of_its_name(client: TestClient, viewer: dict[str, str]) -> None:
    response = client.get("/lineage-plus/api/search", params={"q": "MARTS.FCT"}, headers=viewer)
    assert response.status_code == 200
    results = response.json()["results"]
    assert [(node["id"], node["type"]) for node in results] == [(MART_ID, "DATASET")]


def test_freshness_route_answers_the_freshness_report(client: TestClient, viewer: dict[str, str]) -> None:
    # ui_orders declares no SloTier: nothing has a freshness target (tests/act check the breaches themselves)
    response = client.get("/lineage-plus/api/freshness", headers=viewer)
    assert response.status_code == 200
    body = response.json()
    assert (body["checked"], body["breaches"]) == (0, [])
    assert body["at"].endswith("Z")


def test_mart_lineage_has_three_hops_upstream_and_names_the_failed_stage(
    client: TestClient, viewer: dict[str, str]
) -> None:
    response = client.get(
        "/lineage-plus/api/lineage",
        params={"node": MART_ID, "depth": 6, "direction": "upstream"},
        headers=viewer,
    )
    assert response.status_code == 200
    graph = response.json()
    ids = {node["id"] for node in graph["nodes"]}
    assert ids == {RAW_ID, STG_ID, *JOB_IDS.values()}
    edges = {(edge["origin"], edge["destination"]) for edge in graph["edges"]}
    assert edges == {
        (JOB_IDS["ingest_orders_to_s3"], RAW_ID),
        (RAW_ID, JOB_IDS["load_stg_orders"]),
        (JOB_IDS["load_stg_orders"], STG_ID),
        (STG_ID, JOB_IDS["fct_daily_orders"]),
        (JOB_IDS["fct_daily_orders"], MART_ID),
    }
    states = {node["id"]: node["latestRun"]["state"] for node in graph["nodes"] if node["type"] == "JOB"}
    assert states[JOB_IDS["load_stg_orders"]] == "FAILED"
    assert states[JOB_IDS["ingest_orders_to_s3"]] == "COMPLETED"
    # fct_daily_orders did not run in the failed DAG run: its skip record (upstream_failed) says why, so
    # it is neither a success nor a plain skip
    assert states[JOB_IDS["fct_daily_orders"]] == "UPSTREAM_FAILED"
    assert JOB_IDS["load_stg_orders"] in {node["id"] for node in graph["failedUpstream"]}


def test_depth_limits_the_neighbourhood(client: TestClient, viewer: dict[str, str]) -> None:
    response = client.get("/lineage-plus/api/lineage", params={"node": MART_ID, "depth": 2}, headers=viewer)
    assert response.status_code == 200
    assert {node["id"] for node in response.json()["nodes"]} == {JOB_IDS["fct_daily_orders"], STG_ID}


def test_failed_job_details_carry_the_error_recent_runs_and_airflow_ids(
    client: TestClient, viewer: dict[str, str]
) -> None:
    response = client.get(
        "/lineage-plus/api/node", params={"node": JOB_IDS["load_stg_orders"]}, headers=viewer
    )
    assert response.status_code == 200
    details = response.json()
    assert details["latestRun"]["state"] == "FAILED"
    assert "3 malformed order rows" in details["latestRun"]["errorMessage"]
    assert [run["state"] for run in details["runs"]] == ["FAILED", "COMPLETED"]
    airflow_ids = [run["airflow"] for run in details["runs"]]
    assert {ids["dag_id"] for ids in airflow_ids} == {DAG_ID}
    assert {ids["task_id"] for ids in airflow_ids} == {"load_stg_orders"}
    assert len({ids["run_id"] for ids in airflow_ids}) == 2


def test_dataset_details_show_its_schema(client: TestClient, viewer: dict[str, str]) -> None:
    response = client.get("/lineage-plus/api/node", params={"node": MART_ID}, headers=viewer)
    assert response.status_code == 200
    assert [field["name"] for field in response.json()["fields"]] == ["order_date", "orders", "revenue"]


def test_task_instance_tab_opens_on_that_runs_try_with_inputs_outputs_and_facets(
    client: TestClient, viewer: dict[str, str]
) -> None:
    details = client.get(
        "/lineage-plus/api/node", params={"node": JOB_IDS["load_stg_orders"]}, headers=viewer
    ).json()
    failed_run = next(run for run in details["runs"] if run["state"] == "FAILED")
    airflow_run_id = failed_run["airflow"]["run_id"]
    response = client.get(
        "/lineage-plus/api/task-instance",
        params={"dag_id": DAG_ID, "task_id": "load_stg_orders", "run_id": airflow_run_id, "map_index": -1},
        headers=viewer,
    )
    assert response.status_code == 200
    body = response.json()
    assert body["job"]["id"] == JOB_IDS["load_stg_orders"]
    run = body["run"]
    assert run["runId"] == failed_run["runId"]
    assert run["state"] == "FAILED"
    assert run["tryNumber"] == 1
    assert [(d["namespace"], d["name"]) for d in run["inputs"]] == [
        ("s3://acme-raw", "orders/2024-01-01.json")
    ]
    assert [d["name"] for d in run["outputs"]] == ["analytics.staging.stg_orders"]
    assert "errorMessage" in run["facets"] and "airflow" in run["facets"]
    assert [t["runId"] for t in body["tries"]] == [failed_run["runId"]]


def test_dag_tab_merges_the_lineage_of_all_its_tasks(client: TestClient, viewer: dict[str, str]) -> None:
    response = client.get("/lineage-plus/api/dag", params={"dag_id": DAG_ID, "depth": 1}, headers=viewer)
    assert response.status_code == 200
    graph = response.json()
    assert set(graph["dagJobs"]) == {*JOB_IDS.values(), f"job:test-airflow:{DAG_ID}.export_audit"}
    assert {RAW_ID, STG_ID, MART_ID, HOSTILE_ID} <= {node["id"] for node in graph["nodes"]}


# -- hostile input --------------------------------------------------------------------------------------


def test_hostile_dataset_name_travels_as_json_data_only(client: TestClient, viewer: dict[str, str]) -> None:
    response = client.get("/lineage-plus/api/search", params={"q": "<img"}, headers=viewer)
    assert response.status_code == 200
    assert response.headers["content-type"] == "application/json"
    assert response.headers["x-content-type-options"] == "nosniff"
    assert [node["name"] for node in response.json()["results"]] == [HOSTILE_NAME]
    details = client.get("/lineage-plus/api/node", params={"node": HOSTILE_ID}, headers=viewer)
    assert details.status_code == 200 and details.json()["name"] == HOSTILE_NAME


def test_page_script_never_renders_data_as_html(client: TestClient, viewer: dict[str, str]) -> None:
    script = client.get("/lineage-plus/static/main.js", headers=viewer)
    assert script.status_code == 200
    assert script.headers["content-type"].startswith("text/javascript")
    for sink in ("innerHTML", "outerHTML", "insertAdjacentHTML", "document.write", "eval(", "new Function"):
        assert sink not in script.text
    page = client.get("/lineage-plus/", headers=viewer).text
    assert not re.search(r"\{\{|\{%|\$\{", page), "the page is a fixed file, not a template"


@pytest.mark.parametrize(
    "path",
    [
        "/lineage-plus/static/../view_app.py",
        "/lineage-plus/static/..%2Fview_app.py",
        "/lineage-plus/static/%2e%2e%2f%2e%2e%2fconf.py",
        "/lineage-plus/static/..%2F..%2F..%2F..%2Fetc%2Fpasswd",
        "/lineage-plus/static/index.html%00.js",
        "/lineage-plus/static/",
    ],
)
def test_static_files_cannot_escape_the_static_folder(
    client: TestClient, viewer: dict[str, str], path: str
) -> None:
    response = client.get(path, headers=viewer)
    assert response.status_code == 404
    assert "import" not in response.text and "root:" not in response.text


@pytest.mark.parametrize(
    ("params", "expected"),
    [
        ({"node": MART_ID, "depth": 0}, 422),
        ({"node": MART_ID, "depth": 13}, 422),
        ({"node": MART_ID, "direction": "sideways"}, 422),
        ({"node": "x" * 5000}, 422),
        ({"node": "../../etc/passwd"}, 400),
        ({"node": "dataset:postgres://warehouse:5432:no.such.table"}, 404),
    ],
)
def test_bad_parameters_are_rejected(
    client: TestClient, viewer: dict[str, str], params: dict[str, Any], expected: int
) -> None:
    response = client.get("/lineage-plus/api/lineage", params=params, headers=viewer)
    assert response.status_code == expected


# -- wiring -----------------------------------------------------------------------------------------------


def test_plugin_registers_the_app_the_nav_entry_and_the_tabs(
    client: TestClient, viewer: dict[str, str]
) -> None:
    response = client.get("/api/v2/plugins", headers=viewer)
    assert response.status_code == 200
    plugin = next(p for p in response.json()["plugins"] if p["name"] == "lineage_plus")
    assert [app["url_prefix"] for app in plugin["fastapi_apps"]] == ["/lineage-plus"]
    views = {view["destination"]: view for view in plugin["external_views"]}
    assert set(views) == {"nav", "dag", "task", "task_instance"}
    assert views["nav"]["href"] == "/lineage-plus/" and views["nav"]["nav_top_level"] is True
    assert "{DAG_ID}" in views["dag"]["href"]
    for placeholder in ("{DAG_ID}", "{RUN_ID}", "{TASK_ID}"):
        assert placeholder in views["task_instance"]["href"]
    assert os.environ.get("AIRFLOW__LINEAGE_PLUS__DISABLED", "False") == "False"


# -- the query layer behind the routes ------------------------------------------------------------------


def test_node_budget_cuts_the_graph_and_counts_what_was_left_out(
    client: TestClient, viewer: dict[str, str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("AIRFLOW__LINEAGE_PLUS__UI_MAX_NODES", "2")
    response = client.get("/lineage-plus/api/lineage", params={"node": MART_ID, "depth": 6}, headers=viewer)
    assert response.status_code == 200
    graph = response.json()
    assert len(graph["nodes"]) == 2
    drawn = {MART_ID, *(node["id"] for node in graph["nodes"])}
    assert [node["id"] for node in graph["nodes"]] == [JOB_IDS["fct_daily_orders"], STG_ID]
    # the two nearest are drawn; of what the budget cut, stg_orders' writer (load_stg_orders) is its
    # neighbour: the one node counted as left out
    assert graph["truncated"] == {STG_ID: 1} and set(graph["truncated"]) <= drawn


def test_reader_picks_up_events_appended_after_it_opened(event_log: Path, tmp_path: Path) -> None:
    from airflow_lineage_plus.graph import LineageQueries, open_source
    from airflow_lineage_plus.ui.view_source import LineageReader

    lines = event_log.read_text().splitlines(keepends=True)
    first_fail = next(
        i for i, line in enumerate(lines) if '"eventType": "FAIL"' in line or '"eventType":"FAIL"' in line
    )
    log = tmp_path / "events.jsonl"
    log.write_text("".join(lines[:first_fail]))
    reader = LineageReader(opener=lambda: LineageQueries(open_source(events=log)))

    def stage_state(queries: Any) -> str:
        state: str = queries.node_details(JOB_IDS["load_stg_orders"])["latestRun"]["state"]
        return state

    assert reader.run(stage_state) == "RUNNING"  # the failed try has started, its end is not in the log yet
    with log.open("a") as handle:
        handle.write("".join(lines[first_fail:]))
    assert reader.run(stage_state) == "FAILED"


def test_reader_answers_still_loading_while_a_slow_source_opens(event_log: Path) -> None:
    import threading

    from airflow_lineage_plus.graph import LineageQueries, SourceUnavailable, open_source
    from airflow_lineage_plus.ui.view_source import LineageReader

    gate = threading.Event()

    def slow_open() -> Any:
        gate.wait(30)
        return LineageQueries(open_source(events=event_log))

    reader = LineageReader(opener=slow_open, open_wait=0.05)
    with pytest.raises(SourceUnavailable, match="Still loading"):
        reader.run(lambda queries: queries.search("fct", limit=5))
    gate.set()
    deadline = time.monotonic() + 30
    while True:
        try:
            found = reader.run(lambda queries: queries.search("marts.fct", limit=5))
            break
        except SourceUnavailable:
            assert time.monotonic() < deadline
    assert [node["id"] for node in found] == [MART_ID]


def test_reader_reports_an_unreadable_source_and_retries_later(tmp_path: Path) -> None:
    from airflow_lineage_plus.graph import SourceUnavailable
    from airflow_lineage_plus.ui.view_source import LineageReader, open_configured_queries

    missing = tmp_path / "not-yet.jsonl"
    patch = pytest.MonkeyPatch()
    patch.setenv("AIRFLOW__LINEAGE_PLUS__EVENT_LOG_PATH", str(missing))
    try:
        reader = LineageReader(opener=open_configured_queries)
        with pytest.raises(SourceUnavailable, match="does not exist"):
            reader.run(lambda queries: queries.search("x"))
        missing.write_text("")
        assert reader.run(lambda queries: queries.search("x")) == []
    finally:
        patch.undo()


def test_importing_the_plugin_does_not_import_fastapi() -> None:
    """Task processes load plugins too; the view's app is only built on the API server's first request."""
    import subprocess
    import sys

    code = (
        "import sys, airflow_lineage_plus.plugin as p; "
        "assert p.LineagePlusPlugin.fastapi_apps; print('fastapi' in sys.modules)"
    )
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert proc.stdout.strip().splitlines()[-1] == "False"


def test_reader_reads_marquez_when_configured_and_sees_the_same_lineage(event_log: Path) -> None:
    """graph_source = marquez: the view asks Marquez (the project's stand-in built from its OpenAPI spec).

    Asked upstream of the staging table: upstream of the mart, Marquez answers differently by design (the
    failed day's skip record of ``fct_daily_orders``, an ABORT without outputs, makes a job version without
    the mart: docs/graph.md, "Marquez source"), which the last assertion pins."""
    import httpx

    from airflow_lineage_plus.graph import SourceUnavailable
    from airflow_lineage_plus.ui.view_source import LineageReader, open_configured_queries
    from tests.support.fake_marquez import FakeMarquez

    def upstream(queries: Any) -> tuple[set[str], dict[str, str], bool, bool, set[str]]:
        graph = queries.upstream(STG_ID, 6)
        states = {n["id"]: n["latestRun"]["state"] for n in graph["nodes"] if n["type"] == "JOB"}
        # Marquez draws a job's edges from its latest finished run: the mart's job was aborted (its
        # DAG run failed upstream) with no outputs, so Marquez no longer links it to the mart
        mart = queries.upstream(MART_ID, 1)
        nodes = {n["id"] for n in graph["nodes"]}
        return nodes, states, graph["exact"], mart["exact"], {n["id"] for n in mart["nodes"]}

    with FakeMarquez(api_key="ui-key") as marquez:
        for line in event_log.read_text().splitlines():
            response = httpx.post(
                f"{marquez.url}/api/v1/lineage",
                content=line,
                headers={"Authorization": "Bearer ui-key", "Content-Type": "application/json"},
            )
            assert response.status_code < 300, response.text
        patch = pytest.MonkeyPatch()
        patch.setenv("AIRFLOW__LINEAGE_PLUS__GRAPH_SOURCE", "marquez")
        patch.setenv("AIRFLOW__LINEAGE_PLUS__MARQUEZ_URL", marquez.url)
        patch.setenv("AIRFLOW__LINEAGE_PLUS__MARQUEZ_API_KEY", "ui-key")
        try:
            reader = LineageReader(opener=open_configured_queries)
            deadline = time.monotonic() + 120
            while True:  # opening may take longer than one request waits: "Still loading" meanwhile
                try:
                    from_marquez = reader.run(upstream)
                    break
                except SourceUnavailable as error:
                    assert "Still loading" in str(error) and time.monotonic() < deadline, str(error)
        finally:
            patch.undo()
    from airflow_lineage_plus.graph import LineageQueries, open_source

    from_log = upstream(LineageQueries(open_source(events=event_log)))
    stage = {RAW_ID, JOB_IDS["load_stg_orders"], JOB_IDS["ingest_orders_to_s3"]}
    assert from_marquez[0] == from_log[0] == stage
    assert from_marquez[1][JOB_IDS["load_stg_orders"]] == "FAILED"
    assert from_log[2:4] == (True, True)
    assert from_marquez[2:4] == (False, False)  # it says so: the latest runs there did not complete
    assert (from_log[4], from_marquez[4]) == ({JOB_IDS["fct_daily_orders"]}, set())


# -- time travel, retired edges, impact, schema changes, column paths ---------------------------------------

GRAPH_VIEW_ROUTES = [
    f"/lineage-plus/api/impact?node={RAW_ID}",
    f"/lineage-plus/api/schema-diff?node={STG_ID}",
    f"/lineage-plus/api/columns?node={MART_ID}&column=revenue",
    "/lineage-plus/api/time-range",
    "/lineage-plus/static/timeline.js",
]


@pytest.mark.parametrize("path", GRAPH_VIEW_ROUTES)
def test_graph_view_routes_refuse_anonymous_and_unauthorized_users(client: TestClient, path: str) -> None:
    anonymous = client.get(path)
    assert anonymous.status_code == 401
    assert_no_lineage(anonymous.text)
    refused = client.get(path, headers={"Authorization": f"Bearer {login(client, 'nobody')}"})
    assert refused.status_code == 403
    assert_no_lineage(refused.text)


def test_the_mart_as_of_before_the_failing_run_had_a_completed_stage(
    client: TestClient, viewer: dict[str, str]
) -> None:
    span = client.get("/lineage-plus/api/time-range", headers=viewer).json()
    assert span["from"] < span["to"]
    now = client.get("/lineage-plus/api/lineage", params={"node": MART_ID, "depth": 4}, headers=viewer).json()
    stage = next(n for n in now["nodes"] if n["id"] == JOB_IDS["load_stg_orders"])
    assert stage["latestRun"]["state"] == "FAILED" and now["exact"] is True
    failed_at = stage["latestRun"]["startedAt"]
    params = {"node": MART_ID, "depth": 4, "asOf": _just_before(failed_at)}
    then = client.get(
        "/lineage-plus/api/lineage", params={**params, "includeRetired": "true"}, headers=viewer
    )
    assert then.status_code == 200, then.text
    body = then.json()
    assert body["asOf"] and body["failedUpstream"] == []
    earlier = next(n for n in body["nodes"] if n["id"] == JOB_IDS["load_stg_orders"])
    assert earlier["latestRun"]["state"] == "COMPLETED"
    details = client.get(
        "/lineage-plus/api/node",
        params={"node": JOB_IDS["load_stg_orders"], "asOf": params["asOf"]},
        headers=viewer,
    )
    assert details.json()["latestRun"]["state"] == "COMPLETED"


def _just_before(iso: str) -> str:
    from datetime import datetime, timedelta

    moment = datetime.fromisoformat(iso.replace("Z", "+00:00")) - timedelta(microseconds=1)
    return moment.isoformat().replace("+00:00", "Z")


def test_impact_schema_changes_and_column_paths(client: TestClient, viewer: dict[str, str]) -> None:
    impact = client.get("/lineage-plus/api/impact", params={"node": RAW_ID}, headers=viewer).json()
    assert impact["level"] == "MEDIUM"  # two jobs downstream: the staging load and the mart build
    assert [n["id"] for n in impact["nodes"] if n["type"] == "JOB"] == [
        JOB_IDS["load_stg_orders"],
        JOB_IDS["fct_daily_orders"],
    ]
    proposed = json.dumps({"order_id": "BIGINT", "amount": "NUMERIC(12,2)", "customer": "TEXT"})
    diff = client.get(
        "/lineage-plus/api/schema-diff", params={"node": STG_ID, "proposed": proposed}, headers=viewer
    )
    assert diff.status_code == 200, diff.text
    assert diff.json()["changes"] == [
        {"kind": "COLUMN_REMOVED", "column": "ordered_at", "from": "TIMESTAMP", "to": None},
        {"kind": "TYPE_CHANGED", "column": "amount", "from": "NUMERIC", "to": "NUMERIC(12,2)"},
        {"kind": "COLUMN_ADDED", "column": "customer", "from": None, "to": "TEXT"},
    ]
    assert diff.json()["versions"] == [
        [
            {"name": "order_id", "type": "BIGINT"},
            {"name": "amount", "type": "NUMERIC"},
            {"name": "ordered_at", "type": "TIMESTAMP"},
        ]
    ]
    columns = client.get(
        "/lineage-plus/api/columns", params={"node": MART_ID, "column": "revenue"}, headers=viewer
    )
    assert columns.status_code == 200 and columns.json()["upstream"] == [] and columns.json()["paths"] == []


@pytest.mark.parametrize(
    ("path", "params"),
    [
        ("/lineage-plus/api/lineage", {"node": MART_ID, "asOf": "yesterday"}),
        ("/lineage-plus/api/schema-diff", {"node": STG_ID, "proposed": "{not json"}),
        ("/lineage-plus/api/schema-diff", {"node": STG_ID, "proposed": "[1, 2]"}),
        ("/lineage-plus/api/columns", {"node": MART_ID, "column": ""}),
        ("/lineage-plus/api/impact", {"node": MART_ID, "depth": 99}),
    ],
)
def test_bad_graph_view_parameters_are_422(
    client: TestClient, viewer: dict[str, str], path: str, params: dict[str, Any]
) -> None:
    assert client.get(path, params=params, headers=viewer).status_code == 422


# -- the view never blocks its host -----------------------------------------------------------------------


@pytest.fixture
def swapped_reader(client: TestClient) -> Iterator[Any]:
    """The mounted Lineage app (the plugin's), whose reader a test may replace; put back afterwards."""
    from airflow_lineage_plus.plugin import LineagePlusPlugin

    client.get("/lineage-plus/api/config")  # the plugin builds its app on the first request
    lineage_app = LineagePlusPlugin.fastapi_apps[0]["app"].build()
    original = lineage_app.state.lineage_reader
    yield lineage_app.state
    lineage_app.state.lineage_reader = original


@pytest.mark.timeout(240)
def test_a_marquez_that_never_answers_is_503_within_the_deadline_while_airflow_keeps_answering(
    client: TestClient, viewer: dict[str, str], swapped_reader: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    """50 lineage requests at once against a silent Marquez: more than Airflow's shared thread pool has
    threads (40). Each is 503 at its 1 s deadline, and Airflow's own (sync) routes answer meanwhile."""
    from concurrent.futures import ThreadPoolExecutor

    from airflow_lineage_plus.graph import LineageQueries, open_source
    from airflow_lineage_plus.ui.view_source import LineageReader
    from tests.support.fake_marquez import SilentMarquez

    monkeypatch.setenv("AIRFLOW__LINEAGE_PLUS__UI_REQUEST_TIMEOUT", "1.0")

    def timed(path: str) -> tuple[float, Any]:
        began = time.monotonic()
        response = client.get(path, headers=viewer)
        return time.monotonic() - began, response

    # in-run baselines: Airflow's health route and a lineage answer, each now, before the load
    quick_health = timing.baseline(lambda: client.get("/api/v2/monitor/health", headers=viewer))
    quick_node = timing.baseline(lambda: client.get(f"/lineage-plus/api/node?node={MART_ID}", headers=viewer))
    with SilentMarquez() as marquez:
        swapped_reader.lineage_reader = LineageReader(
            opener=lambda: LineageQueries(open_source(marquez=marquez.url, timeout=60))
        )
        pool = ThreadPoolExecutor(51)
        try:  # bounded waits: a view that blocks its host fails here instead of hanging the test
            lineage = [pool.submit(timed, f"/lineage-plus/api/node?node={MART_ID}") for _ in range(50)]
            time.sleep(0.3)
            health = pool.submit(timed, "/api/v2/monitor/health").result(timeout=30)
            answers = [future.result(timeout=30) for future in lineage]
        finally:
            pool.shutdown(wait=False, cancel_futures=True)
        assert marquez.connections >= 1
    # Airflow's route waits for no lineage deadline: under one (1 s) plus the margin of its own baseline
    assert health[1].status_code == 200, "Airflow's own routes must not wait for lineage"
    assert health[0] <= timing.bound(0.5, quick_health), (health[0], quick_health)
    assert {response.status_code for _, response in answers} == {503}
    # each answer at its 1 s deadline: not before, and within the margin of the deadline and the baseline;
    # the 50 answers leave through the test client's one event loop one after another, so the last may
    # wait for the 49 before it: one baseline request each (a CI run saw 2.33 s with a 34 ms baseline)
    took = sorted(seconds for seconds, _ in answers)
    last = timing.bound(1.0, quick_node, factor=len(answers))
    assert took[0] >= 1.0 and took[-1] <= last, (took[0], took[-1], quick_node)
    for _, response in answers:
        assert response.headers["retry-after"] == "5"
        assert "127.0.0.1" not in response.text and "marquez" not in response.text.lower()


def test_a_503_says_what_to_do_and_never_where_the_lineage_lives(
    client: TestClient, viewer: dict[str, str], swapped_reader: Any, tmp_path: Path
) -> None:
    from airflow_lineage_plus.ui.access import UNAVAILABLE
    from airflow_lineage_plus.ui.view_source import LineageReader, open_configured_queries

    secret_place = tmp_path / "secret-folder" / "events.jsonl"
    patch = pytest.MonkeyPatch()
    patch.setenv("AIRFLOW__LINEAGE_PLUS__EVENT_LOG_PATH", str(secret_place))
    try:
        swapped_reader.lineage_reader = LineageReader(opener=open_configured_queries)
        response = client.get("/lineage-plus/api/search", params={"q": "orders"}, headers=viewer)
    finally:
        patch.undo()
    assert response.status_code == 503
    assert response.json() == {"detail": UNAVAILABLE}
    assert response.headers["retry-after"] == "5"
    assert "secret-folder" not in response.text


def test_a_task_that_never_ran_shows_its_declared_lineage_dotted(
    client: TestClient, viewer: dict[str, str], event_log: Path, swapped_reader: Any, tmp_path: Path
) -> None:
    """A JobEvent (what ``lineage-plus publish-static`` sends) appended to the log: its edges come back with
    ``state: declared`` and the job as ``declared``; ``declared=false`` leaves them out. (On a copy of the
    log, with a store of its own: what reaches the store stays there, and the other tests see the log.)"""
    from airflow_lineage_plus.ui.view_source import LineageReader, open_configured_queries

    copy = tmp_path / "events.jsonl"
    copy.write_bytes(event_log.read_bytes())
    job = {"namespace": "test-airflow", "name": "ui_planned.build_summary"}
    summary = {"namespace": "postgres://warehouse:5432", "name": "analytics.marts.orders_summary"}
    mart = {"namespace": "postgres://warehouse:5432", "name": "analytics.marts.fct_daily_orders"}
    declared = {
        "eventTime": "2030-01-01T00:00:00Z",
        "producer": "https://github.com/airflow-lineage-plus/airflow-lineage-plus",
        "schemaURL": "https://openlineage.io/spec/2-0-2/OpenLineage.json#/$defs/JobEvent",
        "job": job,
        "inputs": [mart],
        "outputs": [summary],
    }
    job_id = f"job:{job['namespace']}:{job['name']}"
    with copy.open("a") as handle:
        handle.write(json.dumps(declared) + "\n")
    patch = pytest.MonkeyPatch()
    patch.setenv("AIRFLOW__LINEAGE_PLUS__EVENT_LOG_PATH", str(copy))
    try:
        swapped_reader.lineage_reader = LineageReader(opener=open_configured_queries)
        params: dict[str, Any] = {"node": MART_ID, "depth": 2}
        graph = client.get("/lineage-plus/api/lineage", params=params, headers=viewer).json()
        states = {(e["origin"], e["destination"]): e["state"] for e in graph["edges"]}
        assert states[(MART_ID, job_id)] == "declared"
        assert states[(job_id, f"dataset:{summary['namespace']}:{summary['name']}")] == "declared"
        assert states[(JOB_IDS["fct_daily_orders"], MART_ID)] == "current"
        assert next(n for n in graph["nodes"] if n["id"] == job_id)["declared"] is True
        hidden = client.get(
            "/lineage-plus/api/lineage", params={**params, "declared": "false"}, headers=viewer
        )
        assert job_id not in {n["id"] for n in hidden.json()["nodes"]}
        dag = client.get("/lineage-plus/api/dag", params={"dag_id": "ui_planned"}, headers=viewer).json()
        assert dag["dagJobs"] == [job_id] and {e["state"] for e in dag["edges"] if job_id in e.values()} == {
            "declared"
        }
        assert client.get("/lineage-plus/api/node", params={"node": job_id}, headers=viewer).json()[
            "declared"
        ]
    finally:
        patch.undo()


# -- what changed, what needs attention (docs/what-changed.md) -------------------------------------------


def test_what_changed_names_the_failed_stage_first_and_says_what_it_cannot_tell(
    client: TestClient, viewer: dict[str, str]
) -> None:
    response = client.get("/lineage-plus/api/what-changed", params={"node": MART_ID}, headers=viewer)
    assert response.status_code == 200
    answer = response.json()
    assert [(c["node"], c["kind"], c["to"]) for c in answer["changes"]] == [
        (JOB_IDS["load_stg_orders"], "state", "FAILED"),
        (JOB_IDS["fct_daily_orders"], "state", "UPSTREAM_FAILED"),
    ]
    assert answer["changes"][0]["path"] == [
        JOB_IDS["load_stg_orders"],
        STG_ID,
        JOB_IDS["fct_daily_orders"],
        MART_ID,
    ]
    # one earlier run is no baseline for figures: the datasets cannot tell, they do not say "no change"
    assert {item["node"] for item in answer["cannotTell"]} == {MART_ID, STG_ID, RAW_ID}
    assert answer["baseline"] == {"runs": 7}


def test_what_changed_rejects_a_bad_baseline(client: TestClient, viewer: dict[str, str]) -> None:
    response = client.get(
        "/lineage-plus/api/what-changed", params={"node": MART_ID, "baselineRuns": 0}, headers=viewer
    )
    assert response.status_code == 422


def test_attention_lists_the_failed_job_for_the_first_page(
    client: TestClient, viewer: dict[str, str]
) -> None:
    response = client.get("/lineage-plus/api/attention", headers=viewer)
    assert response.status_code == 200
    answer = response.json()
    # the failed task, and its DAG run (the DAG's own job) that failed with it
    assert [job["id"] for job in answer["failedJobs"]] == [
        f"job:test-airflow:{DAG_ID}",
        JOB_IDS["load_stg_orders"],
    ]
    assert answer["stale"] == []
    # both runs were today: the largest changes of the last day are the two jobs that did not complete
    assert [(c["node"], c["kind"], c["to"]) for c in answer["changes"]] == [
        (JOB_IDS["fct_daily_orders"], "state", "UPSTREAM_FAILED"),
        (JOB_IDS["load_stg_orders"], "state", "FAILED"),
    ]
