"""The sample pipelines run for real (Airflow, the OpenLineage provider, moto's S3 server, DuckDB) and their
lineage is connected, one run per task instance, with quality figures equal to the data written."""

from __future__ import annotations

import importlib
import json
import sys
from collections import Counter
from decimal import Decimal
from typing import Any

import boto3
import duckdb
import pytest

from tests.support.openlineage_spec import validate_events
from tests.support.sample_world import BUCKET, DAGS, DemoRuns

# minutes(8): the group of every test on the sample pipelines' and the view's recordings (run_report.py)
pytestmark = [pytest.mark.airflow, pytest.mark.minutes(8)]

NS_S3 = f"s3://{BUCKET}"
MARTS = {"analytics.marts.fct_daily_orders", "analytics.marts.dim_contacts"}
MART_MODEL_JOB = "analytics.marts.shop.fct_daily_orders.build.run"


def _datasets(event: dict[str, Any], side: str) -> set[tuple[str, str]]:
    return {(d["namespace"], d["name"]) for d in event.get(side, [])}


def _complete(result: Any, task_id: str) -> dict[str, Any]:
    [event] = [e for e in result.task_events(task_id) if e["eventType"] in {"COMPLETE", "FAIL"}]
    assert next(e["eventType"] for e in result.task_events(task_id)) == "START"
    return event


def _output(event: dict[str, Any], name: str) -> dict[str, Any]:
    [found] = [d for d in event["outputs"] if d["name"] == name]
    return found


def _tasks_state(result: Any) -> dict[str, str]:
    [dag_event] = [e for e in result.dag_events() if e["eventType"] in {"COMPLETE", "FAIL"}]
    return dict(dag_event["run"]["facets"]["airflowState"]["tasksState"])


def test_every_file_in_dags_imports_without_error() -> None:
    from airflow_lineage_plus._compat import dag_bag  # Airflow 3.1 keeps DagBag elsewhere

    sys.path.insert(0, str(DAGS))
    try:
        modules = sorted(p for p in DAGS.rglob("*.py"))
        for path in modules:
            name = ".".join(path.relative_to(DAGS).with_suffix("").parts)
            importlib.import_module(name.removesuffix(".__init__"))
        bag = dag_bag(str(DAGS))
    finally:
        sys.path.remove(str(DAGS))
    assert bag.import_errors == {}
    assert set(bag.dag_ids) == {"crm_contacts_ingestion", "ecommerce_orders"}
    assert len(modules) >= 7


def test_each_sample_run_ends_as_the_scenario_intends(demo_runs: DemoRuns) -> None:
    assert demo_runs.crm.returncode == 0, demo_runs.crm.output[-3000:]
    assert set(_tasks_state(demo_runs.crm).values()) == {"success"}
    assert demo_runs.orders_ok.returncode == 0, demo_runs.orders_ok.output[-3000:]
    assert set(_tasks_state(demo_runs.orders_ok).values()) == {"success"}
    assert _tasks_state(demo_runs.orders_empty) == {
        "ingest_orders_to_s3": "success",
        "has_orders": "success",
        "load_stg_orders": "skipped",
        "fct_daily_orders": "skipped",
    }
    assert _tasks_state(demo_runs.orders_failed) == {
        "ingest_orders_to_s3": "success",
        "has_orders": "success",
        "load_stg_orders": "success",
        "fct_daily_orders": "failed",
    }


def _skip_record(result: Any, task_id: str) -> dict[str, Any]:
    """The skip facet of the task's only event, its ABORT record (the scheduler skipped it: it never ran)."""
    events = result.task_events(task_id)
    assert [e["eventType"] for e in events] == ["ABORT"], f"{task_id}: {events}"
    facet: dict[str, Any] = events[0]["run"]["facets"]["lineagePlus_skipState"]
    assert facet["skipped"] is True
    return facet


def _aborts(result: Any) -> list[str]:
    return sorted(e["job"]["name"] for e in result.task_events() if e["eventType"] == "ABORT")


