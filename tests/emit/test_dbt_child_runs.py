"""A real ``dbt-ol build`` run by a real Airflow task: dbt's runs are children of the task's run, name the
tables as the Airflow side does, carry dbt's tests, errors and skips, and the graph follows the link.

One DAG run (``dags/dbt_child_runs.py``: a task loads the staging table, a BashOperator runs ``dbt-ol build``
with ``dbt_lineage_env_templates()`` on ``dbt_project/``) is shared by every test of the module.
"""

from __future__ import annotations

import json
import os
import sys
from collections import Counter
from pathlib import Path
from typing import Any

import pytest

from airflow_lineage_plus.cli import run
from tests.support.graph_builders import write_log
from tests.support.harness import AirflowRunner, DagRunResult
from tests.support.openlineage_spec import validate_events

pytestmark = pytest.mark.airflow

HERE = Path(__file__).resolve().parent
DAG_ID = "dbt_child_runs"
PROJECT = "lineage_test"
SQL_MAX_LENGTH = 100


class DbtRun:
    """The DAG run's result and its events, by kind."""

    def __init__(self, result: DagRunResult, warehouse: Path) -> None:
        self.result = result
        self.events = result.events
        self.warehouse = warehouse

    def of(self, job_name: str) -> list[dict[str, Any]]:
        return [e for e in self.events if e["job"]["name"] == job_name]

    def terminal(self, job_name: str) -> dict[str, Any]:
        [event] = [e for e in self.of(job_name) if e["eventType"] != "START"]
        return event

    def model_job(self, model: str, kind: str = "run") -> str:
        return f"analytics.marts.{PROJECT}.{model}.build.{kind}"

    def dbt_events(self) -> list[dict[str, Any]]:
        return [
            e
            for e in self.events
            if (e["job"].get("facets") or {}).get("jobType", {}).get("integration") == "DBT"
        ]


@pytest.fixture(scope="module")
def dbt_run(airflow_db: Path, tmp_path_factory: pytest.TempPathFactory) -> DbtRun:
    work = tmp_path_factory.mktemp("dbt-child-runs")
    warehouse = work / "warehouse"
    warehouse.mkdir()
    env = {
        "AIRFLOW_CONN_WAREHOUSE": json.dumps(
            {
                "conn_type": "duckdb",
                "host": "localhost",
                "extra": {"database": str(warehouse / "analytics.duckdb")},
            }
        ),
        "LINEAGE_TEST_DBT_PROJECT": str(HERE / "dbt_project"),
        "LINEAGE_TEST_DBT_TARGET": str(work / "target"),
        "LINEAGE_TEST_WAREHOUSE_DIR": str(warehouse),
        "AIRFLOW__LINEAGE_PLUS__SQL_MAX_LENGTH": str(SQL_MAX_LENGTH),  # reaches dbt-ol through the config
        "PATH": os.pathsep.join([str(Path(sys.executable).parent), os.environ.get("PATH", "")]),
    }
    result = AirflowRunner(work).run(
        HERE / "dags" / "dbt_child_runs.py", dag_id=DAG_ID, env=env, logical_date="2024-06-01", timeout=420
    )
    return DbtRun(result, warehouse)


def test_a_failing_dbt_build_fails_its_task_and_every_event_is_valid(dbt_run: DbtRun) -> None:
    [dag_end] = [e for e in dbt_run.result.dag_events() if e["eventType"] in {"COMPLETE", "FAIL"}]
    states = dag_end["run"]["facets"]["airflowState"]["tasksState"]
    assert states == {"load_staging": "success", "dbt_build": "failed"}, dbt_run.result.output[-3000:]
    assert dbt_run.terminal(f"{DAG_ID}.dbt_build")["eventType"] == "FAIL"
    assert validate_events(dbt_run.events) == len(dbt_run.events)
    # wrapper 2, Orders_By_Day 2, broken 2, their test runs 2 + 2, the source's test run 2, 2 skip records
    assert len(dbt_run.dbt_events()) == 14


def test_every_dbt_run_is_a_child_of_the_task_run_under_the_dag_run(dbt_run: DbtRun) -> None:
    [task_start] = [e for e in dbt_run.of(f"{DAG_ID}.dbt_build") if e["eventType"] == "START"]
    task_run = task_start["run"]["runId"]
    dag_run = task_start["run"]["facets"]["parent"]["run"]["runId"]
    wrapper = dbt_run.of(f"dbt-run-{PROJECT}")
    assert [e["eventType"] for e in wrapper] == ["START", "FAIL"]
    parent = wrapper[0]["run"]["facets"]["parent"]
    assert (parent["job"]["namespace"], parent["job"]["name"]) == ("test-airflow", f"{DAG_ID}.dbt_build")
    assert (parent["run"]["runId"], parent["root"]["run"]["runId"]) == (task_run, dag_run)
    assert parent["root"]["job"]["name"] == DAG_ID
    children = [e for e in dbt_run.dbt_events() if e["job"]["name"] != f"dbt-run-{PROJECT}"]
    assert len(children) == 12
    for event in children:
        parent = event["run"]["facets"]["parent"]
        assert parent["run"]["runId"] == wrapper[0]["run"]["runId"], event["job"]["name"]
        assert parent["root"]["run"]["runId"] == dag_run
        assert event["job"]["namespace"] == "test-airflow"  # the provider's namespace, not dbt's default


