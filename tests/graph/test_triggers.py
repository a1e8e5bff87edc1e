"""Cross-DAG lineage (graph/triggers.py): an asset-triggered DAG run is linked to the DAG run whose asset
event started it, from the provider's ``jobDependencies`` facet, in a lineage store and in a raw log."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from airflow_lineage_plus.graph import LineageQueries, open_source
from airflow_lineage_plus.timestamps import to_micros
from tests.support.graph_builders import (
    at,
    cross_dag_world,
    dataset_node,
    job_node,
    run_id,
    write_log,
)
from tests.support.store_engines import store_source_of

REPORT = dataset_node("report")
ORDERS_DAG, SUMMARIZE = job_node("xdag_orders"), job_node("xdag_report.summarize")
TRIGGER = {
    "runId": run_id("xdag_orders-run"),
    "state": "FAILED",
    "taskJob": job_node("xdag_orders.extract"),
    "taskRunId": run_id("orders-extract"),
    "triggeredRunId": run_id("xdag_report-run"),
}


@pytest.fixture(params=["store", "log"])
def source(request: pytest.FixtureRequest, tmp_path: Path) -> Any:
    log = write_log(tmp_path / "events.jsonl", cross_dag_world())
    return store_source_of(log) if request.param == "store" else open_source(events=log)


def _edges(answer: dict[str, Any]) -> list[tuple[str, str, str]]:
    return [(e["origin"], e["destination"], e["state"]) for e in answer["edges"]]


def test_upstream_crosses_a_triggered_edge_naming_the_upstream_dag_run(source: Any) -> None:
    answer = LineageQueries(source).upstream(REPORT)
    assert _edges(answer) == [
        (dataset_node("orders"), SUMMARIZE, "current"),
        (ORDERS_DAG, SUMMARIZE, "triggered"),
        (job_node("xdag_orders.extract"), dataset_node("orders"), "current"),
        (SUMMARIZE, REPORT, "current"),
    ]
    triggered = next(e for e in answer["edges"] if e["state"] == "triggered")
    assert triggered["triggers"] == [TRIGGER]
    dag = next(n for n in answer["nodes"] if n["id"] == ORDERS_DAG)
    assert (dag["depth"], dag["latestRun"]["state"]) == (2, "FAILED")


def test_failed_upstream_names_the_failed_dag_run_that_fed_the_asset(source: Any) -> None:
    answer = LineageQueries(source).failed_upstream(REPORT)
    assert [n["id"] for n in answer["nodes"]] == [ORDERS_DAG]
    assert _edges(answer) == [(ORDERS_DAG, SUMMARIZE, "triggered"), (SUMMARIZE, REPORT, "current")]


def test_the_failed_dag_run_that_fed_the_asset_is_named_though_a_later_run_of_its_dag_completed(
    tmp_path: Path,
) -> None:
    source = store_source_of(write_log(tmp_path / "rerun.jsonl", cross_dag_world(rerun=True)))
    answer = LineageQueries(source).failed_upstream(REPORT)
    assert [(n["id"], n["latestRun"]["runId"], n["latestRun"]["state"]) for n in answer["nodes"]] == [
        (ORDERS_DAG, run_id("xdag_orders-rerun"), "COMPLETED")
    ]
    triggered = next(e for e in answer["edges"] if e["state"] == "triggered")
    assert triggered["triggers"] == [TRIGGER]


def test_a_successful_upstream_dag_run_is_not_a_failed_upstream(tmp_path: Path) -> None:
    source = store_source_of(write_log(tmp_path / "ok.jsonl", cross_dag_world(orders_fail=False)))
    assert LineageQueries(source).failed_upstream(REPORT)["nodes"] == []
    answer = LineageQueries(source).upstream(REPORT)
    assert [e["triggers"][0]["state"] for e in answer["edges"] if e["state"] == "triggered"] == ["COMPLETED"]


def test_as_of_a_time_the_triggered_edge_and_the_upstream_state_are_those_of_that_time(source: Any) -> None:
    queries = LineageQueries(source)
    running = queries.upstream(REPORT, as_of=to_micros(at(4.6)))
    edge = next(e for e in running["edges"] if e["state"] == "triggered")
    assert (edge["origin"], edge["destination"]) == (ORDERS_DAG, SUMMARIZE)
    assert edge["triggers"] == [{**TRIGGER, "state": "RUNNING"}]
    assert queries.failed_upstream(REPORT, as_of=to_micros(at(4.6)))["nodes"] == []
    failed = queries.failed_upstream(REPORT, as_of=to_micros(at(5.5)))
    assert [n["id"] for n in failed["nodes"]] == [ORDERS_DAG]


def test_the_dag_job_of_the_triggered_run_has_the_edge_too(source: Any) -> None:
    answer = LineageQueries(source).upstream(job_node("xdag_report"))
    assert _edges(answer) == [(ORDERS_DAG, job_node("xdag_report"), "triggered")]


def test_a_reader_who_may_not_read_the_upstream_dag_learns_nothing_of_its_run(source: Any) -> None:
    reader = LineageQueries(source).scoped(lambda dag_id: dag_id == "xdag_report")
    answer = reader.upstream(REPORT)
    text = repr(answer)
    assert "xdag_orders" not in text and run_id("xdag_orders-run") not in text
    assert run_id("orders-extract") not in text
    # the triggered edge is cut where the hidden DAG's would be, as a restricted placeholder of the task
    assert [n["id"] for n in answer["nodes"]] == [
        SUMMARIZE,
        dataset_node("orders"),
        "restricted:upstream:" + dataset_node("orders"),
        "restricted:upstream:" + SUMMARIZE,
    ]
    assert reader.failed_upstream(REPORT)["nodes"] == []


def test_the_triggered_runs_details_name_the_upstream_task_run_only_to_a_reader_of_its_dag(
    source: Any,
) -> None:
    run = run_id("xdag_report-run")
    everyone = LineageQueries(source).run_details(run)["facets"]["jobDependencies"]["upstream"]
    assert [(e["job"]["name"], e["run"]["runId"]) for e in everyone] == [
        ("xdag_orders.extract", run_id("orders-extract"))
    ]
    reader = LineageQueries(source).scoped(lambda dag_id: dag_id == "xdag_report")
    details = reader.run_details(run)
    assert details["facets"]["jobDependencies"]["upstream"] == []
    assert "xdag_orders" not in repr(details) and run_id("orders-extract") not in repr(details)
