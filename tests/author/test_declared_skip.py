"""A declared task that skips itself lists no outputs, so consumers do not see its outputs refreshed."""

from __future__ import annotations

from pathlib import Path

import pytest
from harness import AirflowRunner
from openlineage_spec import validate_events

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
    assert not [e for e in result.events if e["eventType"] == "ABORT"]
