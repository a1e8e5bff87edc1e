"""Real DAG runs: every task instance that did no work leaves exactly one truthful skip record.

The five DAGs run once each, one after another in one Airflow process (``AirflowRunner.run_many``), and
each test reads its own DAG's run."""

from __future__ import annotations

import subprocess
import sys
from collections import Counter
from pathlib import Path
from typing import Any

import pytest

from tests.emit.skip_support import DAGS, MODE_KEY, SKIP_ENV, LiveAirflow, skip_facet, skip_records, task_name
from tests.support.harness import AirflowRunner, DagRunResult, Recording, event_log_transport, read_events
from tests.support.openlineage_spec import validate_events

pytestmark = [pytest.mark.airflow, pytest.mark.minutes(3)]

SKIP_DAGS = ("skip_self", "skip_short_circuit", "skip_branch", "skip_trigger_rule", "skip_mapped")
BATCH = "skip_state"  # run_many's name: its DAGs folder and event log (``LiveAirflow.env``)


@pytest.fixture(scope="module")
def skip_runs(
    airflow_db: Path, tmp_path_factory: pytest.TempPathFactory
) -> tuple[dict[str, DagRunResult], Path]:
    """Each skip DAG's run (by DAG id), and the work directory the batch ran in."""
    runner = AirflowRunner(tmp_path_factory.mktemp(BATCH))
    results = runner.run_many(
        *(DAGS / f"{dag_id}.py" for dag_id in SKIP_DAGS),
        recordings=[Recording(dag_id) for dag_id in SKIP_DAGS],
        env=SKIP_ENV,
        name=BATCH,
    )
    return dict(zip(SKIP_DAGS, results, strict=True)), runner.workdir


def _by_task(events: list[dict[str, Any]], dag_id: str) -> dict[str, list[dict[str, Any]]]:
    tasks: dict[str, list[dict[str, Any]]] = {}
    for event in events:
        if event["job"]["name"].startswith(f"{dag_id}."):
            tasks.setdefault(task_name(event, dag_id), []).append(event)
    return tasks


def _dag_run_ol_id(events: list[dict[str, Any]], dag_id: str) -> str:
    (run_id,) = {e["run"]["runId"] for e in events if e["job"]["name"] == dag_id}
    return str(run_id)


def _airflow_run_id(events: list[dict[str, Any]], dag_id: str) -> str:
    """Airflow's run_id of the DAG run, as the provider's DAG-run event names it."""
    (run_id,) = {
        e["run"]["facets"]["airflowDagRun"]["dagRun"]["run_id"] for e in events if e["job"]["name"] == dag_id
    }
    return str(run_id)


def _provider_run_id(
    events: list[dict[str, Any]], dag_id: str, task_id: str, try_number: int, map_index: int
) -> str:
    """The runId the provider's own deterministic function gives a task instance of the DAG run."""
    from airflow.models.dagrun import DagRun
    from airflow.providers.openlineage.plugins.adapter import OpenLineageAdapter
    from airflow.utils.session import create_session
    from sqlalchemy import select

    with create_session() as session:
        dag_run = session.scalars(
            select(DagRun).where(DagRun.dag_id == dag_id, DagRun.run_id == _airflow_run_id(events, dag_id))
        ).one()
        date = dag_run.logical_date or dag_run.run_after
    return str(
        OpenLineageAdapter.build_task_instance_run_id(
            dag_id=dag_id, task_id=task_id, try_number=try_number, logical_date=date, map_index=map_index
        )
    )