def test_the_gate_skips_the_downstream_hops_when_the_partition_has_no_orders(demo_runs: DemoRuns) -> None:
    started = {e["job"]["name"] for e in demo_runs.orders_empty.task_events() if e["eventType"] == "START"}
    assert started == {"ecommerce_orders.ingest_orders_to_s3", "ecommerce_orders.has_orders"}
    for task_id in ("load_stg_orders", "fct_daily_orders"):
        facet = _skip_record(demo_runs.orders_empty, task_id)
        assert (facet["state"], facet["reason"], facet["causedBy"]) == (
            "skipped",
            "SHORT_CIRCUIT",
            "has_orders",
        )
    assert _aborts(demo_runs.orders_empty) == [
        "ecommerce_orders.fct_daily_orders",
        "ecommerce_orders.load_stg_orders",
    ]
    ingest = _complete(demo_runs.orders_empty, "ingest_orders_to_s3")
    assert _output(ingest, "orders")["outputFacets"]["outputStatistics"]["rowCount"] == 0
    assert "holds 0 orders" in demo_runs.orders_empty.output


def _dbt_model(result: Any, state: str) -> dict[str, Any]:
    """The dbt model run that builds the mart (a grandchild of the task run), ended in ``state``."""
    [event] = [e for e in result.events if e["job"]["name"] == MART_MODEL_JOB and e["eventType"] == state]
    return event


def test_the_failed_dbt_model_fails_its_task_with_a_clear_error_and_its_lineage(demo_runs: DemoRuns) -> None:
    failed = _dbt_model(demo_runs.orders_failed, "FAIL")
    message = failed["run"]["facets"]["errorMessage"]["message"]
    assert "Runtime Error in model fct_daily_orders" in message and "fail_stage='fct_daily_orders'" in message
    # The failed run still names what it would have written: the mart the good day's model run wrote.
    assert _datasets(failed, "outputs") == _datasets(_dbt_model(demo_runs.orders_ok, "COMPLETE"), "outputs")
    assert {name for _ns, name in _datasets(failed, "outputs")} == {"analytics.marts.fct_daily_orders"}
    task = _complete(demo_runs.orders_failed, "fct_daily_orders")
    assert task["eventType"] == "FAIL"
    task_error = task["run"]["facets"]["errorMessage"]["message"]
    assert "dbt build --vars" in task_error and "model.shop.fct_daily_orders (error)" in task_error
    # model run -> dbt's run of `dbt build` -> the task's run
    [wrapper] = [
        e
        for e in demo_runs.orders_failed.events
        if e["job"]["name"] == "dbt-run-shop" and e["eventType"] == "FAIL"
    ]
    assert failed["run"]["facets"]["parent"]["run"]["runId"] == wrapper["run"]["runId"]
    assert wrapper["run"]["facets"]["parent"]["run"]["runId"] == task["run"]["runId"]
    # every Airflow task ran (none skipped); the dbt tests of the failed model did not run: one ABORT
    assert _aborts(demo_runs.orders_failed) == []
    assert _aborts(demo_runs.orders_ok) == _aborts(demo_runs.crm) == []
    dbt_aborts = [e["job"]["name"] for e in demo_runs.orders_failed.events if e["eventType"] == "ABORT"]
    assert dbt_aborts == ["analytics.marts.shop.fct_daily_orders.build.test"]


def test_the_mart_is_built_by_a_dbt_model_whose_tests_are_assertions(demo_runs: DemoRuns) -> None:
    model = _dbt_model(demo_runs.orders_ok, "COMPLETE")
    staging = _datasets(_complete(demo_runs.orders_ok, "load_stg_orders"), "outputs")
    contacts = _datasets(_complete(demo_runs.crm, "load_stg_contacts"), "outputs")
    assert _datasets(model, "inputs") == staging | contacts
    [tests] = [
        e
        for e in demo_runs.orders_ok.events
        if e["job"]["name"] == "analytics.marts.shop.fct_daily_orders.build.test"
        and e["eventType"] == "COMPLETE"
    ]
    [mart] = tests["inputs"]
    assertions = mart["inputFacets"]["dataQualityAssertions"]["assertions"]
    assert sorted((a["assertion"], a["column"], a["success"]) for a in assertions) == [
        ("not_null", "account_id", True),
        ("not_null", "order_date", True),
    ]
    # the task that ran dbt reports no datasets of its own, and no per-query child jobs
    task = _complete(demo_runs.orders_ok, "fct_daily_orders")
    assert (task["eventType"], task["inputs"], task["outputs"]) == ("COMPLETE", [], [])
    assert not [e for e in demo_runs.events() if ".query." in e["job"]["name"]]


