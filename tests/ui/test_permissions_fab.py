"""Per-DAG permissions through a real ``airflow api-server`` with the FAB auth manager.

Two DAGs run for real (``tests/ui/dags/perm_dags.py``): ``perm_beta`` writes a table ``perm_alpha`` reads.
User ``alpha`` may read ``perm_alpha`` only (a FAB role with ``can_read`` on ``DAG:perm_alpha``); ``viewer``
may read every DAG. Every route of the Lineage app, enumerated from the FastAPI app itself, is asked with
every value of its parameters the log offers: ``alpha`` never gets a name, SQL, error, run or facet of
``perm_beta``, ``viewer`` gets all of it. A route whose parameters this test does not know fails it.
That covers the routes added with the act/ and declared/ stages too: ``/api/freshness`` (beta's tables are
stale, one of them shared) and the declared edges of ``perm_beta_planned``, a beta DAG that never ran and
whose lineage was published with ``lineage-plus publish-static``.
"""

from __future__ import annotations

import json
from pathlib import Path

import httpx
import pytest
from fastapi.routing import APIRoute

from airflow_lineage_plus.store.database import LineageStore, sqlite_url
from tests.support.fab_airflow import FabAirflow
from tests.support.openlineage_spec import validate_events
from tests.support.route_values import RouteValues
from tests.support.run_report import SHARED_RECORDINGS
from tests.ui.ui_pipeline import ALPHA_DAG, ALPHA_TASK, BETA_DAG, BETA_STRINGS, PermissionPipeline

pytestmark = [pytest.mark.airflow, pytest.mark.xdist_group(SHARED_RECORDINGS)]

NAMESPACE = "test-airflow"
WAREHOUSE = "postgres://warehouse:5432"
SCORES = f"dataset:{WAREHOUSE}:analytics.shared.customer_scores"
PLANNED = "perm_beta_planned.export_scores"


def job(name: str) -> str:
    return f"job:{NAMESPACE}:{name}"


def lineage_routes() -> list[APIRoute]:
    """Every route of the Lineage app, from the app the plugin serves."""
    from airflow_lineage_plus.ui.view_app import create_app
    from airflow_lineage_plus.ui.view_source import LineageReader

    app = create_app(reader=LineageReader(opener=lambda: None))
    return [route for route in app.routes if isinstance(route, APIRoute)]


@pytest.fixture(scope="module")
def values(permission_pipeline: PermissionPipeline) -> RouteValues:
    return RouteValues.from_log(permission_pipeline.log, [ALPHA_DAG, BETA_DAG], BETA_DAG)


@pytest.fixture(scope="module")
def answers(fab_server: FabAirflow, values: RouteValues) -> dict[str, list[tuple[str, httpx.Response]]]:
    """Every route with every parameter set, as ``alpha`` and as ``viewer``: {user: [(request, answer)]}."""
    asked: dict[str, list[tuple[str, httpx.Response]]] = {"alpha": [], "viewer": []}
    for route in lineage_routes():
        for path, params in values.requests(route):
            for user, found in asked.items():
                found.append((f"{path} {params}", fab_server.get(f"/lineage-plus{path}", user, **params)))
    return asked


def test_the_recorded_events_are_valid_openlineage(permission_pipeline: PermissionPipeline) -> None:
    events = [json.loads(line) for line in permission_pipeline.log.read_text().splitlines()]
    validate_events(events)
    names = {event["job"]["name"] for event in events}
    assert {"beta_scoring_model", "alpha_report_model", f"{BETA_DAG}.notify_beta"} <= names


def test_airflow_itself_lists_only_the_alpha_dag_for_alpha(fab_server: FabAirflow) -> None:
    dags = fab_server.get("/api/v2/dags", "alpha").json()["dags"]
    assert [dag["dag_id"] for dag in dags] == [ALPHA_DAG]
    assert fab_server.get(f"/api/v2/dags/{BETA_DAG}", "alpha").status_code == 403