def _assert_one_run_per_task_instance(events: list[dict[str, Any]], dag_id: str) -> None:
    """Every runId belongs to one task instance; a task instance's events never span two runIds."""
    per_instance: dict[tuple[str, int], set[str]] = {}
    for event in events:
        if not event["job"]["name"].startswith(f"{dag_id}."):
            continue
        facets = event["run"]["facets"]
        skip = facets.get("lineagePlus_skipState")
        if skip is not None and "mapIndex" in skip:
            map_index = skip["mapIndex"]
        else:
            map_index = facets.get("airflow", {}).get("taskInstance", {}).get("map_index", -1)
        per_instance.setdefault((event["job"]["name"], map_index), set()).add(event["run"]["runId"])
    for instance, run_ids in per_instance.items():
        assert len(run_ids) == 1, f"{instance} has {len(run_ids)} runIds"


def test_self_skip_marks_the_providers_own_complete_and_downstream_gets_one_record(
    skip_runs: tuple[dict[str, DagRunResult], Path],
) -> None:
    result = skip_runs[0]["skip_self"]
    assert result.returncode == 0, result.output[-3000:]
    validate_events(result.events)
    tasks = _by_task(result.events, "skip_self")

    quiet = tasks["quiet"]
    assert [e["eventType"] for e in quiet] == ["START", "COMPLETE"]
    assert len({e["run"]["runId"] for e in quiet}) == 1
    assert skip_facet(quiet[0]) is None
    facet = skip_facet(quiet[1])
    assert facet is not None
    assert facet["skipped"] is True
    assert facet["reason"] == "SELF_SKIP"
    assert facet["message"] == "no new files in s3://lineage-bucket/incoming"

    # Deferred, resumed in a new process, then skipped: the resumed COMPLETE carries the message.
    deferred = tasks["wait_then_skip"]
    assert len({e["run"]["runId"] for e in deferred}) == 1
    assert deferred[-1]["eventType"] == "COMPLETE"
    assert skip_facet(deferred[-1])["reason"] == "SELF_SKIP"
    assert skip_facet(deferred[-1])["message"] == "nothing arrived while waiting"
    assert not any(e["eventType"] == "ABORT" for e in deferred)

    # Downstream of the self-skip: never ran, so exactly one record from the listener.
    (record,) = tasks["after_quiet"]
    assert record["eventType"] == "ABORT"
    assert record["run"]["runId"] == _provider_run_id(result.events, "skip_self", "after_quiet", 0, -1)
    assert skip_facet(record)["reason"] == "TRIGGER_RULE"
    assert skip_facet(record)["causedBy"] == "quiet"
    assert skip_facet(record)["upstreamStates"] == {"quiet": "skipped"}
    assert [(d["namespace"], d["name"]) for d in record["inputs"]] == [
        ("s3://lineage-bucket", "staged/orders.parquet")
    ]
    assert record["outputs"] == []
    assert record["run"]["facets"]["parent"]["run"]["runId"] == _dag_run_ol_id(result.events, "skip_self")

    # Tasks that ran: nothing extra; the execution mode lands on the COMPLETE of the one that set it.
    for ran in ("cached", "ran"):
        assert [e["eventType"] for e in tasks[ran]] == ["START", "COMPLETE"]
        assert all(skip_facet(e) is None for e in tasks[ran])
    assert tasks["cached"][1]["run"]["facets"][MODE_KEY]["mode"] == "CACHED"
    assert tasks["cached"][1]["run"]["facets"][MODE_KEY]["reason"] == "output already up to date"
    assert MODE_KEY not in tasks["ran"][1]["run"]["facets"]
    assert len(skip_records(result.events)) == 1
    _assert_one_run_per_task_instance(result.events, "skip_self")


