"""The Marquez source against a stand-in served exactly as Marquez's openapi.yml: same answers as the log."""

from __future__ import annotations

import json
import socket
import time
from pathlib import Path
from typing import Any

import httpx
import pytest
from fake_marquez import FakeMarquez
from graph_builders import (
    dataset_node,
    ds,
    event,
    facet,
    job_node,
    orders_pipeline,
    run_id,
    run_pair,
    write_log,
)
from marquez_contract import validate, validate_response
from marquez_fixture import API_KEY

from airflow_lineage_plus.graph import LineageQueries, NodeNotFound, SourceUnavailable, open_source

SPEC = Path(__file__).resolve().parents[2].parent / "shared" / "spec" / "marquez"


def _events() -> list[dict[str, Any]]:
    events = orders_pipeline()
    events += run_pair(
        "orders.report",
        "report-2",
        14,
        15,
        skipped="no new partitions",
        inputs=[ds("fct_daily_orders")],
        outputs=[ds("orders_report")],
    )
    # a later DAG run in which the scheduler skipped `report` (no task events, only airflowState)
    parent = facet(run={"runId": run_id("dagrun-9")}, job={"namespace": "pipeline", "name": "orders"})
    load = run_pair(
        "orders.load_orders", "load-9", 41, 42, inputs=[ds("raw_orders")], outputs=[ds("stg_orders")]
    )
    for item in load:
        item["run"]["facets"]["parent"] = parent
    events += [event("START", "orders", "dagrun-9", 40), *load]
    events.append(
        event(
            "COMPLETE",
            "orders",
            "dagrun-9",
            45,
            run_facets={
                "airflowState": facet(
                    dagRunState="success", tasksState={"load_orders": "success", "report": "skipped"}
                )
            },
        )
    )
    return events


def _post_all(marquez: FakeMarquez, events: list[dict[str, Any]]) -> None:
    for item in events:
        response = httpx.post(
            f"{marquez.url}/api/v1/lineage",
            json=item,
            headers={"Authorization": f"Bearer {API_KEY}"},
            timeout=5,
        )
        assert response.status_code == 201


def _ask(queries: LineageQueries) -> dict[str, Any]:
    return {
        "up": queries.upstream(dataset_node("orders_report"), 10),
        "up2": queries.upstream(dataset_node("orders_report"), 2),
        "down": queries.downstream(dataset_node("raw_orders"), 10),
        "down_job": queries.downstream(job_node("orders.load_orders"), 3),
        "failed": queries.failed_upstream(dataset_node("orders_report"), 10),
        "impact": queries.impact(dataset_node("stg_orders"), 10),
        "schema": queries.schema_diff(dataset_node("stg_orders")),
        "proposed": queries.schema_diff(dataset_node("stg_orders"), [{"name": "order_id", "type": "INT"}]),
        "columns": queries.columns(dataset_node("fct_daily_orders"), "total_usd", 10),
        "lint": queries.lint_names(),
        "lineage": queries.lineage(dataset_node("stg_orders"), 5, limit=3),
    }


def test_marquez_source_gives_the_same_answers_as_the_event_log(
    fake_marquez: FakeMarquez, tmp_path: Path
) -> None:
    events = _events()
    _post_all(fake_marquez, list(reversed(events)))  # arrival order must not matter to either
    from_log = _ask(LineageQueries(open_source(events=write_log(tmp_path / "e.jsonl", events))))
    from_marquez = _ask(LineageQueries(open_source(marquez=fake_marquez.url, api_key=API_KEY)))
    exact_log = {key: answer.pop("exact", None) for key, answer in from_log.items()}
    exact_marquez = {key: answer.pop("exact", None) for key, answer in from_marquez.items()}
    assert from_marquez == from_log
    assert set(exact_log.values()) == {True, None}  # lint-names has no graph
    # Marquez's current edges are the latest finished run's: exact where that run completed; the failed
    # build_fct is in every neighbourhood but the column trace (Marquez's column lineage is exact)
    assert {key for key, exact in exact_marquez.items() if exact is False} == set(exact_log) - {
        "columns",
        "lint",
    }
    assert [n["latestRun"]["state"] for n in from_log["failed"]["nodes"]] == ["FAILED"]
    report = next(n for n in from_log["up2"]["nodes"] if n["id"] == job_node("orders.report"))
    # skipped by the scheduler in the last DAG run: known only from the DAG run's tasksState
    assert (report["latestRun"]["state"], report["latestRun"]["runId"]) == ("SKIPPED", None)