def test_a_one_dag_user_gets_nothing_of_the_other_dag_from_any_route(
    answers: dict[str, list[tuple[str, httpx.Response]]], values: RouteValues
) -> None:
    secrets = [*BETA_STRINGS, *values.beta_run_ids]
    leaks = [
        (asked, secret)
        for asked, response in answers["alpha"]
        for secret in secrets
        if secret in response.text
    ]
    assert leaks == []
    statuses = {response.status_code for _, response in answers["alpha"]}
    assert statuses <= {200, 404}, [
        (a, r.status_code, r.text[:200]) for a, r in answers["alpha"] if r.status_code not in (200, 404)
    ]


def test_a_one_dag_user_sees_its_dag_its_child_job_and_a_nameless_restricted_node(
    fab_server: FabAirflow, answers: dict[str, list[tuple[str, httpx.Response]]]
) -> None:
    seen = " ".join(response.text for _, response in answers["alpha"])
    for expected in (f"{ALPHA_DAG}.{ALPHA_TASK}", "alpha_report_model", "analytics.shared.customer_scores"):
        assert expected in seen
    scores = "dataset:postgres://warehouse:5432:analytics.shared.customer_scores"
    graph = fab_server.get("/lineage-plus/api/lineage", "alpha", node=scores, depth=4).json()
    assert {node["id"] for node in graph["nodes"]} == {
        job(f"{ALPHA_DAG}.{ALPHA_TASK}"),
        "dataset:postgres://warehouse:5432:analytics.alpha_reports.customer_report",
        f"restricted:upstream:{scores}",
        f"restricted:downstream:{scores}",  # the beta task that only declared it reads the table
    }
    restricted = [node for node in graph["nodes"] if node["type"] == "RESTRICTED"]
    assert [(node["name"], node["namespace"]) for node in restricted] == [("", "")] * 2
    assert fab_server.get("/lineage-plus/api/dag", "alpha", dag_id=BETA_DAG).status_code == 404
    child = fab_server.get("/lineage-plus/api/node", "alpha", node=job("alpha_report_model"))
    assert child.status_code == 200, "a child run's job inherits its parent task's DAG"


def test_a_user_of_every_dag_sees_all_of_it(
    answers: dict[str, list[tuple[str, httpx.Response]]], values: RouteValues
) -> None:
    seen = " ".join(response.text for _, response in answers["viewer"])
    shown = [s for s in BETA_STRINGS if s != "beta-secret-team"]  # no route shows an owning-team facet
    assert [secret for secret in [*shown, *values.beta_run_ids] if secret not in seen] == []
    api_answers = " ".join(r.text for asked, r in answers["viewer"] if asked.startswith("/api/"))
    assert '"RESTRICTED"' not in api_answers


def test_a_task_that_never_ran_after_an_upstream_failure_is_upstream_failed(fab_server: FabAirflow) -> None:
    details = fab_server.get("/lineage-plus/api/node", "viewer", node=job(f"{BETA_DAG}.notify_beta")).json()
    assert details["latestRun"]["state"] == "UPSTREAM_FAILED"
    failed = fab_server.get(
        "/lineage-plus/api/node", "viewer", node=job(f"{BETA_DAG}.score_customers")
    ).json()
    assert failed["latestRun"]["state"] == "FAILED"


@pytest.mark.parametrize(("user", "status"), [("nodags", 403), (None, 401)])
def test_users_without_dag_read_and_anonymous_requests_get_no_lineage(
    fab_server: FabAirflow, values: RouteValues, user: str | None, status: int
) -> None:
    for route in lineage_routes():
        path, params = next(iter(values.requests(route)))
        response = fab_server.get(f"/lineage-plus{path}", user, **params)
        assert response.status_code == status, path
        assert [secret for secret in BETA_STRINGS if secret in response.text] == []


