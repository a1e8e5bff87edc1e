"""Query answers on hand-built graphs, in the documented JSON shape."""

from __future__ import annotations

from pathlib import Path

import pytest

from airflow_lineage_plus.graph import LineageQueries, NodeNotFound, open_source
from tests.support.graph_builders import at, dataset_node, ds, job_node, orders_pipeline, run_pair, write_log


@pytest.fixture
def orders(tmp_path: Path) -> LineageQueries:
    return LineageQueries(open_source(events=write_log(tmp_path / "events.jsonl", orders_pipeline())))


def _ids(answer: dict) -> list[tuple[str, int]]:
    return [(n["id"], n["depth"]) for n in answer["nodes"]]


def test_upstream_of_a_dataset_lists_jobs_and_datasets_by_depth(orders: LineageQueries) -> None:
    answer = orders.upstream(dataset_node("fct_daily_orders"), 10)
    assert answer["target"]["id"] == dataset_node("fct_daily_orders") and answer["target"]["depth"] == 0
    assert _ids(answer) == [
        (job_node("orders.build_fct"), 1),
        (dataset_node("stg_orders"), 2),
        (job_node("orders.load_orders"), 3),
        (dataset_node("raw_orders"), 4),
    ]
    assert {
        "origin": dataset_node("stg_orders"),
        "destination": job_node("orders.build_fct"),
        "state": "current",
    } in answer["edges"]
    assert all(n["id"] != answer["target"]["id"] for n in answer["nodes"])


def test_depth_limits_the_walk(orders: LineageQueries) -> None:
    assert _ids(orders.upstream(dataset_node("fct_daily_orders"), 2)) == [
        (job_node("orders.build_fct"), 1),
        (dataset_node("stg_orders"), 2),
    ]
    assert orders.downstream(dataset_node("raw_orders"), 0)["nodes"] == []


def test_downstream_of_a_job_and_node_shapes(orders: LineageQueries) -> None:
    answer = orders.downstream(job_node("orders.load_orders"), 2)
    dataset, job = answer["nodes"]
    assert dataset == {
        "id": dataset_node("stg_orders"),
        "type": "DATASET",
        "namespace": "warehouse",
        "name": "stg_orders",
        "depth": 1,
        "fields": [
            {"name": "order_id", "type": "BIGINT"},
            {"name": "amount_usd", "type": "DECIMAL"},
            {"name": "day", "type": "DATE"},
        ],
    }
    assert job["id"] == job_node("orders.build_fct") and job["type"] == "JOB" and job["depth"] == 2
    assert set(job["latestRun"]) == {"runId", "state", "startedAt", "endedAt", "errorMessage"}


def test_failed_upstream_names_the_failed_job_with_time_and_error(orders: LineageQueries) -> None:
    answer = orders.failed_upstream(dataset_node("orders_report"), 10)
    assert [n["id"] for n in answer["nodes"]] == [job_node("orders.build_fct")]
    run = answer["nodes"][0]["latestRun"]
    assert (run["state"], run["startedAt"], run["endedAt"]) == ("FAILED", at(12), at(13))
    assert run["errorMessage"] == "column amount does not exist"
    # the edges lead from the failed job to the target
    assert {(e["origin"], e["destination"]) for e in answer["edges"]} == {
        (job_node("orders.build_fct"), dataset_node("fct_daily_orders")),
        (dataset_node("fct_daily_orders"), job_node("orders.report")),
        (job_node("orders.report"), dataset_node("orders_report")),
    }


def test_failed_upstream_is_empty_when_the_latest_runs_succeeded(tmp_path: Path) -> None:
    events = orders_pipeline() + run_pair(
        "orders.build_fct", "fct-3", 20, 21, inputs=[ds("stg_orders")], outputs=[ds("fct_daily_orders")]
    )
    queries = LineageQueries(open_source(events=write_log(tmp_path / "e.jsonl", events)))
    assert queries.failed_upstream(dataset_node("orders_report"))["nodes"] == []


