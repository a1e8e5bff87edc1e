"""The provider's newer APIs with declared lineage, in one real run with ``execute_in_thread`` on.

``emit_dataset_lineage`` (provider 2.16+) inside a ``@lineage`` task, an asset attached at run time through an
``AssetAlias``, and an ``emission_policy`` (2.19+) that turns off one task by name and the ``quiet_.*`` tasks
by pattern: one run per task instance with exact event counts, and none of our lineage (declared datasets,
figures, skip records, dbt's child runs) where the policy says none.
"""

from __future__ import annotations

import json
import time
from collections import Counter
from pathlib import Path
from typing import Any

import pytest

from tests.emit.skip_support import DAGS, SKIP_ENV, skip_records
from tests.support.harness import AirflowRunner, DagRunResult, read_events
from tests.support.openlineage_spec import validate_events

pytestmark = pytest.mark.airflow

DAG_ID = "provider_apis"
POLICY = [
    {"scope": {"dag_id": DAG_ID, "task_id": "excluded"}, "controls": {"emit": False}},
    {
        "scope": {"dag_id": DAG_ID, "task_id": "quiet_.*"},
        "match_mode": "regex",
        "controls": {"emit_task_events": False},
    },
    {
        "scope": {"dag_id": DAG_ID, "task_id": "bare_skipped"},
        "controls": {"extract_operator_metadata": False},
    },
]
BUCKET = "s3://provider-apis"


@pytest.fixture(scope="module")
def run(airflow_db: Path, tmp_path_factory: pytest.TempPathFactory) -> tuple[DagRunResult, Path]:
    workdir = tmp_path_factory.mktemp("provider-apis")
    out = workdir / "excluded-dbt-env.json"
    result = AirflowRunner(workdir).run(
        DAGS / "provider_apis.py",
        dag_id=DAG_ID,
        logical_date="2024-01-01T00:00:00+00:00",
        env={
            **SKIP_ENV,
            "AIRFLOW__OPENLINEAGE__EXECUTE_IN_THREAD": "True",
            "AIRFLOW__OPENLINEAGE__EMISSION_POLICY": json.dumps(POLICY),
            "PROVIDER_APIS_OUT": str(out),
        },
    )
    assert result.returncode == 0, result.output[-4000:]
    # skip records come from the provider's process pool once the DAG run ended: wait for the one expected
    log = workdir / f"events-{DAG_ID}.jsonl"
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline and len(skip_records(result.events)) < 2:
        time.sleep(0.5)
        result.events = read_events(log)
    return result, out


def _events(run: tuple[DagRunResult, Path], task_id: str) -> list[dict[str, Any]]:
    return run[0].task_events(task_id)


def _ids(datasets: list[dict[str, Any]]) -> set[tuple[str, str]]:
    return {(d["namespace"], d["name"]) for d in datasets}


def test_every_event_is_valid_against_the_spec_and_our_schemas(run: tuple[DagRunResult, Path]) -> None:
    assert validate_events(run[0].events) == len(run[0].events) > 0


def test_each_task_instance_is_one_run_with_exact_event_counts(run: tuple[DagRunResult, Path]) -> None:
    per_job: dict[str, Counter[str]] = {}
    runs: dict[str, set[str]] = {}
    for event in run[0].task_events():
        job = event["job"]["name"].removeprefix(f"{DAG_ID}.")
        per_job.setdefault(job, Counter())[event["eventType"]] += 1
        runs.setdefault(job, set()).add(event["run"]["runId"])
    assert per_job == {
        # START, the provider API's RUNNING, COMPLETE: all on the task's own run
        "declared_and_api": Counter({"START": 1, "RUNNING": 1, "COMPLETE": 1}),
        "gate": Counter({"START": 1, "COMPLETE": 1}),
        "loud_skipped": Counter({"ABORT": 1}),  # our skip records: no rule stops their events
        "bare_skipped": Counter({"ABORT": 1}),
    }
    assert all(len(ids) == 1 for ids in runs.values())
    assert len(set().union(*runs.values())) == len(runs)


