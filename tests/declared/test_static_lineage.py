"""Static lineage of real DAG files: ``publish-static`` parses them (Airflow's DagBag), sends one JobEvent per
declaring task, the graph shows those edges as declared, and after the DAG's first real run (``airflow dags
test`` through the real OpenLineage provider) the run's lineage replaces them, node for node."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from airflow_lineage_plus.cli import run
from airflow_lineage_plus.graph import LineageQueries, open_source
from tests.support.fake_marquez import FakeMarquez
from tests.support.harness import _SESSION_LOG, AirflowRunner, DagRunResult, read_events
from tests.support.openlineage_spec import validate_events

pytestmark = pytest.mark.airflow

DAGS = Path(__file__).parent / "dags"
BROKEN = Path(__file__).parent / "broken_dags"
NS = "test-airflow"  # [openlineage] namespace of the test harness
CONNECTION = {"AIRFLOW_CONN_STATIC_WAREHOUSE": "postgres://warehouse.example.com:5432/analytics"}
WH = "postgres://warehouse.example.com:5432"
MART = ["--namespace", WH, "--name", "analytics.marts.orders_by_day"]
REPORT = ["--namespace", "s3://static-lake", "--name", "reports/daily"]
DECLARING = {
    "static_orders.load_stg_orders",
    "static_orders.build_mart",
    "static_orders.export_report",
    "static_unresolved.load_part",
    "static_unresolved.snapshot",
}


def _publish(*argv: str) -> tuple[int, str, str]:
    patch = pytest.MonkeyPatch()
    for key, value in CONNECTION.items():
        patch.setenv(key, value)
    try:
        return run([*argv])
    finally:
        patch.undo()


@pytest.fixture(scope="module")
def published(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict[str, Any], str]:
    """The test DAGs' declared lineage published to an event log (one parse, in this process)."""
    log = tmp_path_factory.mktemp("static") / "events.jsonl"
    code, out, err = _publish("--events", str(log), "publish-static", "--dags", str(DAGS), "--format", "json")
    assert code == 0, err
    return log, json.loads(out), err


@pytest.fixture(scope="module")
def first_run(airflow_db: Path, tmp_path_factory: pytest.TempPathFactory) -> DagRunResult:
    """The first real run of ``static_orders``."""
    runner = AirflowRunner(tmp_path_factory.mktemp("static-run"))
    result = runner.run(DAGS / "static_orders.py", dag_id="static_orders", env=CONNECTION)
    assert result.returncode == 0, result.output[-3000:]
    return result


def _events(log: Path) -> dict[str, dict[str, Any]]:
    return {event["job"]["name"]: event for event in read_events(log)}


def _pairs(datasets: list[dict[str, Any]]) -> list[tuple[str, str]]:
    return [(d["namespace"], d["name"]) for d in datasets]


def _json(*argv: str) -> dict[str, Any]:
    code, out, err = run([*argv, "--format", "json"])
    assert code == 0, err
    answer: dict[str, Any] = json.loads(out)
    return answer


def test_publish_static_sends_one_job_event_per_declaring_task_valid_against_the_spec(
    published: tuple[Path, dict[str, Any], str],
) -> None:
    log, summary, err = published
    assert (summary["dags"], summary["jobs"], summary["sent"], summary["failed"]) == (2, 5, 5, 0)
    assert summary["unresolvedConnections"] == ["nowhere_wh"] and "nowhere_wh" in err
    events = read_events(log)
    assert {e["job"]["name"] for e in events} == DECLARING  # notify declares nothing: no event
    assert all("run" not in e and e["job"]["namespace"] == NS for e in events)
    assert validate_events(events) == 5