def test_events_form_one_connected_graph_from_crm_and_raw_orders_to_the_marts(demo_runs: DemoRuns) -> None:
    edges: dict[str, set[str]] = {}
    directed: dict[str, set[str]] = {}
    dags = {"crm_contacts_ingestion", "ecommerce_orders"}
    for event in demo_runs.events():
        job = "job:" + event["job"]["name"]
        if event["job"]["name"] in dags:
            continue  # DAG-run events carry no datasets
        edges.setdefault(job, set())
        # a run is linked to the run that ran it (dbt's runs to the task that ran dbt), DAG runs aside
        parent = event["run"]["facets"].get("parent", {}).get("job", {}).get("name")
        if parent is not None and parent not in dags:
            edges[job].add("job:" + parent)
            edges.setdefault("job:" + parent, set()).add(job)
        for ns, name in _datasets(event, "inputs"):
            node = f"dataset:{ns}:{name}"
            edges.setdefault(node, set()).add(job)
            edges[job].add(node)
            directed.setdefault(node, set()).add(job)
        for ns, name in _datasets(event, "outputs"):
            node = f"dataset:{ns}:{name}"
            edges.setdefault(node, set()).add(job)
            edges[job].add(node)
            directed.setdefault(job, set()).add(node)

    def reach(start: str, graph: dict[str, set[str]]) -> set[str]:
        seen, todo = {start}, [start]
        while todo:
            for nxt in graph.get(todo.pop(), set()):
                if nxt not in seen:
                    seen.add(nxt)
                    todo.append(nxt)
        return seen

    first = next(iter(edges))
    assert reach(first, edges) == set(edges), "the lineage graph has islands"
    marts = {n for n in edges if n.rsplit(":", 1)[1] in MARTS}
    assert len(marts) == 2
    assert marts <= reach(f"dataset:{NS_S3}:crm/contacts", directed)
    assert "dataset:" + next(m for m in marts if "fct" in m).split(":", 1)[1] in reach(
        f"dataset:{NS_S3}:orders", directed
    )


def test_the_s3_dataset_one_hop_writes_and_the_next_reads_is_one_node(demo_runs: DemoRuns) -> None:
    written = _datasets(_complete(demo_runs.orders_ok, "ingest_orders_to_s3"), "outputs")
    read = _datasets(_complete(demo_runs.orders_ok, "load_stg_orders"), "inputs")
    assert written == read == {(NS_S3, "orders")}
    lake = {(ns, n) for e in demo_runs.events() for ns, n in _datasets(e, "inputs") | _datasets(e, "outputs")}
    assert {d for d in lake if d[0] == NS_S3} == {(NS_S3, "orders"), (NS_S3, "crm/contacts")}


def test_one_run_per_task_instance(demo_runs: DemoRuns) -> None:
    for result in demo_runs.all():
        for job, runs in result.runs_by_job().items():
            assert len(runs) == 1, f"{job} has {len(runs)} runs"
        kinds = Counter((e["job"]["name"], e["eventType"]) for e in result.task_events())
        for (job, kind), count in kinds.items():
            assert count == 1, f"{job} emitted {count} {kind} events"


def test_all_events_are_schema_valid(demo_runs: DemoRuns) -> None:
    events = demo_runs.events()
    assert validate_events(events) == len(events) > 20


def _s3_records(demo_runs: DemoRuns, key: str) -> list[dict[str, Any]]:
    client = boto3.client(
        "s3",
        endpoint_url=demo_runs.world.s3.endpoint_url,
        region_name="us-east-1",
        aws_access_key_id="k",
        aws_secret_access_key="s",
    )
    body = client.get_object(Bucket=BUCKET, Key=key)["Body"].read().decode()
    return [json.loads(line) for line in body.splitlines()]


def _metrics(dataset: dict[str, Any]) -> tuple[int, dict[str, int]]:
    metrics = dataset["facets"]["dataQualityMetrics"]
    return metrics["rowCount"], {c: m["nullCount"] for c, m in metrics["columnMetrics"].items()}


def _nulls(rows: list[dict[str, Any]]) -> dict[str, int]:
    return {column: sum(r[column] is None for r in rows) for column in rows[0]}