def test_every_fake_marquez_answer_matches_the_openapi_contract(fake_marquez: FakeMarquez) -> None:
    _post_all(fake_marquez, _events())
    queries = LineageQueries(open_source(marquez=fake_marquez.url, api_key=API_KEY))
    _ask(queries)
    queries.search("orders")
    queries.node_details(dataset_node("stg_orders"))
    job = queries.node_details(job_node("orders.build_fct"))
    queries.run_details(job["runs"][0]["runId"])
    queries.source.summary()
    checked = {validate_response(path, body) for path, body in fake_marquez.responses}
    assert checked == {
        "LineageGraph",
        "NamespaceList",
        "DatasetList",
        "Dataset",
        "DatasetVersionList",
        "JobList",
        "Job",
        "RunList",
        "Run",
        "SearchResultList",
        "column-lineage",
    }


def test_the_contract_check_accepts_marquez_examples_and_rejects_bad_shapes() -> None:
    node = json.loads((SPEC / "examples" / "lineage__node.json").read_text())
    # the example uses epoch numbers and a null where the spec says date-time strings
    node["data"]["createdAt"] = node["data"]["updatedAt"] = "2021-06-24T13:04:34Z"
    del node["data"]["lastModifiedAt"]
    validate_response("/api/v1/lineage", {"graph": [node]})
    with pytest.raises(AssertionError):
        validate_response("/api/v1/lineage", {"graph": [{**node, "type": "TABLE"}]})
    with pytest.raises(AssertionError):
        validate("Dataset", {"fields": [{"name": "a"}]})  # a field needs a type


def test_marquez_source_reads_node_and_run_details(fake_marquez: FakeMarquez) -> None:
    _post_all(fake_marquez, _events())
    queries = LineageQueries(open_source(marquez=fake_marquez.url, api_key=API_KEY))
    job = queries.node_details(job_node("orders.build_fct"))
    assert [r["state"] for r in job["runs"]] == ["FAILED", "COMPLETED"]
    assert job["owners"] == ["team:finance"] and job["outputs"] == [dataset_node("fct_daily_orders")]
    run = queries.run_details(job["runs"][0]["runId"])
    assert run["errorMessage"] == "column amount does not exist"
    assert [o["name"] for o in run["outputs"]] == ["fct_daily_orders"]
    dataset = queries.node_details(dataset_node("stg_orders"))
    assert dataset["lastSchemaChange"][0] == {
        "kind": "COLUMN_REMOVED",
        "column": "amount",
        "from": "DECIMAL",
        "to": None,
    }
    assert [n["id"] for n in queries.search("stg")] == [dataset_node("stg_orders")]
    assert dataset["columnLineage"]["amount_usd"] == [
        {
            "namespace": "warehouse",
            "name": "raw_orders",
            "column": "amount",
            "transformations": [{"type": "DIRECT", "subtype": "TRANSFORMATION", "description": None}],
        }
    ]


def test_unknown_node_in_marquez_is_node_not_found(fake_marquez: FakeMarquez) -> None:
    _post_all(fake_marquez, _events())
    queries = LineageQueries(open_source(marquez=fake_marquez.url, api_key=API_KEY))
    with pytest.raises(NodeNotFound):
        queries.upstream(dataset_node("missing"))
    with pytest.raises(NodeNotFound):
        queries.schema_diff(dataset_node("missing"))


def test_wrong_api_key_is_a_clear_source_error(fake_marquez: FakeMarquez) -> None:
    queries = LineageQueries(open_source(marquez=fake_marquez.url, api_key="wrong"))
    with pytest.raises(SourceUnavailable, match="api-key"):
        queries.upstream(dataset_node("anything"))


def test_marquez_erroring_is_a_clear_source_error(fake_marquez: FakeMarquez) -> None:
    fake_marquez.fail_status = 503
    queries = LineageQueries(open_source(marquez=fake_marquez.url, api_key=API_KEY))
    with pytest.raises(SourceUnavailable, match="503"):
        queries.upstream(dataset_node("anything"))


def test_slow_marquez_fails_within_the_timeout(fake_marquez: FakeMarquez) -> None:
    fake_marquez.delay = 3.0
    queries = LineageQueries(open_source(marquez=fake_marquez.url, api_key=API_KEY, timeout=0.3))
    began = time.monotonic()
    with pytest.raises(SourceUnavailable, match=r"did not answer within 0\.3 s"):
        queries.upstream(dataset_node("anything"))
    assert time.monotonic() - began < 2.0


def test_marquez_down_is_a_clear_source_error() -> None:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    queries = LineageQueries(open_source(marquez=f"http://127.0.0.1:{port}", timeout=1.0))
    with pytest.raises(SourceUnavailable, match="cannot reach Marquez"):
        queries.failed_upstream(dataset_node("anything"))