def test_freshness_shows_a_one_dag_user_only_the_tables_and_jobs_they_may_see(fab_server: FabAirflow) -> None:
    """Both beta tables are stale (never written: the scoring task failed). ``viewer`` gets both, caused by
    the failed beta task; ``alpha`` gets nothing: the shared table's target is beta's SLO, not theirs."""
    every = fab_server.get("/lineage-plus/api/freshness", "viewer").json()
    assert every["checked"] == 2
    assert sorted(b["dataset"]["id"] for b in every["breaches"]) == [
        f"dataset:{WAREHOUSE}:analytics.beta_vault.score_audit",
        SCORES,
    ]
    for breach in every["breaches"]:
        assert (breach["cause"], breach["responsible"]["name"]) == ("FAILED", f"{BETA_DAG}.score_customers")
    alpha = fab_server.get("/lineage-plus/api/freshness", "alpha").json()
    assert (alpha["checked"], alpha["breaches"]) == (0, [])
    nobody = fab_server.get("/lineage-plus/api/freshness", "nodags")
    assert nobody.status_code == 403 and "customer_scores" not in nobody.text


def test_declared_lineage_of_a_dag_that_never_ran_is_shown_only_to_a_user_of_every_dag(
    fab_server: FabAirflow,
) -> None:
    """A declaration names no DAG that can be trusted, so it is lineage of no DAG: a one-DAG user gets a
    Restricted node where the declared job reads the shared table, and 404 for the job, its DAG and the
    table only it declares; ``viewer`` gets the edges, in state ``declared``."""
    export = f"dataset:{WAREHOUSE}:analytics.beta_vault.scores_export"
    graph = fab_server.get("/lineage-plus/api/lineage", "viewer", node=SCORES, depth=2).json()
    states = {(e["origin"], e["destination"]): e["state"] for e in graph["edges"]}
    assert states[(SCORES, job(PLANNED))] == "declared" and states[(job(PLANNED), export)] == "declared"
    assert states[(SCORES, job(f"{ALPHA_DAG}.{ALPHA_TASK}"))] == "current"
    viewer_dag = fab_server.get("/lineage-plus/api/dag", "viewer", dag_id="perm_beta_planned").json()
    assert viewer_dag["dagJobs"] == [job(PLANNED)]
    alpha = fab_server.get("/lineage-plus/api/lineage", "alpha", node=SCORES, depth=2).json()
    downstream = {
        (e["origin"], e["destination"], e["state"]) for e in alpha["edges"] if e["origin"] == SCORES
    }
    assert downstream == {
        (SCORES, job(f"{ALPHA_DAG}.{ALPHA_TASK}"), "current"),
        (SCORES, f"restricted:downstream:{SCORES}", "restricted"),
    }
    for path, params in (
        ("/api/node", {"node": job(PLANNED)}),
        ("/api/node", {"node": export}),
        ("/api/lineage", {"node": export}),
        ("/api/dag", {"dag_id": "perm_beta_planned"}),
        ("/api/task-instance", {"dag_id": "perm_beta_planned", "task_id": "export_scores"}),
    ):
        assert fab_server.get(f"/lineage-plus{path}", "alpha", **params).status_code == 404, path
    details = fab_server.get("/lineage-plus/api/node", "alpha", node=SCORES).json()
    assert details["consumers"] == [job(f"{ALPHA_DAG}.{ALPHA_TASK}")] and details["restrictedConsumers"]
    assert fab_server.get("/lineage-plus/api/search", "alpha", q="export").json()["results"] == []


def test_the_time_range_of_a_one_dag_user_is_that_of_the_runs_they_may_see(
    fab_server: FabAirflow, permission_pipeline: PermissionPipeline
) -> None:
    """beta ran first: ``viewer``'s range starts at beta's first event, ``alpha``'s at alpha's."""
    from airflow_lineage_plus.timestamps import to_micros

    def first(events: list[dict]) -> int:
        return min(to_micros(e["eventTime"]) for e in events if "run" in e)

    every = fab_server.get("/lineage-plus/api/time-range", "viewer").json()
    alpha = fab_server.get("/lineage-plus/api/time-range", "alpha").json()
    assert to_micros(every["from"]) == first(permission_pipeline.beta.events)
    assert to_micros(alpha["from"]) == first(permission_pipeline.alpha.events)
    assert to_micros(alpha["to"]) <= to_micros(every["to"])


