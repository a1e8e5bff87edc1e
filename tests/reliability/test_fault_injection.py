"""Faults in the lineage path, injected into real DAG runs: the task's outcome never changes, the added
wall time is bounded, and one warning per lost event says what lineage was lost."""

from __future__ import annotations

import json
import socket
from datetime import datetime, timezone
from pathlib import Path

import pytest

from airflow_lineage_plus.author.build import CONNECTION_LOOKUP_SECONDS
from airflow_lineage_plus.deliver.replay import Marquez, replay
from tests.reliability.reliability_support import (
    EXECUTION_TIMEOUT,
    FORWARD_TIMEOUT,
    WAREHOUSE_PASSWORD,
    Baseline,
    TimedRun,
    TimedRunner,
    event_log_transport,
    forward_to,
    lineage_seconds,
)
from tests.support.disk_faults import not_writable_dir
from tests.support.fake_marquez import FakeMarquez
from tests.support.harness import store_of, written_text
from tests.support.openlineage_spec import validate_events

pytestmark = [pytest.mark.airflow, pytest.mark.timeout(600), pytest.mark.minutes(5)]

JOB = "test-airflow/reliability_baseline.load"


def assert_outcome_unchanged(
    run: TimedRun, baseline: Baseline, bound: float, dag_id: str, state: str = "success"
) -> float:
    """The task and DAG run end as without the fault, and lineage added at most ``bound`` seconds (the
    documented deadline) plus the noise margin this session measured (``Baseline.noise``)."""
    if state == "success":
        assert run.returncode == 0, run.output[-3000:]
    assert run.lines("Task instance state updated", f"new_state={state}"), run.output[-3000:]
    assert run.lines("DagRun Finished", f"dag_id={dag_id}", f"state={state}"), run.output[-3000:]
    added = lineage_seconds(run) - baseline.seconds
    print(
        f"\n{dag_id}: lineage window {lineage_seconds(run):.2f} s, added {added:+.2f} s (bound {bound:.1f} s,"
        f" noise margin {baseline.noise:.1f} s)"
    )
    assert added <= bound + baseline.noise, f"{added:+.2f} s is over the documented {bound:.1f} s (+ noise)"
    return added


def one_warning_per_event(run: TimedRun, phrase: str, job: str = JOB) -> list[str]:
    """Exactly one warning naming each of the task's START and COMPLETE events, with ``phrase``."""
    found = []
    for kind in ("START", "COMPLETE"):
        lines = run.lines("[warning", "airflow-lineage-plus:", f"{kind} event of job {job}", phrase)
        assert len(lines) == 1, f"{kind}: {lines}\n{run.output[-4000:]}"
        found += lines
    return found


def _closed_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def _task_events(run: TimedRun, dag_id: str = "reliability_baseline") -> list[str]:
    return [e["eventType"] for e in run.events if e["job"]["name"] == f"{dag_id}.load"]


def test_backend_down_keeps_the_task_and_its_events_in_the_log(
    timed: TimedRunner, baseline: Baseline
) -> None:
    run = timed(
        "reliability_baseline",
        {"AIRFLOW__OPENLINEAGE__TRANSPORT": forward_to(f"http://127.0.0.1:{_closed_port()}")},
    )
    assert_outcome_unchanged(run, baseline, 2 * FORWARD_TIMEOUT, "reliability_baseline")
    lines = one_warning_per_event(run, "not delivered")
    assert all("ConnectionError" in line and "lineage-plus replay" in line for line in lines)
    assert _task_events(run) == ["START", "COMPLETE"]  # nothing lost: replay can re-send them


def _against_a_slow_backend(timed: TimedRunner, env: dict[str, str]) -> TimedRun:
    """A run of ``reliability_baseline`` forwarding to a Marquez that answers after five times the
    provider's ``execution_timeout``."""
    with FakeMarquez() as marquez:
        marquez.delay = EXECUTION_TIMEOUT * 5
        return timed(
            "reliability_baseline", {"AIRFLOW__OPENLINEAGE__TRANSPORT": forward_to(marquez.url), **env}
        )


def test_backend_slower_than_the_provider_timeout_adds_at_most_the_delivery_deadline(
    timed: TimedRunner, baseline: Baseline
) -> None:
    run = _against_a_slow_backend(timed, {})
    assert_outcome_unchanged(run, baseline, 2 * FORWARD_TIMEOUT, "reliability_baseline")
    lines = one_warning_per_event(run, "not delivered")
    assert all(f"no answer within {FORWARD_TIMEOUT:g} s" in line for line in lines)
    assert not run.lines("expired and will be terminated")  # the provider's hard limit was never reached
    assert _task_events(run) == ["START", "COMPLETE"]