def test_short_circuit_gives_one_record_per_task_of_the_chain_and_a_second_call_adds_none(
    skip_runs: tuple[dict[str, DagRunResult], Path],
) -> None:
    result = skip_runs[0]["skip_short_circuit"]
    live_airflow = LiveAirflow(skip_runs[1])
    assert result.returncode == 0, result.output[-3000:]
    validate_events(result.events)
    tasks = _by_task(result.events, "skip_short_circuit")
    records = skip_records(result.events)
    assert Counter(task_name(e, "skip_short_circuit") for e in records) == Counter(
        {"extract": 1, "transform": 1, "load": 1, "wait": 1}
    )
    for record in records:
        name = task_name(record, "skip_short_circuit")
        assert tasks[name] == [record]
        assert record["run"]["runId"] == _provider_run_id(result.events, "skip_short_circuit", name, 0, -1)
        facet = skip_facet(record)
        assert (facet["reason"], facet["causedBy"], facet["state"]) == ("SHORT_CIRCUIT", "gate", "skipped")
        assert record["outputs"] == []
    assert [(d["namespace"], d["name"]) for d in tasks["extract"][0]["inputs"]] == [
        ("s3://lineage-bucket", "raw/orders.csv")
    ]
    for ran in ("prepare", "gate", "unrelated"):
        assert [e["eventType"] for e in tasks[ran]] == ["START", "COMPLETE"]
        assert all(skip_facet(e) is None for e in tasks[ran])
    _assert_one_run_per_task_instance(result.events, "skip_short_circuit")

    # The listener called again for the same DAG run (in a new process, as another scheduler would):
    # nothing new. With a fresh claims table the same four records do go out again: the claims in the
    # metadata database are what stop them. Each call writes to a store of its own (the run's store would
    # keep a record sent again with the same bytes once, and hide a second send).
    run_id = _airflow_run_id(result.events, "skip_short_circuit")
    again = live_airflow.workdir / "again-skip_short_circuit.jsonl"
    _call_listener_again(
        live_airflow,
        "skip_short_circuit",
        run_id,
        {"AIRFLOW__OPENLINEAGE__TRANSPORT": event_log_transport(again)},
    )
    assert read_events(again) == []
    fresh = live_airflow.workdir / "fresh-claims-skip_short_circuit.jsonl"
    fresh_claims = {
        "AIRFLOW__LINEAGE_PLUS__SKIP_CLAIMS_TABLE": "skip_short_circuit_fresh_claims",
        "AIRFLOW__OPENLINEAGE__TRANSPORT": event_log_transport(fresh),
    }
    _call_listener_again(live_airflow, "skip_short_circuit", run_id, fresh_claims)
    resent = read_events(fresh)
    assert sorted(e["run"]["runId"] for e in resent) == sorted(e["run"]["runId"] for e in records)


