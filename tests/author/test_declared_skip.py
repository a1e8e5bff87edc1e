"""A declared task that skips itself lists no outputs, so consumers do not see its outputs refreshed; its
downstream task gets one skip record. The switches that turn this off are obeyed, each in a real run."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from tests.support.harness import AirflowRunner, DagRunResult
from tests.support.openlineage_spec import validate_events

pytestmark = pytest.mark.airflow

DAGS = Path(__file__).parent / "dags"


def test_self_skipped_declared_task_keeps_inputs_drops_outputs_and_says_why(
    airflow_runner: AirflowRunner,
) -> None:
    result = airflow_runner.run(DAGS / "declared_skip.py", dag_id="declared_skip")
    assert result.returncode == 0, result.output[-4000:]
    assert validate_events(result.events) == len(result.events)
    events = result.task_events("copy_events")
    assert [e["eventType"] for e in events] == ["START", "COMPLETE"]
    assert len({e["run"]["runId"] for e in events}) == 1
    start, complete = events
    assert [d["name"] for d in start["outputs"]] == ["events"]
    assert complete["outputs"] == []
    assert [(d["namespace"], d["name"]) for d in complete["inputs"]] == [("s3://landing", "events")]
    skip = complete["run"]["facets"]["lineagePlus_skipState"]
    assert skip["skipped"] is True
    assert skip["reason"] == "SELF_SKIP"
    assert "no new files" in skip["message"]

    (cached,) = [e for e in result.task_events("refresh_cache") if e["eventType"] == "COMPLETE"]
    mode = cached["run"]["facets"]["lineagePlus_executionMode"]
    assert (mode["mode"], mode["reason"]) == ("CACHED", "inputs unchanged since the last run")
    assert [d["name"] for d in cached["outputs"]] == ["events"]

    (record,) = result.task_events("publish_events")
    assert record["eventType"] == "ABORT"
    facet = record["run"]["facets"]["lineagePlus_skipState"]
    assert (facet["reason"], facet["causedBy"], facet["state"]) == ("TRIGGER_RULE", "copy_events", "skipped")
    assert [(d["namespace"], d["name"]) for d in record["inputs"]] == [("s3://curated", "events")]
    assert _aborts(result) == ["declared_skip.publish_events"]


def _aborts(result: DagRunResult) -> list[str]:
    return [e["job"]["name"] for e in result.events if e["eventType"] == "ABORT"]


def test_without_skip_records_the_scheduler_skip_leaves_no_record_and_the_self_skip_keeps_its_facet(
    airflow_runner: AirflowRunner,
) -> None:
    result = airflow_runner.run(
        DAGS / "declared_skip.py",
        dag_id="declared_skip",
        env={"AIRFLOW__LINEAGE_PLUS__EMIT_SKIP_RECORDS": "False"},
    )
    assert result.returncode == 0, result.output[-4000:]
    assert _aborts(result) == [] and result.task_events("publish_events") == []
    complete = result.task_events("copy_events")[-1]
    assert complete["run"]["facets"]["lineagePlus_skipState"]["reason"] == "SELF_SKIP"
    assert validate_events(result.events) == len(result.events)


def test_disabled_switch_leaves_only_the_providers_own_lineage(airflow_runner: AirflowRunner) -> None:
    result = airflow_runner.run(
        DAGS / "declared_skip.py", dag_id="declared_skip", env={"AIRFLOW__LINEAGE_PLUS__DISABLED": "True"}
    )
    assert result.returncode == 0, result.output[-4000:]
    assert validate_events(result.events) == len(result.events)
    for event in result.task_events():
        # only what the provider makes of the tasks' Airflow Assets: names, no declared facets
        for dataset in event["inputs"] + event["outputs"]:
            assert dataset.get("facets", {}) == {}
        assert not any(key.startswith("lineagePlus_") for key in event["run"]["facets"])
    assert [e["eventType"] for e in result.task_events("copy_events")] == ["START", "COMPLETE"]
    # publish_events was skipped by the scheduler: with the plugin's listener unplugged, no record
    assert _aborts(result) == [] and result.task_events("publish_events") == []
    assert [e["eventType"] for e in result.task_events("refresh_cache")] == ["START", "COMPLETE"]


def _plugin(env: dict[str, str]) -> dict[str, Any]:
    airflow = str(Path(sys.executable).parent / "airflow")
    proc = subprocess.run(
        [airflow, "plugins", "--output", "json"],
        env={**os.environ, **env},
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    (plugin,) = [p for p in json.loads(proc.stdout) if p["name"] == "lineage_plus"]
    return dict(plugin)


def test_disabled_switch_unplugs_the_listener_and_the_lineage_view() -> None:
    enabled = _plugin({"AIRFLOW__LINEAGE_PLUS__DISABLED": "False"})
    assert enabled["listeners"] == [
        "airflow_lineage_plus.emit.skip_listener",
        "airflow_lineage_plus.act.alert_listener",
    ]
    assert [app["url_prefix"] for app in enabled["fastapi_apps"]] == ["/lineage-plus"]
    assert len(enabled["external_views"]) == 4
    disabled = _plugin({"AIRFLOW__LINEAGE_PLUS__DISABLED": "True"})
    assert (disabled["listeners"], disabled["fastapi_apps"], disabled["external_views"]) == ([], [], [])