def test_backend_slower_than_the_provider_timeout_adds_at_most_the_delivery_deadline_in_a_thread(
    timed: TimedRunner, baseline: Baseline
) -> None:
    """``[openlineage] execute_in_thread`` (docs/reliability.md recommends it): the provider would abandon
    the thread at its timeout; our deadline ends each send first, in the task's own process."""
    run = _against_a_slow_backend(timed, {"AIRFLOW__OPENLINEAGE__EXECUTE_IN_THREAD": "True"})
    assert_outcome_unchanged(run, baseline, 2 * FORWARD_TIMEOUT, "reliability_baseline")
    # both events were sent from the task's process: the loss is logged once there (START's), where the
    # forked processes logged one each
    lines = run.lines("[warning", "airflow-lineage-plus:", f"event of job {JOB}", "not delivered")
    assert len(lines) == 1, run.output[-4000:]
    assert "START event" in lines[0] and f"no answer within {FORWARD_TIMEOUT:g} s" in lines[0]
    assert not run.lines("did not finish within execution_timeout")  # no thread was abandoned
    assert _task_events(run) == ["START", "COMPLETE"]


def test_backend_answering_500_loses_no_event_and_replay_delivers_them_later(
    timed: TimedRunner, baseline: Baseline
) -> None:
    with FakeMarquez() as marquez:
        marquez.fail_status = 500
        run = timed("reliability_baseline", {"AIRFLOW__OPENLINEAGE__TRANSPORT": forward_to(marquez.url)})
        assert_outcome_unchanged(run, baseline, 2 * FORWARD_TIMEOUT, "reliability_baseline")
        lines = one_warning_per_event(run, "not delivered")
        assert all("500" in line for line in lines)
        assert _task_events(run) == ["START", "COMPLETE"]
        assert marquez.state.events == []

        marquez.fail_status = None  # the outage ends: replay what Marquez missed
        report = replay(
            run.log,
            Marquez(marquez.url),
            since=datetime(2000, 1, 1, tzinfo=timezone.utc),
            store_url=f"sqlite:///{store_of(run.log)}",  # the transport's store, beside the log
        )
    assert report.ok and len(report.sent) == len(run.events) == 3
    assert [(e["run"]["runId"], e["eventType"]) for e in marquez.state.events] == [
        (e["run"]["runId"], e["eventType"]) for e in run.events
    ]
    assert validate_events(marquez.state.events) == 3


def test_provider_http_transport_to_a_down_backend_is_cut_at_the_execution_timeout(
    timed: TimedRunner, baseline: Baseline
) -> None:
    """Without our transport: the client's http transport retries, the provider kills its emitter."""
    transport = json.dumps({"type": "http", "url": f"http://127.0.0.1:{_closed_port()}"})
    run = timed("reliability_baseline", {"AIRFLOW__OPENLINEAGE__TRANSPORT": transport}, wait=0)
    added = assert_outcome_unchanged(run, baseline, 2 * (EXECUTION_TIMEOUT + 3), "reliability_baseline")
    # the cut: the provider killed the emitter of each of the task's two events (START, COMPLETE) at its
    # execution_timeout, so each cost at least that long; nothing reached a log (the client's transport)
    expired = run.lines("OpenLineage process with pid", "expired and will be terminated by listener")
    assert len(expired) == 2, run.output[-4000:]
    assert added >= 2 * EXECUTION_TIMEOUT - baseline.noise
    assert run.events == []


def test_missing_connection_loses_the_declaration_with_one_warning_per_event(
    timed: TimedRunner, baseline: Baseline
) -> None:
    run = timed("reliability_missing_connection", {})
    assert_outcome_unchanged(run, baseline, 2 * CONNECTION_LOOKUP_SECONDS, "reliability_missing_connection")
    lines = run.lines("[warning", "airflow-lineage-plus: declared lineage of task 'load' was lost")
    # one per event: START and COMPLETE are built in two processes
    assert len(lines) == 2, run.output[-4000:]
    assert all("no_such_connection" in line for line in lines)
    assert not run.lines("expired and will be terminated")
    events = [e for e in run.events if e["job"]["name"] == "reliability_missing_connection.load"]
    assert [e["eventType"] for e in events] == ["START", "COMPLETE"]  # the provider's events still go out


def test_failing_facet_serialisation_loses_only_that_facet(timed: TimedRunner, baseline: Baseline) -> None:
    run = timed("reliability_facet_raises", {})
    assert_outcome_unchanged(run, baseline, 1.0, "reliability_facet_raises")
    lines = run.lines(
        "[warning", "airflow-lineage-plus: facet 'lineagePlus_exploding' of task 'load' was lost"
    )
    # one per event: START and COMPLETE are built in two processes
    assert len(lines) == 2, run.output[-4000:]
    assert all("facet code is broken" in line for line in lines)
    events = [e for e in run.events if e["job"]["name"] == "reliability_facet_raises.load"]
    assert [e["eventType"] for e in events] == ["START", "COMPLETE"]
    for event in events:  # the rest of the declaration still arrives
        assert [d["name"] for d in event["outputs"]] == ["analytics.staging.stg_orders"]
        assert "lineagePlus_exploding" not in event["job"]["facets"]