def test_aborted_latest_run_counts_as_failed(tmp_path: Path) -> None:
    events = run_pair("a.job", "a1", 0, 1, "ABORT", outputs=[ds("out")])
    queries = LineageQueries(open_source(events=write_log(tmp_path / "e.jsonl", events)))
    assert [n["latestRun"]["state"] for n in queries.failed_upstream(dataset_node("out"))["nodes"]] == [
        "ABORTED"
    ]


def test_impact_lists_downstream_owners_and_level(orders: LineageQueries) -> None:
    answer = orders.impact(dataset_node("raw_orders"), 10)
    assert answer["level"] == "MEDIUM"  # three downstream jobs
    assert answer["owners"] == ["team:analytics", "team:bi", "team:data-eng", "team:finance"]
    assert [n["id"] for n in answer["nodes"] if n["type"] == "JOB"] == [
        job_node("orders.load_orders"),
        job_node("orders.build_fct"),
        job_node("orders.report"),
    ]


@pytest.mark.parametrize(("readers", "level"), [(1, "LOW"), (2, "MEDIUM"), (5, "MEDIUM"), (6, "HIGH")])
def test_impact_level_thresholds(tmp_path: Path, readers: int, level: str) -> None:
    events = []
    for i in range(readers):
        events += run_pair(f"reader_{i}", f"r{i}", 0, 1, inputs=[ds("shared")], outputs=[ds(f"out_{i}")])
    queries = LineageQueries(open_source(events=write_log(tmp_path / "e.jsonl", events)))
    assert queries.impact(dataset_node("shared"))["level"] == level


def test_schema_diff_between_last_two_versions(orders: LineageQueries) -> None:
    answer = orders.schema_diff(dataset_node("stg_orders"))
    assert answer["changes"] == [
        {"kind": "COLUMN_REMOVED", "column": "amount", "from": "DECIMAL", "to": None},
        {"kind": "TYPE_CHANGED", "column": "order_id", "from": "INTEGER", "to": "BIGINT"},
        {"kind": "COLUMN_ADDED", "column": "amount_usd", "from": None, "to": "DECIMAL"},
        {"kind": "COLUMN_ADDED", "column": "day", "from": None, "to": "DATE"},
    ]


def test_schema_diff_against_a_proposed_schema(orders: LineageQueries) -> None:
    proposed = [{"name": "order_id", "type": "BIGINT"}, {"name": "day", "type": "TIMESTAMP"}]
    answer = orders.schema_diff(dataset_node("stg_orders"), proposed)
    assert answer["changes"] == [
        {"kind": "COLUMN_REMOVED", "column": "amount_usd", "from": "DECIMAL", "to": None},
        {"kind": "TYPE_CHANGED", "column": "day", "from": "DATE", "to": "TIMESTAMP"},
    ]


def test_schema_diff_with_one_version_has_no_changes(orders: LineageQueries) -> None:
    assert orders.schema_diff(dataset_node("fct_daily_orders"))["changes"] == []


def test_column_trace_upstream_and_downstream_with_transformations(orders: LineageQueries) -> None:
    answer = orders.columns(dataset_node("fct_daily_orders"), "total_usd", 10)
    assert answer["column"] == "total_usd"
    assert answer["upstream"] == [
        {
            "namespace": "warehouse",
            "name": "stg_orders",
            "column": "amount_usd",
            "depth": 1,
            "transformations": [{"type": "DIRECT", "subtype": "AGGREGATION", "description": None}],
        },
        {
            "namespace": "warehouse",
            "name": "raw_orders",
            "column": "amount",
            "depth": 2,
            "transformations": [{"type": "DIRECT", "subtype": "TRANSFORMATION", "description": None}],
        },
    ]
    assert answer["downstream"] == [
        {
            "namespace": "warehouse",
            "name": "orders_report",
            "column": "total_usd",
            "depth": 1,
            "transformations": [{"type": "DIRECT", "subtype": "IDENTITY", "description": None}],
        },
    ]


def test_column_trace_uses_the_latest_column_lineage_only(orders: LineageQueries) -> None:
    # stg_orders.amount fed by raw_orders.amount only in the first load; now amount_usd is
    answer = orders.columns(dataset_node("raw_orders"), "amount", 1)
    assert [(r["name"], r["column"]) for r in answer["downstream"]] == [("stg_orders", "amount_usd")]


