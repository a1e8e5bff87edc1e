"""Production-shaped Airflow: PostgreSQL, api-server, dag-processor and two schedulers (LocalExecutor).

One deployment for the whole module (``tests/support/postgres_env.py``), one scenario, several checks:

1. with the claims table locked by the test, our claim statement hits the statement timeout
   (``[lineage_plus] skip_query_timeout = 2``): that DAG run's records are lost with one warning;
2. then two DAG runs through the two schedulers: the schedulers went on, and every task instance the
   scheduler skipped gets exactly one record;
3. the DAG-run hook called again in another process (as a second scheduler would) adds nothing, and with
   the provider's process pool unusable it drops the records with one warning instead of emitting them
   in the calling process;
4. no error in any scheduler's log; the audit-log statement is served by the ``log`` table's index on a
   DAG with a long history; claims racing on PostgreSQL give each runId to exactly one claimer.
"""

from __future__ import annotations

import subprocess
import sys
from collections import Counter
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import attr
import pytest

from airflow_lineage_plus.claims import skip_claims_table
from tests.emit.skip_support import DAGS, skip_facet, skip_records, task_name
from tests.support.claim_race import TABLE, claim_all
from tests.support.openlineage_spec import validate_events
from tests.support.postgres_env import (
    AirflowDeployment,
    add_log_history,
    free_port,
    postgres_airflow,
    wait_until,
)

pytestmark = [pytest.mark.airflow, pytest.mark.timeout(900), pytest.mark.minutes(1.5)]

TWO_RUNS, LOCKED = "ha_skips", "ha_skips_locked"
SKIPPED = {"extract": "SHORT_CIRCUIT", "load": "SHORT_CIRCUIT", "cleanup": "TRIGGER_RULE"}
SCHEDULERS = ("scheduler-1", "scheduler-2")
LOST = "the batch of skip records of a finished DAG run was lost"
NAMED = f"no skip records for DAG run {LOCKED}/"
DROPPED = "not handed to the OpenLineage process pool; dropped, not run in the scheduler"

REPORT_AGAIN = """
import os
from sqlalchemy import select
from airflow.models.dagrun import DagRun
from airflow.utils.session import create_session
from airflow_lineage_plus.emit import skip_listener, skip_records

with create_session() as session:
    runs = list(session.scalars(select(DagRun).where(DagRun.dag_id == {dag_id!r})))
    session.expunge_all()
# What another scheduler's pool worker runs for a DAG run it reports again: build, claim, emit.
for dag_run in runs:
    skip_records.emit_committed(dag_run.dag_id, dag_run.run_id, dag_run.clear_number)
print("REPORTED AGAIN", flush=True)
# The hook itself while the provider's process pool cannot start (read when the pool is first built),
# with claims nobody made yet: anything built and emitted in this process instead would go out.
os.environ["AIRFLOW__OPENLINEAGE__DAG_STATE_CHANGE_PROCESS_POOL_SIZE"] = "0"
os.environ["AIRFLOW__LINEAGE_PLUS__SKIP_CLAIMS_TABLE"] = "no_pool_claims"
for dag_run in runs:
    skip_listener.on_dag_run_success(dag_run=dag_run, msg="reported with no pool")
"""


@attr.define
class Scenario:
    deployment: AirflowDeployment
    events_after_runs: list[dict[str, Any]] = attr.field(factory=list)
    events: list[dict[str, Any]] = attr.field(factory=list)
    report_again: str = ""
    no_pool: str = ""


def _ended(events: list[dict[str, Any]], dag_id: str) -> int:
    return sum(1 for e in events if e["job"]["name"] == dag_id and e["eventType"] in {"COMPLETE", "FAIL"})


def _records(events: list[dict[str, Any]], dag_id: str) -> list[dict[str, Any]]:
    return [e for e in skip_records(events) if e["job"]["name"].startswith(f"{dag_id}.")]


def _run_dag(deployment: AirflowDeployment, dag_id: str, runs: int, records: int) -> None:
    deployment.unpause(dag_id)

    def done() -> bool:
        for name in SCHEDULERS:
            deployment.assert_running(name)
        events = deployment.events()
        return _ended(events, dag_id) >= runs and len(_records(events, dag_id)) >= records

    wait_until(done, 300, f"{runs} run(s) of {dag_id} and {records} skip record(s)")