def test_disk_full_event_log_loses_events_with_one_warning_each(
    timed: TimedRunner, baseline: Baseline
) -> None:
    run = timed(
        "reliability_baseline",
        # the store cannot be made there either: every event goes to the full spool
        {
            "AIRFLOW__OPENLINEAGE__TRANSPORT": event_log_transport(
                log_file_path="/dev/full", store_url="sqlite:////dev/full/events.db"
            )
        },
        wait=0,
    )
    assert_outcome_unchanged(run, baseline, 1.0, "reliability_baseline")
    one_warning_per_event(run, "No space left on device")


def test_not_writable_event_log_loses_events_with_one_warning_each(
    timed: TimedRunner, baseline: Baseline, tmp_path: Path
) -> None:
    with not_writable_dir(tmp_path) as (folder, error):
        transport = event_log_transport(log_file_path=str(folder / "events.jsonl"))
        run = timed("reliability_baseline", {"AIRFLOW__OPENLINEAGE__TRANSPORT": transport}, wait=0)
    assert_outcome_unchanged(run, baseline, 1.0, "reliability_baseline")
    one_warning_per_event(run, error)


def test_runtime_api_misuse_is_contained_and_named(timed: TimedRunner, baseline: Baseline) -> None:
    run = timed("reliability_misuse", {})
    assert_outcome_unchanged(run, baseline, 1.0, "reliability_misuse")
    assert run.lines("Done. Returned value was: 5")
    assert len(run.lines("[warning", "data-quality figures for <object object at")) == 1
    assert len(run.lines("[warning", "data-quality figures for DatasetRef(", "stg_orders")) == 1
    assert len(run.lines("[warning", "run-time schema of DatasetRef(", "stg_orders")) == 1
    assert run.lines("[warning", "assertion 'outside_a_task'", "was lost")  # at parse time, in each parser
    complete = [
        e
        for e in run.events
        if e["job"]["name"] == "reliability_misuse.load" and e["eventType"] == "COMPLETE"
    ]
    assert [d["name"] for d in complete[0]["outputs"]] == ["analytics.staging.stg_orders"]


def test_connection_password_never_reaches_the_event_log(timed: TimedRunner, baseline: Baseline) -> None:
    run = timed("reliability_secrets", {})
    assert_outcome_unchanged(run, baseline, 1.0, "reliability_secrets")
    text = written_text(run.log)
    assert WAREHOUSE_PASSWORD not in text
    events = [e for e in run.events if e["job"]["name"] == "reliability_secrets.load"]
    assert [e["eventType"] for e in events] == ["START", "COMPLETE"]
    for event in events:
        assert event["job"]["facets"]["sql"]["query"] == (
            "COPY orders FROM 'postgres://etl_user:***@warehouse.internal:5432/analytics'"
        )
        raw = next(d for d in event["inputs"] if d["name"] == "orders")
        assert raw["facets"]["documentation"]["description"] == "copied with password ***"
        assert ("postgres://warehouse.internal:5432", "analytics.public.orders") in {
            (d["namespace"], d["name"]) for d in event["outputs"]
        }
    (assertion,) = [
        a
        for d in events[1]["outputs"]
        for a in d.get("inputFacets", {}).get("dataQualityAssertions", {}).get("assertions", [])
        + d["facets"].get("dataQualityAssertions", {}).get("assertions", [])
    ]
    assert assertion["actual"] == "etl_user:***"
    assert validate_events(run.events) == len(run.events)


def test_a_failing_task_still_fails_with_its_own_error_when_all_lineage_fails(
    timed: TimedRunner, baseline: Baseline
) -> None:
    """Backend down, a missing connection, a broken facet and API misuse at once: the task's own
    exception decides its state, nothing else."""
    transport = forward_to(f"http://127.0.0.1:{_closed_port()}")
    run = timed("reliability_failing", {"AIRFLOW__OPENLINEAGE__TRANSPORT": transport})
    bound = 2 * (FORWARD_TIMEOUT + CONNECTION_LOOKUP_SECONDS)
    assert_outcome_unchanged(run, baseline, bound, "reliability_failing", state="failed")
    assert run.lines("ValueError", "the task's own failure")
    assert not run.lines("expired and will be terminated")
    job = "test-airflow/reliability_failing.load"
    for kind in ("START", "FAIL"):
        assert len(run.lines("[warning", f"{kind} event of job {job}", "not delivered")) == 1
    assert len(run.lines("[warning", "declared lineage of task 'load' was lost", "no_such_connection")) == 2
    assert len(run.lines("[warning", "data-quality figures for <object object at")) == 1
    events = [e["eventType"] for e in run.events if e["job"]["name"] == "reliability_failing.load"]
    assert events == ["START", "FAIL"]