def test_unknown_nodes_and_columns_raise_node_not_found(orders: LineageQueries) -> None:
    with pytest.raises(NodeNotFound):
        orders.upstream(dataset_node("nope"))
    with pytest.raises(NodeNotFound):
        orders.failed_upstream(job_node("orders.build_fct"))  # a job is not a dataset
    with pytest.raises(NodeNotFound):
        orders.columns(dataset_node("fct_daily_orders"), "no_such_column")


def test_lineage_both_ways_is_cut_at_the_limit_and_reports_what_was_cut(orders: LineageQueries) -> None:
    full = orders.lineage(dataset_node("stg_orders"), 5)
    assert {n["id"] for n in full["nodes"]} == {
        job_node("orders.load_orders"),
        dataset_node("raw_orders"),
        job_node("orders.build_fct"),
        dataset_node("fct_daily_orders"),
        job_node("orders.report"),
        dataset_node("orders_report"),
    }
    assert "truncated" not in full
    cut = orders.lineage(dataset_node("stg_orders"), 5, limit=2)
    assert [n["depth"] for n in cut["nodes"]] == [1, 1]
    assert cut["truncated"] == {job_node("orders.build_fct"): 1, job_node("orders.load_orders"): 1}
    kept = {n["id"] for n in cut["nodes"]} | {cut["target"]["id"]}
    assert all(e["origin"] in kept and e["destination"] in kept for e in cut["edges"])


def test_search_ranks_exact_and_prefix_matches_first(orders: LineageQueries) -> None:
    found = [n["id"] for n in orders.search("orders", 3)]
    assert found == [job_node("orders.report"), dataset_node("orders_report"), job_node("orders.build_fct")]
    assert orders.search("stg_orders")[0] == {
        "id": dataset_node("stg_orders"),
        "type": "DATASET",
        "namespace": "warehouse",
        "name": "stg_orders",
        "depth": 0,
    }


def test_node_details_of_a_dataset_and_a_job(orders: LineageQueries) -> None:
    dataset = orders.node_details(dataset_node("stg_orders"))
    assert [v[0]["type"] for v in dataset["schemaVersions"]] == ["BIGINT", "INTEGER"]
    assert dataset["lastSchemaChange"][0]["kind"] == "COLUMN_REMOVED"
    assert dataset["owners"] == ["team:analytics"]
    assert dataset["producers"] == [job_node("orders.load_orders")]
    assert dataset["columnLineage"]["day"][0]["column"] == "ts"
    job = orders.node_details(job_node("orders.build_fct"))
    assert [r["state"] for r in job["runs"]] == ["FAILED", "COMPLETED"]
    assert job["owners"] == ["team:finance"] and job["outputs"] == [dataset_node("fct_daily_orders")]
    run = orders.run_details(job["runs"][0]["runId"])
    assert (
        run["state"] == "FAILED"
        and run["facets"]["errorMessage"]["message"] == "column amount does not exist"
    )
    assert [o["name"] for o in run["outputs"]] == ["fct_daily_orders"]
    with pytest.raises(NodeNotFound):
        orders.run_details("00000000-0000-0000-0000-000000000000")


def test_lint_names_groups_probable_duplicates(tmp_path: Path) -> None:
    events = run_pair(
        "lake.copy",
        "c1",
        0,
        1,
        inputs=[
            ds("orders/", namespace="s3://lake"),
            ds("orders", namespace="s3a://lake"),
            ds("orders/dt=2026-03-01", namespace="s3://lake"),
            ds("orders/part-0000.parquet", namespace="s3://lake"),
            ds("Customers", namespace="s3://lake"),
            ds("customers", namespace="s3://lake"),
            ds("a.csv", namespace="s3://lake"),
            ds("b.csv", namespace="s3://lake"),
        ],
    )
    queries = LineageQueries(open_source(events=write_log(tmp_path / "e.jsonl", events)))
    groups = queries.lint_names()["groups"]
    assert [(g["suggested"]["name"], g["reason"]) for g in groups] == [
        ("customers", "case"),
        ("orders", "scheme alias, trailing slash, file under a prefix, partition suffix"),
    ]
    assert len(groups[1]["datasets"]) == 4 and groups[1]["suggested"]["namespace"] == "s3://lake"