def test_declared_datasets_carry_schema_column_lineage_owners_and_connection_names(
    published: tuple[Path, dict[str, Any], str],
) -> None:
    events = _events(published[0])
    load = events["static_orders.load_stg_orders"]
    assert _pairs(load["inputs"]) == [("s3://static-lake", "orders")]
    [stg] = load["outputs"]
    assert (stg["namespace"], stg["name"]) == (WH, "analytics.staging.stg_orders")  # through the connection
    assert [f["name"] for f in stg["facets"]["schema"]["fields"]] == ["order_id", "amount_usd"]
    [source] = stg["facets"]["columnLineage"]["fields"]["order_id"]["inputFields"]
    assert (source["namespace"], source["name"], source["field"]) == (
        "s3://static-lake",
        "orders",
        "order_id",
    )
    assert [o["name"] for o in load["job"]["facets"]["ownership"]["owners"]] == ["team:orders"]
    sql = load["job"]["facets"]["sql"]["query"]
    assert "s3cr3t-pw" not in sql and "postgres://loader:***@db:5432/raw" in sql  # redacted before it left
    mart = events["static_orders.build_mart"]
    assert _pairs(mart["inputs"]) == [(WH, "analytics.staging.stg_orders"), ("s3://static-lake", "fx")]
    assert _pairs(mart["outputs"]) == [
        (WH, "analytics.marts.orders_by_day"),
        ("s3://static-lake", "marts/orders_by_day"),
    ]
    report = events["static_orders.export_report"]
    assert (_pairs(report["inputs"]), _pairs(report["outputs"])) == (
        [("s3://static-lake", "marts/orders_by_day")],
        [("s3://static-lake", "reports/daily")],
    )
    # a mapped task, and a connection not defined here: the table keeps its connection name
    assert _pairs(events["static_unresolved.load_part"]["outputs"]) == [
        ("x-sql-conn://nowhere_wh", "sales.public.accounts")
    ]
    [snapshot] = events["static_unresolved.snapshot"]["outputs"]
    assert snapshot["facets"]["schema"]["fields"][0]["name"] == "account_id"  # an inlet's own facets stay


def test_a_dag_that_never_ran_shows_its_declared_lineage_in_the_cli(
    published: tuple[Path, dict[str, Any], str],
) -> None:
    log = str(published[0])
    answer = _json("--events", log, "upstream", *REPORT)
    assert {e["state"] for e in answer["edges"]} == {"declared"} and len(answer["edges"]) == 7
    jobs = [n for n in answer["nodes"] if n["type"] == "JOB"]
    assert len(jobs) == 3 and all(n["declared"] and n["latestRun"] is None for n in jobs)
    code, text, _ = run(["--events", log, "upstream", *REPORT])
    assert code == 0 and text.count("DECLARED (in DAG code; no run yet)") == 3
    assert "7 of 7 edges are declared in DAG code" in text
    assert _json("--events", log, "upstream", *REPORT, "--no-include-declared")["nodes"] == []


def test_after_the_first_run_the_runs_lineage_replaces_the_declaration(
    published: tuple[Path, dict[str, Any], str], first_run: DagRunResult, tmp_path: Path
) -> None:
    declared = _json("--events", str(published[0]), "upstream", *REPORT)
    both = tmp_path / "events.jsonl"
    both.write_text(published[0].read_text() + "".join(json.dumps(e) + "\n" for e in first_run.events))
    after = _json("--events", str(both), "upstream", *REPORT)
    # the run reports exactly what was declared, under the same job and dataset ids
    assert [(e["origin"], e["destination"]) for e in after["edges"]] == [
        (e["origin"], e["destination"]) for e in declared["edges"]
    ]
    assert {e["state"] for e in after["edges"]} == {"current"}
    jobs = [n for n in after["nodes"] if n["type"] == "JOB"]
    assert [n["latestRun"]["state"] for n in jobs] == ["COMPLETED"] * 3
    assert not any("declared" in n for n in jobs)
    # the declaration of a task that has still not run stays declared
    still = _json(
        "--events",
        str(both),
        "upstream",
        "--namespace",
        "x-sql-conn://nowhere_wh",
        "--name",
        "sales.public.accounts",
    )
    assert {e["state"] for e in still["edges"]} == {"declared"}


def test_publish_static_sends_to_marquez_and_to_the_providers_transport(fake_marquez: FakeMarquez) -> None:
    code, _, err = _publish(
        "--marquez", fake_marquez.url, "--api-key", "test-key", "publish-static", "--dags", str(DAGS)
    )
    assert code == 0, err
    queries = LineageQueries(open_source(marquez=fake_marquez.url, api_key="test-key"))
    answer = queries.upstream(f"dataset:{WH}:analytics.marts.orders_by_day", 4)
    assert {e["state"] for e in answer["edges"]} == {"declared"} and len(answer["edges"]) == 5
    before = len(read_events(_SESSION_LOG))
    code, out, err = _publish("publish-static", "--dags", str(DAGS), "--namespace-suffix=-ci")
    assert code == 0, err
    assert "the OpenLineage provider's lineage_plus_event_log transport" in out
    sent = read_events(_SESSION_LOG)[before:]
    assert {e["job"]["name"] for e in sent} == DECLARING
    assert {e["job"]["namespace"] for e in sent} == {f"{NS}-ci"}


def test_publish_static_fails_naming_a_dag_file_with_an_authoring_mistake(tmp_path: Path) -> None:
    log = tmp_path / "events.jsonl"
    code, _, err = _publish("--events", str(log), "publish-static", "--dags", str(BROKEN))
    assert code == 1
    assert "broken.py" in err and "not a declared input" in err
    assert read_events(log) == []