def test_emit_dataset_lineage_rides_on_the_declared_tasks_run(run: tuple[DagRunResult, Path]) -> None:
    by_type = {e["eventType"]: e for e in _events(run, "declared_and_api")}
    assert _ids(by_type["RUNNING"]["inputs"]) == {(BUCKET, "declared-api-in")}
    assert _ids(by_type["RUNNING"]["outputs"]) == {(BUCKET, "declared-api-out")}
    assert _ids(by_type["START"]["inputs"]) == _ids(by_type["COMPLETE"]["inputs"]) == {(BUCKET, "source")}


def test_declared_figures_and_assertions_reach_complete_with_execute_in_thread(
    run: tuple[DagRunResult, Path],
) -> None:
    (complete,) = [e for e in _events(run, "declared_and_api") if e["eventType"] == "COMPLETE"]
    (target,) = [d for d in complete["outputs"] if d["name"] == "target"]
    assert target["outputFacets"]["outputStatistics"]["rowCount"] == 3
    assert target["facets"]["dataQualityMetrics"]["columnMetrics"]["name"]["nullCount"] == 1
    assertions = target["facets"]["dataQualityAssertions"]["assertions"]
    assert [a["assertion"] for a in assertions] == ["id_not_null"]


def test_an_asset_attached_at_run_time_is_an_output_of_complete(run: tuple[DagRunResult, Path]) -> None:
    by_type = {e["eventType"]: e for e in _events(run, "declared_and_api")}
    assert _ids(by_type["COMPLETE"]["outputs"]) == {(BUCKET, "target"), (BUCKET, "attached/export.parquet")}
    assert _ids(by_type["START"]["outputs"]) == {(BUCKET, "target")}  # attached while it ran


def test_a_task_the_policy_turns_off_leaves_no_lineage_of_ours(run: tuple[DagRunResult, Path]) -> None:
    assert _events(run, "excluded") == []
    text = json.dumps(run[0].events)
    for name in ("hidden-source", "hidden-target", "excluded-api-in", "excluded-api-out"):
        assert name not in text


def test_dbt_run_by_a_task_the_policy_turns_off_reports_nothing(run: tuple[DagRunResult, Path]) -> None:
    env = json.loads(run[1].read_text())
    assert env == {"OPENLINEAGE_DISABLED": "true", "OPENLINEAGE__TRANSPORT": '{"type": "noop"}'}


def test_tasks_matching_the_policy_pattern_get_no_skip_record(run: tuple[DagRunResult, Path]) -> None:
    assert _events(run, "quiet_skipped") == []
    records = {r["job"]["name"].removeprefix(f"{DAG_ID}."): r for r in skip_records(run[0].events)}
    assert set(records) == {"loud_skipped", "bare_skipped"}
    assert _ids(records["loud_skipped"]["inputs"]) == {(BUCKET, "source")}


def test_a_skip_record_carries_no_datasets_where_the_policy_turns_metadata_off(
    run: tuple[DagRunResult, Path],
) -> None:
    (record,) = [r for r in skip_records(run[0].events) if r["job"]["name"] == f"{DAG_ID}.bare_skipped"]
    assert record["inputs"] == []


def test_the_graph_joins_the_api_datasets_and_the_declared_ones_in_one_job(
    run: tuple[DagRunResult, Path], tmp_path: Path
) -> None:
    from airflow_lineage_plus.graph import LineageQueries, dataset_id, open_source

    log = tmp_path / "events.jsonl"
    log.write_text("".join(json.dumps(e) + "\n" for e in run[0].events))
    queries = LineageQueries(open_source(events=log))
    for name in ("declared-api-out", "target", "attached/export.parquet"):
        answer = queries.upstream(dataset_id(BUCKET, name), 2)
        assert {n["id"] for n in answer["nodes"]} == {
            f"job:test-airflow:{DAG_ID}.declared_and_api",
            f"dataset:{BUCKET}:source",
            f"dataset:{BUCKET}:declared-api-in",
        }
