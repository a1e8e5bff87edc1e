"""Run state comes from event times, not arrival order; latest run = the one that started last."""

from __future__ import annotations

from pathlib import Path

import pytest

from airflow_lineage_plus.graph import LineageQueries, open_source
from airflow_lineage_plus.graph.runs import RunRecord
from tests.support.graph_builders import at, ds, event, facet, job_node, run_id, run_pair, write_log


def _latest(tmp_path: Path, events: list[dict]) -> dict:
    queries = LineageQueries(open_source(events=write_log(tmp_path / "events.jsonl", events)))
    return queries.upstream(job_node("dag.task"), 1)["target"]["latestRun"]


def test_complete_arriving_before_start_gives_completed_with_start_time(tmp_path: Path) -> None:
    start, complete = run_pair("dag.task", "r1", 0, 5)
    latest = _latest(tmp_path, [complete, start])
    assert latest["state"] == "COMPLETED"
    assert latest["startedAt"] == at(0) and latest["endedAt"] == at(5)


def test_repeated_and_late_running_events_do_not_reopen_a_finished_run(tmp_path: Path) -> None:
    start, complete = run_pair("dag.task", "r1", 0, 5)
    running = event("RUNNING", "dag.task", "r1", 3)
    latest = _latest(tmp_path, [start, complete, complete, running, start])
    assert latest["state"] == "COMPLETED"


def test_events_of_one_run_from_two_producers_merge(tmp_path: Path) -> None:
    start, fail = run_pair("dag.task", "r1", 0, 5, "FAIL", error="boom")
    other_producer = event("RUNNING", "dag.task", "r1", 2, outputs=[ds("extra")])
    other_producer["producer"] = "https://example.com/another-producer"
    latest = _latest(tmp_path, [fail, other_producer, start])
    assert (latest["state"], latest["errorMessage"]) == ("FAILED", "boom")


def test_latest_run_is_the_one_that_started_last_not_the_one_that_arrived_last(tmp_path: Path) -> None:
    late_start = run_pair("dag.task", "newer", 10, 11, "FAIL", error="newer failed")
    early_start = run_pair("dag.task", "older", 0, 20)  # started first, ended last, arrives last
    latest = _latest(tmp_path, late_start + early_start)
    assert (latest["state"], latest["errorMessage"], latest["startedAt"]) == (
        "FAILED",
        "newer failed",
        at(10),
    )


def test_skip_facet_on_complete_gives_skipped(tmp_path: Path) -> None:
    latest = _latest(tmp_path, run_pair("dag.task", "r1", 0, 1, skipped="no new data"))
    assert latest["state"] == "SKIPPED"


def test_skip_facet_with_state_upstream_failed_gives_upstream_failed_not_skipped(tmp_path: Path) -> None:
    start, abort = run_pair("dag.task", "r1", 0, 1, "ABORT")
    abort["run"]["facets"]["lineagePlus_skipState"] = facet(
        skipped=True, reason="TRIGGER_RULE", state="upstream_failed", causedBy="load"
    )
    latest = _latest(tmp_path, [start, abort])
    assert latest["state"] == "UPSTREAM_FAILED"


def test_skip_facet_saying_not_skipped_keeps_completed(tmp_path: Path) -> None:
    start, complete = run_pair("dag.task", "r1", 0, 1)
    complete["run"]["facets"]["lineagePlus_skipState"] = facet(skipped=False)
    assert _latest(tmp_path, [start, complete])["state"] == "COMPLETED"


def test_dag_run_tasks_state_marks_a_task_without_a_run_skipped(tmp_path: Path) -> None:
    """A scheduler-skipped task has no events; the DAG run's airflowState.tasksState says it was skipped."""
    dag_run = "dagrun-2"
    parent = facet(run={"runId": run_id(dag_run)}, job={"namespace": "pipeline", "name": "dag"})
    events = run_pair("dag.task", "first", 0, 1)  # the task ran in an earlier DAG run
    events.append(event("START", "dag", dag_run, 10))
    other = run_pair("dag.other", "other-2", 10, 11)
    for item in other:
        item["run"]["facets"]["parent"] = parent
    events += other
    events.append(
        event(
            "COMPLETE",
            "dag",
            dag_run,
            12,
            run_facets={
                "airflowState": facet(
                    dagRunState="success", tasksState={"task": "skipped", "other": "success"}
                )
            },
        )
    )
    latest = _latest(tmp_path, events)
    assert latest["state"] == "SKIPPED" and latest["startedAt"] == at(10) and latest["runId"] is None
    details = LineageQueries(open_source(events=tmp_path / "events.jsonl")).node_details(job_node("dag.task"))
    assert details["runs"][0]["skipReason"].startswith("skipped by the scheduler")
    assert details["runs"][1]["state"] == "COMPLETED"


def test_dag_run_tasks_state_upstream_failed_marks_a_task_without_a_run_upstream_failed(
    tmp_path: Path,
) -> None:
    events = run_pair("dag.task", "first", 0, 1)
    events += run_pair("dag", "dagrun-3", 10, 12)
    events[-1]["run"]["facets"]["airflowState"] = facet(
        dagRunState="failed", tasksState={"task": "upstream_failed", "load": "failed"}
    )
    latest = _latest(tmp_path, events)
    assert latest["state"] == "UPSTREAM_FAILED" and latest["runId"] is None
    details = LineageQueries(open_source(events=tmp_path / "events.jsonl")).node_details(job_node("dag.task"))
    assert details["runs"][0]["skipReason"].startswith("upstream failed")
    assert [run["state"] for run in details["runs"]] == ["UPSTREAM_FAILED", "COMPLETED"]


def test_tasks_state_does_not_override_a_task_that_ran_in_that_dag_run(tmp_path: Path) -> None:
    dag_run = "dagrun-1"
    parent = facet(run={"runId": run_id(dag_run)}, job={"namespace": "pipeline", "name": "dag"})
    events = run_pair("dag.task", "t-1", 1, 2)
    for item in events:
        item["run"]["facets"]["parent"] = parent
    events.append(
        event(
            "COMPLETE", "dag", dag_run, 3, run_facets={"airflowState": facet(tasksState={"task": "skipped"})}
        )
    )
    assert _latest(tmp_path, events)["state"] == "COMPLETED"


@pytest.mark.parametrize("rank", [0, 1, 2, 3])
@pytest.mark.parametrize("skipped", [False, True])
@pytest.mark.parametrize("upstream_failed", [False, True])
def test_a_run_is_completed_exactly_when_its_state_is_completed(
    rank: int, skipped: bool, upstream_failed: bool
) -> None:
    run = RunRecord("r", "job:a:b")
    run.rank, run.end, run.skipped, run.upstream_failed = rank, 10, skipped, upstream_failed
    assert run.completed == (run.state == "COMPLETED")
