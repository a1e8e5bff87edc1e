"""Declared lineage rides on the provider's own task events: one run, datasets, facets, runtime figures."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path
from typing import Any

import pytest

from tests.support.harness import AirflowRunner, DagRunResult
from tests.support.openlineage_spec import validate_events

pytestmark = pytest.mark.airflow

DAGS = Path(__file__).parent / "dags"


@pytest.fixture(scope="module")
def declared(airflow_db: Path, tmp_path_factory: pytest.TempPathFactory) -> DagRunResult:
    workdir = tmp_path_factory.mktemp("declared")
    warehouse = workdir / "warehouse" / "analytics.duckdb"  # DuckDB names the database after the file
    warehouse.parent.mkdir()
    result = AirflowRunner(workdir).run(
        DAGS / "declared_lineage.py",
        dag_id="declared_lineage",
        env={
            "LINEAGE_PLUS_REPOSITORY_URL": "https://git.example.com/acme/pipelines",
            "GIT_COMMIT": "3f1c2e9",
            "AIRFLOW_CONN_WAREHOUSE": json.dumps(
                {"conn_type": "duckdb", "extra": {"database": str(warehouse)}}
            ),
        },
    )
    assert result.returncode == 0, result.output[-4000:]
    return result


def _terminal(result: DagRunResult, task_id: str) -> list[dict[str, Any]]:
    return [e for e in result.task_events(task_id) if e["eventType"] in {"COMPLETE", "FAIL"}]


def _dataset(event: dict[str, Any], kind: str, namespace: str, name: str) -> dict[str, Any]:
    found = [d for d in event[kind] if (d["namespace"], d["name"]) == (namespace, name)]
    assert len(found) == 1, f"{namespace}/{name} appears {len(found)} times in {kind}: {event[kind]}"
    return found[0]


def test_every_event_is_valid_against_the_spec_and_our_schemas(declared: DagRunResult) -> None:
    assert validate_events(declared.events) == len(declared.events) > 0


def test_each_task_instance_has_exactly_one_run_with_one_start_and_one_terminal_event(
    declared: DagRunResult,
) -> None:
    per_run = Counter((e["run"]["runId"], e["eventType"]) for e in declared.task_events())
    runs = {run for run, _ in per_run}
    # plain: load_stg_orders, merged, bash_export, prepare_warehouse, sql_rollup, export_eu, profile_frames;
    # mapped: export_shard x 3, export_region x 2
    assert len(runs) == 7 + 3 + 2
    for run in runs:
        assert per_run[(run, "START")] == 1
        assert per_run[(run, "COMPLETE")] == 1
    assert sum(per_run.values()) == 2 * len(runs)


def test_declared_inputs_and_outputs_are_normalised_and_on_start_and_complete(declared: DagRunResult) -> None:
    events = declared.task_events("load_stg_orders")
    assert [e["eventType"] for e in events] == ["START", "COMPLETE"]
    for event in events:
        assert {(d["namespace"], d["name"]) for d in event["inputs"]} == {
            ("s3://raw-data-lake", "orders"),
            ("postgres://db.internal:5432", "analytics.public.customers"),
        }
        assert ("postgres://db.internal:5432", "analytics.staging.stg_orders") in {
            (d["namespace"], d["name"]) for d in event["outputs"]
        }


def test_partition_of_a_declared_input_is_kept_in_a_subset_facet(declared: DagRunResult) -> None:
    (complete,) = _terminal(declared, "load_stg_orders")
    raw = _dataset(complete, "inputs", "s3://raw-data-lake", "orders")
    assert "2024-01-15" in str(raw["inputFacets"]["subset"])


def test_schema_column_lineage_docs_owners_and_custom_facets_reach_the_output(declared: DagRunResult) -> None:
    (complete,) = _terminal(declared, "load_stg_orders")
    stg = _dataset(complete, "outputs", "postgres://db.internal:5432", "analytics.staging.stg_orders")
    facets = stg["facets"]
    assert [f["name"] for f in facets["schema"]["fields"]] == ["order_id", "customer_id", "total_amount_usd"]
    assert facets["schema"]["fields"][2]["type"] == "NUMERIC(12,2)"
    customer = facets["columnLineage"]["fields"]["customer_id"]["inputFields"]
    assert {
        (f["name"], f["field"], f["transformations"][0]["type"], f["transformations"][0]["subtype"])
        for f in customer
    } == {
        ("orders", "customer_id", "DIRECT", "IDENTITY"),
        ("analytics.public.customers", "customer_id", "INDIRECT", "JOIN"),
    }
    total = facets["columnLineage"]["fields"]["total_amount_usd"]["inputFields"][0]
    assert total["transformations"][0]["subtype"] == "TRANSFORMATION"
    assert facets["documentation"]["description"] == "Staged orders"
    assert facets["ownership"]["owners"] == [{"name": "team:analytics", "type": "team"}]
    assert facets["lineagePlus_dataContract"]["version"] == "2.1.0"


def test_job_facets_carry_sql_owners_docs_and_custom_team_and_slo(declared: DagRunResult) -> None:
    (complete,) = _terminal(declared, "load_stg_orders")
    job = complete["job"]["facets"]
    assert job["sql"]["query"].startswith("INSERT INTO staging.stg_orders")
    assert job["lineagePlus_owningTeam"]["name"] == "data-eng"
    assert job["lineagePlus_sloTier"] == {
        **job["lineagePlus_sloTier"],
        "tier": "gold",
        "freshnessMinutes": 60,
    }


def test_source_code_location_comes_from_the_environment(declared: DagRunResult) -> None:
    (complete,) = _terminal(declared, "load_stg_orders")
    location = complete["job"]["facets"]["sourceCodeLocation"]
    assert location["repoUrl"] == "https://git.example.com/acme/pipelines"
    assert location["version"] == "3f1c2e9"
    assert location["path"].endswith("declared_lineage.py")


def test_declared_tags_reach_the_dataset_and_the_job(declared: DagRunResult) -> None:
    (complete,) = _terminal(declared, "load_stg_orders")
    stg = _dataset(complete, "outputs", "postgres://db.internal:5432", "analytics.staging.stg_orders")
    assert [t["key"] for t in stg["facets"]["tags"]["tags"]] == ["orders"]
    assert {t["key"] for t in complete["job"]["facets"]["tags"]["tags"]} >= {"orders", "staging"}


def test_runtime_figures_equal_what_the_task_handled_and_land_on_complete_only(
    declared: DagRunResult,
) -> None:
    start = next(e for e in declared.task_events("load_stg_orders") if e["eventType"] == "START")
    (complete,) = _terminal(declared, "load_stg_orders")
    stg_start = _dataset(start, "outputs", "postgres://db.internal:5432", "analytics.staging.stg_orders")
    assert "outputStatistics" not in stg_start.get("outputFacets", {})
    stg = _dataset(complete, "outputs", "postgres://db.internal:5432", "analytics.staging.stg_orders")
    assert stg["outputFacets"]["outputStatistics"]["rowCount"] == 3
    metrics = stg["facets"]["dataQualityMetrics"]
    assert metrics["rowCount"] == 3
    assert {c: m["nullCount"] for c, m in metrics["columnMetrics"].items()} == {
        "order_id": 0,
        "customer_id": 1,
        "total_amount_usd": 1,
    }
    assertions = {a["assertion"]: a["success"] for a in stg["facets"]["dataQualityAssertions"]["assertions"]}
    # the declared checks, and the declared contract (2.1.0), which the written schema keeps
    assert assertions == {
        "order_id_not_null": True,
        "every_order_has_customer": False,
        "dataContract 2.1.0": True,
    }
    raw = _dataset(complete, "inputs", "s3://raw-data-lake", "orders")
    assert raw["inputFacets"]["dataQualityMetrics"]["rowCount"] == 3
    assert raw["inputFacets"]["dataQualityMetrics"]["bytes"] == 512


def test_outputs_found_at_run_time_are_added_to_the_complete_event(declared: DagRunResult) -> None:
    (complete,) = _terminal(declared, "load_stg_orders")
    extra = _dataset(complete, "outputs", "s3://exports", "orders_snapshot")
    assert extra["facets"]["schema"]["fields"][0]["name"] == "order_id"


def test_operator_reported_lineage_is_kept_and_declared_lineage_merged_in(declared: DagRunResult) -> None:
    events = declared.task_events("merged")
    assert [e["eventType"] for e in events] == ["START", "COMPLETE"]
    for event in events:
        stg = _dataset(event, "inputs", "postgres://db.internal:5432", "analytics.staging.stg_orders")
        # the operator's own schema wins; the declared documentation fills the gap
        fields = stg["facets"]["schema"]["fields"]
        assert [(f["name"], f["type"]) for f in fields] == [("order_id", "BIGINT")]
        assert stg["facets"]["documentation"]["description"] == "declared"
        assert [(d["namespace"], d["name"]) for d in event["outputs"]] == [("s3://exports", "merged")]


def test_mixin_on_an_operator_with_a_builtin_extractor_type_still_declares(declared: DagRunResult) -> None:
    (complete,) = _terminal(declared, "bash_export")
    assert [(d["namespace"], d["name"]) for d in complete["outputs"]] == [("s3://exports", "orders_snapshot")]
    assert complete["job"]["facets"]["ownership"]["owners"][0]["name"] == "team:exports"


def test_each_map_index_gets_its_own_figures(declared: DagRunResult) -> None:
    rows_by_index = {}
    for event in _terminal(declared, "export_shard"):
        index = event["run"]["facets"]["airflow"]["taskInstance"]["map_index"]
        out = _dataset(event, "outputs", "s3://exports", "by_shard")
        rows_by_index[index] = out["outputFacets"]["outputStatistics"]["rowCount"]
        partition = out["outputFacets"]["subset"]["outputCondition"]["partitions"][0]["dimensions"]
        assert partition == {"shard": str(index)}
    assert rows_by_index == {0: 1, 1: 2, 2: 3}


def test_declared_datasets_are_also_task_assets_airflow_sees(declared: DagRunResult) -> None:
    (complete,) = _terminal(declared, "load_stg_orders")
    task_info = complete["run"]["facets"]["airflow"]["task"]
    text = str(task_info.get("inlets")) + str(task_info.get("outlets"))
    assert "s3://raw-data-lake/orders" in text
    assert "stg_orders" in text


def test_sql_operator_reports_its_sql_lineage_and_the_declaration_fills_only_gaps(
    declared: DagRunResult,
) -> None:
    (complete,) = _terminal(declared, "sql_rollup")
    [(namespace, name)] = [(d["namespace"], d["name"]) for d in complete["outputs"]]
    assert namespace.startswith("duckdb:///") and namespace.endswith("/analytics.duckdb")
    assert name == "analytics.staging.daily_totals"
    assert [(d["namespace"], d["name"]) for d in complete["inputs"]] == [(namespace, "analytics.raw.orders")]
    totals = complete["outputs"][0]
    # the operator's schema (read from DuckDB) wins over the declared one; declared docs and owners fill gaps
    assert [f["name"] for f in totals["facets"]["schema"]["fields"]] == ["order_day", "total"]
    assert totals["facets"]["documentation"]["description"] == "Order totals per day"
    assert [o["name"] for o in totals["facets"]["ownership"]["owners"]] == ["team:finance"]
    total = totals["facets"]["columnLineage"]["fields"]["total"]["inputFields"]
    assert [(f["name"], f["field"]) for f in total] == [("analytics.raw.orders", "amount")]
    assert "INSERT INTO analytics.staging.daily_totals" in complete["job"]["facets"]["sql"]["query"]


def test_override_and_partial_keep_the_declaration(declared: DagRunResult) -> None:
    events = declared.task_events("export_eu") + declared.task_events("export_region")
    assert Counter(e["job"]["name"].split(".", 1)[1] for e in events) == Counter(
        {"export_eu": 2, "export_region": 4}
    )
    for event in events:
        assert [d["name"] for d in event["inputs"]] == ["analytics.staging.stg_orders"]
        assert [(d["namespace"], d["name"]) for d in event["outputs"]] == [("s3://exports", "by_region")]
    mapped = {
        e["run"]["facets"]["airflow"]["taskInstance"]["map_index"]
        for e in _terminal(declared, "export_region")
    }
    assert mapped == {0, 1}
    terminal = _terminal(declared, "export_eu") + _terminal(declared, "export_region")
    assert len(terminal) == 1 + 2  # export_eu, and export_region's two map indexes
    for event in terminal:
        assert event["outputs"][0]["outputFacets"]["outputStatistics"]["rowCount"] == 1


def test_runtime_records_pandas_and_pyarrow_and_sets_the_schema_inside_a_task(declared: DagRunResult) -> None:
    (complete,) = _terminal(declared, "profile_frames")
    frame = _dataset(complete, "outputs", "s3://exports", "frame")
    assert frame["facets"]["dataQualityMetrics"]["rowCount"] == 3
    nulls = {c: m["nullCount"] for c, m in frame["facets"]["dataQualityMetrics"]["columnMetrics"].items()}
    assert nulls == {"order_id": 0, "note": 1}
    assert [(f["name"], f["type"]) for f in frame["facets"]["schema"]["fields"]] == [
        ("order_id", "BIGINT"),
        ("note", "TEXT"),
    ]
    dump = _dataset(complete, "inputs", "s3://exports", "dump")
    assert (
        dump["facets"]["documentation"]["description"] == "copied from postgres://loader:***@db.internal/raw"
    )
    assert "s3cret" not in json.dumps(declared.events)  # redacted by the harness's event-log transport
    arrow = _dataset(complete, "outputs", "s3://exports", "arrow")
    assert arrow["facets"]["dataQualityMetrics"]["rowCount"] == 4
    assert arrow["facets"]["dataQualityMetrics"]["columnMetrics"]["shard"]["nullCount"] == 1