def test_the_table_the_airflow_task_writes_is_the_node_the_dbt_model_reads(dbt_run: DbtRun) -> None:
    [loaded] = dbt_run.terminal(f"{DAG_ID}.load_staging")["outputs"]
    staging = (loaded["namespace"], loaded["name"])
    assert staging == (f"duckdb://{dbt_run.warehouse / 'analytics.duckdb'}", "analytics.staging.stg_orders")
    model = dbt_run.terminal(dbt_run.model_job("Orders_By_Day"))
    # the profile's path has ./ and ../, the source's logical name is "orders", the model is Orders_By_Day
    assert [(d["namespace"], d["name"]) for d in model["inputs"]] == [staging]
    [built] = model["outputs"]
    assert (built["namespace"], built["name"]) == (staging[0], "analytics.marts.orders_by_day")
    lineage = built["facets"]["columnLineage"]["fields"]["revenue"]["inputFields"]
    assert [(f["namespace"], f["name"], f["field"]) for f in lineage] == [(*staging, "amount")]
    assert built["facets"]["dataSource"]["uri"] == staging[0]
    # what dbt reads keeps its writer's schema: dbt's partial (yml) view of it is not sent
    assert "schema" not in model["inputs"][0]["facets"]


def test_model_jobs_carry_the_tasks_owners_and_service_level_and_tables_their_meta_owner(
    dbt_run: DbtRun,
) -> None:
    for job in (
        dbt_run.model_job("Orders_By_Day"),
        dbt_run.model_job("broken"),
        dbt_run.model_job("after_broken"),
    ):
        for event in dbt_run.of(job):
            facets = event["job"]["facets"]
            assert [o["name"] for o in facets["ownership"]["owners"]] == ["team:marts"], job
            assert (
                facets["lineagePlus_sloTier"]["tier"],
                facets["lineagePlus_sloTier"]["freshnessMinutes"],
            ) == (
                "gold",
                1560,
            )
    [built] = dbt_run.terminal(dbt_run.model_job("Orders_By_Day"))["outputs"]
    assert [o["name"] for o in built["facets"]["ownership"]["owners"]] == ["team:analytics"]  # meta: owner
    # test runs are not writers: they keep dbt's own facets only
    for event in dbt_run.of(dbt_run.model_job("Orders_By_Day", "test")):
        assert "lineagePlus_sloTier" not in event["job"]["facets"]


def test_dbt_tests_arrive_as_assertions_and_a_failing_test_fails_its_run(dbt_run: DbtRun) -> None:
    tests = dbt_run.terminal(dbt_run.model_job("Orders_By_Day", "test"))
    assert tests["eventType"] == "FAIL"
    [checked] = tests["inputs"]
    assert checked["name"] == "analytics.marts.orders_by_day"
    assertions = checked["inputFacets"]["dataQualityAssertions"]["assertions"]
    assert sorted((a["name"], a["success"], a["severity"], a.get("column")) for a in assertions) == [
        ("not_null_Orders_By_Day_order_date", True, "error", "order_date"),
        ("order_count_is_1", False, "error", "order_count"),
        ("order_count_is_5", False, "warn", "order_count"),
    ]
    assert tests["run"]["facets"]["errorMessage"]["message"] == (
        "order_count_is_1: Got 1 result, configured to fail if != 0"
    )
    source = dbt_run.terminal(f"analytics.staging.source.{PROJECT}.staging.orders.build.test")
    assert source["eventType"] == "COMPLETE"
    assert [d["name"] for d in source["inputs"]] == ["analytics.staging.stg_orders"]


def test_a_failed_model_carries_dbt_error_and_the_table_it_was_building(dbt_run: DbtRun) -> None:
    failed = dbt_run.terminal(dbt_run.model_job("broken"))
    assert failed["eventType"] == "FAIL"
    message = failed["run"]["facets"]["errorMessage"]["message"]
    assert "Runtime Error in model broken" in message and '"no_such_column" not found' in message
    assert [d["name"] for d in failed["outputs"]] == ["analytics.marts.broken"]
    wrapper_error = dbt_run.terminal(f"dbt-run-{PROJECT}")["run"]["facets"]["errorMessage"]["message"]
    assert wrapper_error.startswith("dbt build failed on 2 node(s):")
    assert f"model.{PROJECT}.broken: Runtime Error" in wrapper_error
    # redaction and limits of the task's configuration, applied in dbt-ol's process
    sql = failed["job"]["facets"]["sql"]["query"]
    assert "postgres://etl:***@db.example.com" in sql and "hunter2" not in json.dumps(dbt_run.events)
    assert sql.startswith("-- Fails") and "[cut by airflow-lineage-plus:" in sql
    assert len(sql.split("\n-- [cut by", 1)[0]) == SQL_MAX_LENGTH