def _call_listener_again(
    live: LiveAirflow, dag_id: str, run_id: str, extra: dict[str, str] | None = None
) -> None:
    """Call the plugin's DAG-run hook for the DAG's finished run in a new process, as a scheduler would."""
    script = f"""
from sqlalchemy import select
from airflow.models.dagrun import DagRun
from airflow.utils.session import create_session
from airflow_lineage_plus.emit import skip_listener

with create_session() as session:
    dag_run = session.scalars(
        select(DagRun).where(DagRun.dag_id == {dag_id!r}, DagRun.run_id == {run_id!r})
    ).one()
    skip_listener.on_dag_run_success(dag_run=dag_run, msg="reported again")
"""
    proc = subprocess.run(
        [sys.executable, "-c", script],
        env=live.env(BATCH, {**SKIP_ENV, **(extra or {})}),  # the batch's DAGs folder and log
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "was lost" not in proc.stdout + proc.stderr, proc.stdout + proc.stderr


def test_branch_not_taken_skips_a_task_group_with_the_branch_as_cause(
    skip_runs: tuple[dict[str, DagRunResult], Path],
) -> None:
    result = skip_runs[0]["skip_branch"]
    assert result.returncode == 0, result.output[-3000:]
    validate_events(result.events)
    records = {task_name(e, "skip_branch"): skip_facet(e) for e in skip_records(result.events)}
    assert set(records) == {"full.full_load", "full.full_check"}
    assert len(skip_records(result.events)) == 2
    assert (records["full.full_load"]["reason"], records["full.full_load"]["causedBy"]) == (
        "BRANCH_NOT_TAKEN",
        "choose",
    )
    assert (records["full.full_check"]["reason"], records["full.full_check"]["causedBy"]) == (
        "TRIGGER_RULE",
        "full.full_load",
    )
    tasks = _by_task(result.events, "skip_branch")
    for ran in ("choose", "fast.fast_load", "fast.fast_check", "join"):
        assert [e["eventType"] for e in tasks[ran]] == ["START", "COMPLETE"]
        assert all(skip_facet(e) is None for e in tasks[ran])
    _assert_one_run_per_task_instance(result.events, "skip_branch")


def test_trigger_rules_after_an_upstream_failure_record_rule_and_upstream_states(
    skip_runs: tuple[dict[str, DagRunResult], Path],
) -> None:
    result = skip_runs[0]["skip_trigger_rule"]
    validate_events(result.events)
    records = {task_name(e, "skip_trigger_rule"): skip_facet(e) for e in skip_records(result.events)}
    assert len(skip_records(result.events)) == 2
    assert records["after_boom"] == {
        **records["after_boom"],
        "skipped": True,
        "reason": "TRIGGER_RULE",
        "state": "upstream_failed",
        "triggerRule": "all_success",
        "causedBy": "boom",
        "upstreamStates": {"boom": "failed"},
    }
    assert records["alert_if_all_failed"] == {
        **records["alert_if_all_failed"],
        "reason": "TRIGGER_RULE",
        "state": "skipped",
        "triggerRule": "all_failed",
        "causedBy": "ok",
        "upstreamStates": {"boom": "failed", "ok": "success"},
    }
    tasks = _by_task(result.events, "skip_trigger_rule")
    assert [e["eventType"] for e in tasks["boom"]] == ["START", "FAIL"]
    for ran in ("ok", "cleanup"):
        assert [e["eventType"] for e in tasks[ran]] == ["START", "COMPLETE"]
    assert all(skip_facet(e) is None for name in ("boom", "ok", "cleanup") for e in tasks[name])
    dag_states = next(e for e in result.events if e["job"]["name"] == "skip_trigger_rule")["run"]["facets"]
    assert dag_states["airflowState"]["tasksState"]["after_boom"] == "upstream_failed"
    _assert_one_run_per_task_instance(result.events, "skip_trigger_rule")


def test_mapped_task_group_gets_one_record_per_map_index_that_did_not_run(
    skip_runs: tuple[dict[str, DagRunResult], Path],
) -> None:
    result = skip_runs[0]["skip_mapped"]
    assert result.returncode == 0, result.output[-3000:]
    validate_events(result.events)
    tasks = _by_task(result.events, "skip_mapped")

    self_skips = {skip_facet(e)["mapIndex"]: skip_facet(e) for e in tasks["per_file.check"] if skip_facet(e)}
    assert set(self_skips) == {1, 2}
    assert self_skips[1]["message"] == "b.csv is empty"
    assert self_skips[2]["message"] == "c.csv is empty"
    assert all(f["reason"] == "SELF_SKIP" for f in self_skips.values())

    records = skip_records(result.events)
    assert sorted(skip_facet(e)["mapIndex"] for e in records) == [1, 2]
    for record in records:
        assert task_name(record, "skip_mapped") == "per_file.load"
        map_index = skip_facet(record)["mapIndex"]
        assert record["run"]["runId"] == _provider_run_id(
            result.events, "skip_mapped", "per_file.load", 0, map_index
        )
        assert skip_facet(record)["causedBy"] == "per_file.check"
        assert skip_facet(record)["upstreamStates"] == {"per_file.check": "skipped"}
    assert len({e["run"]["runId"] for e in records}) == 2
    ran_loads = [e for e in tasks["per_file.load"] if e["eventType"] != "ABORT"]
    assert [e["eventType"] for e in ran_loads] == ["START", "COMPLETE"]
    assert ran_loads[0]["run"]["facets"]["airflow"]["taskInstance"]["map_index"] == 0
    _assert_one_run_per_task_instance(result.events, "skip_mapped")
