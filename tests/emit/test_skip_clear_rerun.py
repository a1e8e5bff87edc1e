"""With the real scheduler: a cleared and re-run DAG run gets records only for its new tries, and a new
DAG run gets one record per task instance that did not run, emitted from the scheduler."""

from __future__ import annotations

from typing import Any

import pytest

from tests.emit.skip_support import DAGS, SKIP_ENV, LiveAirflow, skip_facet, skip_records, task_name
from tests.support.openlineage_spec import validate_events

pytestmark = [pytest.mark.airflow, pytest.mark.minutes(3)]

LOGICAL_DATE = "2024-03-01T00:00:00+00:00"


def _dag_runs(events: list[dict[str, Any]]) -> list[str]:
    return [
        e["run"]["runId"] for e in events if e["job"]["name"] == "skip_clear" and e["eventType"] != "START"
    ]


def test_scheduler_adds_nothing_for_a_cleared_rerun_and_one_record_per_skip_of_a_new_run(
    airflow_runner: Any, live_airflow: LiveAirflow
) -> None:
    first = airflow_runner.run(
        DAGS / "skip_clear.py",
        DAGS / "skip_short_circuit.py",
        dag_id="skip_clear",
        logical_date=LOGICAL_DATE,
        env={**SKIP_ENV, "AIRFLOW__CORE__DAGS_ARE_PAUSED_AT_CREATION": "False"},
    )
    assert first.returncode == 0, first.output[-3000:]
    first_records = {task_name(e, "skip_clear"): e for e in skip_records(first.events)}
    assert set(first_records) == {"publish", "rare"}
    assert skip_facet(first_records["publish"])["reason"] == "SHORT_CIRCUIT"
    assert skip_facet(first_records["rare"])["reason"] == "BRANCH_NOT_TAKEN"
    first_dag_run = _dag_runs(first.events)
    assert len(first_dag_run) == 1

    # Open the gate and clear the DAG run with the real CLI; the real scheduler runs it again.
    # Then a brand-new DAG run of another DAG in the same folder, for the scheduler-side emission path. The
    # worker's metadata DB may know this DAG already, paused, from another test file's runs: unpause it.
    live_airflow.cli(
        "skip_clear",
        ["variables", "set", "skip_clear_gate", "open"],
        ["tasks", "clear", "skip_clear", "-y", "-s", LOGICAL_DATE, "-e", LOGICAL_DATE],
        ["dags", "unpause", "skip_short_circuit"],
        ["dags", "trigger", "skip_short_circuit"],
    )

    def second_run_done(events: list[dict[str, Any]]) -> bool:
        short_circuit_done = any(
            e["job"]["name"] == "skip_short_circuit" and e["eventType"] in {"COMPLETE", "FAIL"}
            for e in events
        )
        return len(set(_dag_runs(events))) == 2 and short_circuit_done

    events = live_airflow.run_scheduler_until("skip_clear", second_run_done, extra=SKIP_ENV)
    new = [e for e in events[len(first.events) :] if e["job"]["name"].split(".")[0] == "skip_clear"]
    validate_events(events)

    # The second DAG run is a new OpenLineage run (clear_number 1).
    assert len(set(_dag_runs(events))) == 2
    # No new skip record: publish ran this time (the provider reported it under its new try), and rare
    # was skipped again in the same try 0 whose record already went out.
    assert skip_records(new) == []
    publish_new = [e for e in new if task_name(e, "skip_clear") == "publish"]
    assert [e["eventType"] for e in publish_new] == ["START", "COMPLETE"]
    assert publish_new[0]["run"]["runId"] != first_records["publish"]["run"]["runId"]
    assert all(skip_facet(e) is None for e in publish_new)
    # Across both DAG runs each skipped try has exactly one record.
    assert len(skip_records([e for e in events if e["job"]["name"].split(".")[0] == "skip_clear"])) == 2

    # The new DAG run, scheduled by the real scheduler: one record per skipped task instance.
    short = [e for e in events if e["job"]["name"].split(".")[0] == "skip_short_circuit"]
    records = skip_records(short)
    skipped = sorted(task_name(e, "skip_short_circuit") for e in records)
    assert skipped == ["extract", "load", "transform", "wait"]
    assert {skip_facet(e)["causedBy"] for e in records} == {"gate"}
    dag_run_id = next(e["run"]["runId"] for e in short if e["job"]["name"] == "skip_short_circuit")
    assert {e["run"]["facets"]["parent"]["run"]["runId"] for e in records} == {dag_run_id}