def test_a_hidden_run_and_a_run_that_does_not_exist_get_the_same_answer(
    fab_server: FabAirflow, values: RouteValues
) -> None:
    hidden = [fab_server.get("/lineage-plus/api/run", "alpha", run=run) for run in values.beta_run_ids]
    missing = fab_server.get("/lineage-plus/api/run", "alpha", run="0190aaaa-0000-7000-8000-000000000000")
    assert {(r.status_code, r.text) for r in hidden} == {(missing.status_code, missing.text)}
    assert missing.status_code == 404


@pytest.mark.parametrize(
    ("user", "status"), [("writer", 400), ("viewer", 403), ("alpha", 403), ("nodags", 403), (None, 401)]
)
def test_only_a_user_granted_lineage_plus_ingest_may_post_events(
    fab_server: FabAirflow, user: str | None, status: int
) -> None:
    # not an event: who may write is decided first, so the writer gets the shape's 400 and the others
    # their 403/401; nothing is stored either way
    before = _stored(fab_server)
    response = fab_server.post("/lineage-plus/api/v1/lineage", user, b'{"eventType": "COMPLETE"}')
    assert response.status_code == status, response.text
    detail = response.json()["detail"]
    expected = {400: "eventTime", 403: "Lineage Plus Ingest", 401: "Not authenticated"}[status]
    assert expected in detail, detail
    assert _stored(fab_server) == before


def _stored(server: FabAirflow) -> int:
    """Events in the store the FAB server writes (``[lineage_plus] store_url``: beside its event log)."""
    store = LineageStore(
        sqlite_url(Path(server.env["AIRFLOW__LINEAGE_PLUS__EVENT_LOG_PATH"]).with_suffix(".db"))
    )
    try:
        return store.count()
    finally:
        store.close()


def _cli(*args: str) -> tuple[int, str, str]:
    from airflow_lineage_plus.cli.app import run

    return run(list(args))


def test_the_cli_asking_a_remote_airflow_answers_with_that_users_rights(
    fab_server: FabAirflow, permission_pipeline: PermissionPipeline
) -> None:
    where = ["--namespace", WAREHOUSE, "--name", "analytics.shared.customer_scores", "--format", "json"]
    remote = {
        user: ["--airflow", fab_server.base, "--token", fab_server.token(user)]
        for user in ("alpha", "viewer")
    }
    status, out, err = _cli(*remote["alpha"], "upstream", *where, "--depth", "4")
    assert (status, err) == (0, ""), err
    view = fab_server.get("/lineage-plus/api/lineage", "alpha", node=SCORES, depth=4, direction="upstream")
    answer = json.loads(out)
    assert answer == {k: v for k, v in view.json().items() if k != "failedUpstream"}
    assert answer["nodes"] and [secret for secret in BETA_STRINGS if secret in out] == []

    # a reader of every DAG gets what the CLI reading the same lineage on the server's machine prints
    local = _cli("--events", str(permission_pipeline.log), "upstream", *where, "--depth", "4")
    assert _cli(*remote["viewer"], "upstream", *where, "--depth", "4") == local
    assert "perm_beta." in local[1]  # the beta task that writes the table
    for command in ("impact", "what-changed", "failed-upstream"):
        status, out, err = _cli(*remote["alpha"], command, *where)
        assert status in (0, 4) and err == "" and json.loads(out)["target"], (command, err)
        assert [secret for secret in BETA_STRINGS if secret in out] == [], command

    unknown = ["--namespace", WAREHOUSE, "--name", "analytics.no_such_table"]
    assert _cli(*remote["alpha"], "upstream", *unknown)[0] == 2
    status, _, err = _cli("--airflow", fab_server.base, "--token", "forged.jwt.token", "upstream", *unknown)
    assert status == 1 and "refused the token (401)" in err
    status, _, err = _cli(*remote["alpha"], "lint-names")
    assert status == 2 and "lint-names reads a local source" in err