def _run_locked(deployment: AirflowDeployment) -> None:
    """One DAG run while the test holds an ACCESS EXCLUSIVE lock on the claims table (created here)."""
    from sqlalchemy import create_engine

    engine = create_engine(deployment.postgres.url())
    skip_claims_table(TABLE).create(engine)
    engine.dispose()
    with deployment.postgres.connect() as locker:
        locker.execute(f"LOCK TABLE {TABLE} IN ACCESS EXCLUSIVE MODE")
        deployment.unpause(LOCKED)
        wait_until(lambda: _ended(deployment.events(), LOCKED) == 1, 300, f"the run of {LOCKED}")
        wait_until(
            lambda: any(NAMED in deployment.log(name) for name in SCHEDULERS), 120, "the lost-records message"
        )
        locker.rollback()


def _report_again(deployment: AirflowDeployment) -> tuple[str, str]:
    """Output of reporting the finished DAG runs again from a new process: (with a pool, with none)."""
    proc = subprocess.run(
        [sys.executable, "-c", REPORT_AGAIN.format(dag_id=TWO_RUNS)],
        env=deployment.env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    output = proc.stdout + proc.stderr
    assert proc.returncode == 0 and "REPORTED AGAIN" in output, output[-3000:]
    again, _, no_pool = output.partition("REPORTED AGAIN")
    return again, no_pool


def _scheduler_env() -> dict[str, str]:
    return {"AIRFLOW__LOGGING__WORKER_LOG_SERVER_PORT": str(free_port())}


@pytest.fixture(scope="module")
def scenario() -> Iterator[Scenario]:
    with postgres_airflow([DAGS / "ha_skips.py"], {"AIRFLOW__LINEAGE_PLUS__SKIP_QUERY_TIMEOUT": "2"}) as dep:
        dep.start_api_server()
        dep.start("dag-processor", "dag-processor")
        for name in SCHEDULERS:
            dep.start(name, "scheduler", env=_scheduler_env())
        dep.wait_for_api_server()
        dep.wait_for_dags([TWO_RUNS, LOCKED])
        _run_locked(dep)
        _run_dag(dep, TWO_RUNS, runs=2, records=6)
        found = Scenario(dep, events_after_runs=dep.events())
        found.report_again, found.no_pool = _report_again(dep)
        dep.stop()  # the schedulers drain the provider's pool on SIGTERM
        found.events = dep.events()
        yield found


def _skipped_in_database(deployment: AirflowDeployment, dag_id: str) -> Counter[tuple[str, str]]:
    rows = deployment.postgres.query(
        "SELECT run_id, task_id FROM task_instance WHERE dag_id = %s AND state = 'skipped'", dag_id
    )
    return Counter((str(run_id), str(task_id)) for run_id, task_id in rows)


def test_two_schedulers_on_postgres_emit_exactly_one_record_per_scheduler_skipped_task(
    scenario: Scenario,
) -> None:
    events = scenario.events
    validate_events(events)
    records = _records(events, TWO_RUNS)
    dag_runs = {
        e["run"]["runId"]: e["run"]["facets"]["airflowDagRun"]["dagRun"]["run_id"]
        for e in events
        if e["job"]["name"] == TWO_RUNS and "airflowDagRun" in e["run"]["facets"]
    }
    assert len(dag_runs) == 2
    emitted = Counter(
        (dag_runs[r["run"]["facets"]["parent"]["run"]["runId"]], task_name(r, TWO_RUNS)) for r in records
    )
    skipped = _skipped_in_database(scenario.deployment, TWO_RUNS)
    assert len(skipped) == 6
    assert emitted == skipped  # every skipped task instance, each exactly once
    assert {task_name(r, TWO_RUNS): skip_facet(r)["reason"] for r in records} == SKIPPED
    assert len({r["run"]["runId"] for r in records}) == 6
    claims = scenario.deployment.postgres.query(f"SELECT run_id FROM {TABLE} WHERE dag_id = %s", TWO_RUNS)
    assert sorted(r for (r,) in claims) == sorted(r["run"]["runId"] for r in records)
    # the task that ran is reported by the provider only, under its own runId
    gate = [e for e in events if e["job"]["name"] == f"{TWO_RUNS}.gate"]
    assert Counter(e["eventType"] for e in gate) == Counter({"START": 2, "COMPLETE": 2})
    assert not {e["run"]["runId"] for e in gate} & {r["run"]["runId"] for r in records}


def test_a_statement_timeout_in_our_claim_loses_that_runs_records_with_one_warning_and_the_scheduler_goes_on(
    scenario: Scenario,
) -> None:
    events = scenario.events
    assert _ended(events, LOCKED) == 1
    assert _records(events, LOCKED) == []
    lines = [line for name in SCHEDULERS for line in scenario.deployment.log(name).splitlines()]
    warnings = [line for line in lines if LOST in line]
    assert len(warnings) == 1
    assert "[warning" in warnings[0] and "statement timeout" in warnings[0]
    assert len([line for line in lines if NAMED in line]) == 1
    assert scenario.deployment.postgres.query(f"SELECT run_id FROM {TABLE} WHERE dag_id = %s", LOCKED) == []
    # the schedulers went on: the next DAG runs ran, and got their records (checked in the test above)
    assert _ended(events, TWO_RUNS) == 2


def test_reporting_a_finished_run_again_adds_nothing_and_an_unusable_pool_drops_with_one_warning(
    scenario: Scenario,
) -> None:
    assert _records(scenario.events, TWO_RUNS) == _records(scenario.events_after_runs, TWO_RUNS)
    assert "emitted" not in scenario.report_again and "was lost" not in scenario.report_again
    output = scenario.no_pool
    dropped = [line for line in output.splitlines() if DROPPED in line]
    assert len(dropped) == 1, output[-3000:]  # two DAG runs, one warning
    assert "[warning" in dropped[0]
    assert output.count(f"no skip records for DAG run {TWO_RUNS}/") == 2
    assert "emitted" not in output
    tables = scenario.deployment.postgres.query(
        "SELECT tablename FROM pg_tables WHERE tablename = 'no_pool_claims'"
    )
    assert tables == []  # nothing was even read or claimed in the calling process


def test_no_scheduler_logs_an_error(scenario: Scenario) -> None:
    for name in SCHEDULERS:
        assert "Starting the scheduler" in scenario.deployment.log(name)
        errors = scenario.deployment.error_lines(name)
        assert errors == [], f"{name}:\n" + "\n".join(errors)


def test_the_audit_log_statement_is_served_by_the_log_tables_index(scenario: Scenario) -> None:
    from sqlalchemy.dialects import postgresql

    from airflow_lineage_plus.emit.skip_causes import audit_log_statement

    statement = audit_log_statement(TWO_RUNS, "scheduled__2024-01-01T00:00:00+00:00", sorted(SKIPPED))
    sql = str(statement.compile(dialect=postgresql.dialect(), compile_kwargs={"literal_binds": True}))
    with scenario.deployment.postgres.connect() as connection:
        add_log_history(connection, TWO_RUNS)
        plan = "\n".join(row[0] for row in connection.execute(f"EXPLAIN {sql}"))
        connection.rollback()
    assert "idx_log_task_instance" in plan, plan
    index_cond = next(line for line in plan.splitlines() if "Index Cond" in line)
    # task_id right after dag_id: the index seeks to this run's rows, not the DAG's whole history
    assert "dag_id" in index_cond and "task_id" in index_cond and "run_id" in index_cond, plan


def test_concurrent_claims_on_postgres_give_each_run_id_to_exactly_one_claimer(scenario: Scenario) -> None:
    """Four claimers at once (threads, each with its own connection and transaction) claim the same ids."""
    url = scenario.deployment.postgres.url()
    with ThreadPoolExecutor(4) as pool:
        claimed = list(pool.map(claim_all, [url] * 4, [200] * 4, ["race_claims"] * 4))
    winners = Counter(run for claims in claimed for run in claims)
    assert set(winners) == {f"run-{i}" for i in range(200)}
    assert set(winners.values()) == {1}
    assert claim_all(url, 200, "race_claims") == []