def test_what_dbt_skipped_gets_one_skip_record_naming_the_cause(dbt_run: DbtRun) -> None:
    aborts = {e["job"]["name"]: e for e in dbt_run.dbt_events() if e["eventType"] == "ABORT"}
    assert set(aborts) == {
        dbt_run.model_job("after_broken"),
        dbt_run.model_job("orders_summary"),
        dbt_run.model_job("broken", "test"),
    }
    causes = {name: e["run"]["facets"]["lineagePlus_skipState"] for name, e in aborts.items()}
    for skip in causes.values():
        assert (skip["skipped"], skip["reason"], skip["state"]) == (True, "TRIGGER_RULE", "upstream_failed")
    assert causes[dbt_run.model_job("after_broken")]["causedBy"] == f"model.{PROJECT}.broken"
    assert causes[dbt_run.model_job("broken", "test")]["causedBy"] == f"model.{PROJECT}.broken"
    assert causes[dbt_run.model_job("orders_summary")]["causedBy"].startswith(
        f"test.{PROJECT}.order_count_is_1."
    )
    after = aborts[dbt_run.model_job("after_broken")]
    assert (after["outputs"], [d["name"] for d in after["inputs"]]) == ([], ["analytics.marts.broken"])
    # no assertion of a test dbt skipped is reported as a failure
    names = [
        a["name"]
        for e in dbt_run.dbt_events()
        for d in e.get("inputs", [])
        for a in (d.get("inputFacets") or {}).get("dataQualityAssertions", {}).get("assertions", [])
    ]
    assert "not_null_broken_no_such_column" not in names
    assert Counter(e["eventType"] for e in dbt_run.dbt_events()) == {
        "START": 6,
        "COMPLETE": 2,
        "FAIL": 3,
        "ABORT": 3,
    }


def _cli(log: Path, namespace: str, *query: str) -> str:
    """``lineage-plus --events LOG <query...> --namespace NS --name ...``: its output (exit code 0; 4 for a
    ``failed-upstream`` that found a failed job, as here)."""
    command, *rest = query
    code, out, err = run(["--events", str(log), command, "--namespace", namespace, *rest])
    assert code == (4 if command == "failed-upstream" else 0), err
    return out


def test_failed_upstream_names_the_failed_model_and_the_airflow_task_that_ran_it(
    dbt_run: DbtRun, tmp_path: Path
) -> None:
    log = write_log(tmp_path / "events.jsonl", dbt_run.events)
    namespace = f"duckdb://{dbt_run.warehouse / 'analytics.duckdb'}"
    broken = ("failed-upstream", "--name", "analytics.marts.broken")
    [failed] = json.loads(_cli(log, namespace, *broken, "--format", "json"))["nodes"]
    assert failed["name"] == dbt_run.model_job("broken")
    assert [(r["name"], r["state"]) for r in failed["ranBy"]] == [
        (f"dbt-run-{PROJECT}", "FAILED"),
        (f"{DAG_ID}.dbt_build", "FAILED"),
    ]
    text = _cli(log, namespace, *broken)
    assert f"ran by: JOB test-airflow / dbt-run-{PROJECT}  FAILED" in text
    assert f"JOB test-airflow / {DAG_ID}.dbt_build  FAILED" in text
    # one graph: upstream of the model's table reaches the Airflow task that loaded staging
    upstream = _cli(log, namespace, "upstream", "--name", "analytics.marts.orders_by_day", "--format", "json")
    assert f"job:test-airflow:{DAG_ID}.load_staging" in {n["id"] for n in json.loads(upstream)["nodes"]}


def test_a_dbt_job_belongs_to_the_task_instance_that_ran_it(dbt_run: DbtRun, tmp_path: Path) -> None:
    from airflow_lineage_plus.graph import LineageQueries, open_source

    log = write_log(tmp_path / "events.jsonl", dbt_run.events)
    queries = LineageQueries(open_source(events=str(log)))
    details = queries.node_details(f"job:test-airflow:{dbt_run.model_job('broken')}")
    assert details["airflow"]["dag_id"] == DAG_ID and details["airflow"]["task_id"] == "dbt_build"
    wrapper = queries.node_details(f"job:test-airflow:dbt-run-{PROJECT}")
    assert (wrapper["airflow"]["dag_id"], wrapper["airflow"]["task_id"]) == (DAG_ID, "dbt_build")
    # what the task ran, children first: dbt's run of the command, then its model, test and skip runs
    ran = queries.descendants(f"job:test-airflow:{DAG_ID}.dbt_build")
    assert ran[0] == f"job:test-airflow:dbt-run-{PROJECT}"
    assert sorted(ran[1:]) == sorted(
        {f"job:test-airflow:{e['job']['name']}" for e in dbt_run.dbt_events()} - {ran[0]}
    )
    assert queries.descendants(f"job:test-airflow:{DAG_ID}.load_staging") == []