def test_quality_figures_match_the_data_written_to_s3(demo_runs: DemoRuns) -> None:
    contacts = _s3_records(demo_runs, "crm/contacts/date=2024-06-01/contacts.jsonl")
    declared = _output(_complete(demo_runs.crm, "extract_contacts_to_s3"), "crm/contacts")
    assert _metrics(declared) == (len(contacts), _nulls(contacts))
    assert _nulls(contacts)["email"] > 0 and _nulls(contacts)["annual_revenue_usd"] > 0
    orders = _s3_records(demo_runs, "orders/date=2024-06-01/orders.jsonl")
    declared = _output(_complete(demo_runs.orders_ok, "ingest_orders_to_s3"), "orders")
    assert _metrics(declared) == (40, _nulls(orders)) and len(orders) == 40
    assert declared["outputFacets"]["outputStatistics"]["size"] == sum(
        len(json.dumps(o, sort_keys=True)) + 1 for o in orders
    )


def test_quality_figures_match_the_rows_in_the_warehouse(demo_runs: DemoRuns) -> None:
    with duckdb.connect(str(demo_runs.world.warehouse_file), read_only=True) as db:

        def table(sql: str) -> list[dict[str, Any]]:
            cursor = db.execute(sql)
            names = [c[0] for c in cursor.description]
            return [dict(zip(names, row, strict=True)) for row in cursor.fetchall()]

        stg = table("SELECT * FROM analytics.staging.stg_orders WHERE order_date = DATE '2024-06-01'")
        fct = table("SELECT * FROM analytics.marts.fct_daily_orders")
        dim = table("SELECT * FROM analytics.marts.dim_contacts")
        stg_dates = {
            r["order_date"].isoformat() for r in table("SELECT order_date FROM analytics.staging.stg_orders")
        }
    # the day without orders never reaches staging; the failing day fails after staging (in dbt)
    assert stg_dates == {"2024-06-01", "2024-06-03"}
    assert _metrics(
        _output(_complete(demo_runs.orders_ok, "load_stg_orders"), "analytics.staging.stg_orders")
    ) == (
        40,
        _nulls(stg),
    )
    # the mart is dbt's: built on the good day, kept as it was when the failing day's model failed
    assert {r["order_date"].isoformat() for r in fct} == {"2024-06-01"} and fct
    completed = [r for r in stg if r["status"] == "completed"]
    assert sum(r["total_revenue_usd"] for r in fct) == sum(r["total_amount_usd"] for r in completed)
    assert sum(r["order_count"] for r in fct) == len(completed)
    dim_event = _output(_complete(demo_runs.crm, "build_dim_contacts"), "analytics.marts.dim_contacts")
    assert _metrics(dim_event) == (60, _nulls(dim))
    segments = {r["customer_segment"] for r in dim if r["annual_revenue_usd"] is None}
    assert segments == {"unknown"}
    assert all(
        r["customer_segment"] == "enterprise"
        for r in dim
        if (r["annual_revenue_usd"] or 0) >= Decimal(1_000_000)
    )


def test_column_lineage_follows_the_derivations(demo_runs: DemoRuns) -> None:
    # the mart's column lineage is dbt's (openlineage-sql parsing the compiled model), on the same names
    fct = _output(_dbt_model(demo_runs.orders_ok, "COMPLETE"), "analytics.marts.fct_daily_orders")
    columns = fct["facets"]["columnLineage"]["fields"]
    assert {
        c: sorted((f["name"], f["field"]) for f in spec["inputFields"]) for c, spec in columns.items()
    } == {
        "order_date": [("analytics.staging.stg_orders", "order_date")],
        "account_id": [("analytics.staging.stg_contacts", "account_id")],
        "order_count": [("analytics.staging.stg_orders", "order_id")],
        "customer_count": [("analytics.staging.stg_orders", "customer_id")],
        "total_revenue_usd": [("analytics.staging.stg_orders", "total_amount_usd")],
        "avg_order_value_usd": [("analytics.staging.stg_orders", "total_amount_usd")],
    }
    [written] = _complete(demo_runs.orders_ok, "load_stg_orders")["outputs"]
    assert {f["namespace"] for spec in columns.values() for f in spec["inputFields"]} == {
        written["namespace"]
    }
    dim = _output(_complete(demo_runs.crm, "build_dim_contacts"), "analytics.marts.dim_contacts")
    [segment] = dim["facets"]["columnLineage"]["fields"]["customer_segment"]["inputFields"]
    assert (segment["name"], segment["field"]) == ("analytics.staging.stg_contacts", "annual_revenue_usd")
    assert segment["transformations"][0]["subtype"] == "TRANSFORMATION"
