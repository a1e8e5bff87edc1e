"""Every machine's lineage in one graph (issue #26): Airflow shaped as production runs it, on one machine.

One deployment for the whole module (tests/support/topology.py): PostgreSQL for Airflow's metadata and the
lineage store, Redis, the CeleryExecutor, two API servers with the FAB auth manager, the scheduler, the
dag-processor and two Celery workers, each with its own ``AIRFLOW_HOME``, host name, queue and spool, in
network namespaces the test makes (``ip netns``, veth pairs to a bridge: a worker reaches Redis and the
API servers, not PostgreSQL). Without root or iproute2 the workers run on the host's loopback instead,
and the namespace test fails saying so. Workers send lineage with ``[lineage_plus] collector_url``:
``worker-1`` to ``api-1``, ``worker-2`` and the scheduler to ``api-2``; a task runs ``dbt-ol build``
through the client's ``http`` transport to the endpoint, as docs/collector.md tells any producer.

One scenario, then the checks:

1. ``ha_skips`` (two catch-up runs, three skipped tasks each: the scheduler's skip records) and the dbt
   DAG run with everything up;
2. ``api-1`` is killed (SIGKILL) while ``worker-1``'s tasks of a ``topology_slow`` run go on, and started
   again once they ended: their events wait in worker-1's spool, and its retry process sends them;
3. PostgreSQL is stopped while a second ``topology_slow`` run's tasks sleep, and started again: the
   endpoint answers 503 with ``Retry-After`` meanwhile;
4. a flood of 10,000 events from one producer (batches of 50, 32 requests in flight, retried after
   ``Retry-After``) on ``api-1``, while ``/api/v2/monitor/health`` and ``/api/v2/dags`` are asked every
   50 ms, and were asked the same way just before.

Every event in the store is validated against the OpenLineage schemas.
"""

from __future__ import annotations

import json
import os
import threading
import time
import uuid
from collections import Counter
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx
import orjson
import pytest

from airflow_lineage_plus.store.spool import FLUSHING, pending_bytes
from tests.support.openlineage_spec import validate_events
from tests.support.postgres_env import wait_until
from tests.support.topology import DEPLOY, HA_SKIPS, HOSTS, INGEST_KEY, Topology, topology

pytestmark = [pytest.mark.airflow, pytest.mark.timeout(1500), pytest.mark.minutes(6)]

SLEEP = 6.0
SLOW, DBT, SKIPS = "topology_slow", "topology_dbt", "ha_skips"
SLOW_TASKS = ("w1_first", "w1_second", "w2_first", "w2_second")
SKIPPED = ("extract", "load", "cleanup")
FLOOD_EVENTS, FLOOD_BATCH, FLOOD_IN_FLIGHT = 10_000, 50, 32
PROBED = ("/api/v2/monitor/health", "/api/v2/dags")
#: what exits when PostgreSQL goes away, and what a supervisor (systemd, Kubernetes) starts again
SUPERVISED = ("scheduler", "dag-processor")


@dataclass
class Scenario:
    top: Topology
    runs: dict[str, str] = field(default_factory=dict)
    spooled_while_api_down: int = 0
    started_on_worker1_before_the_spool_was_sent: list[str] = field(default_factory=list)
    while_postgres_down: list[tuple[int, str | None]] = field(default_factory=list)
    flood_statuses: Counter[int] = field(default_factory=Counter)
    flood_names: list[str] = field(default_factory=list)
    idle: dict[str, list[tuple[int, float]]] = field(default_factory=dict)
    busy: dict[str, list[tuple[int, float]]] = field(default_factory=dict)
    events: list[dict[str, Any]] = field(default_factory=list)
    stored_bytes: list[bytes] = field(default_factory=list)


def _state_of(top: Topology, dag_id: str, run_id: str, task: str) -> str:
    return top.task_states(dag_id).get((run_id, task), "")


def _wait_run(top: Topology, dag_id: str, run_id: str, timeout: float = 400, supervise: bool = False) -> None:
    """Until the DAG run ended; every component must keep running, except that with ``supervise`` the
    scheduler and the dag-processor are started again when they exited (they exit when PostgreSQL goes
    away, and a supervisor starts them again)."""

    def ended() -> bool:
        for name in ("scheduler", "dag-processor", *HOSTS):
            if not (supervise and name in SUPERVISED and top.revive(name)):
                top.deployment.assert_running(name)
        return top.run_state(dag_id, run_id) in {"success", "failed"}

    wait_until(ended, timeout, f"the run {run_id} of {dag_id}")


def _spools_empty(top: Topology) -> bool:
    spools = [top.spool(host) for host in HOSTS] + [top.deployment.root / "server" / "spool.jsonl"]
    return all(pending_bytes(spool) == 0 for spool in spools)


def _spooled(spool: Path) -> int:
    """Events waiting in ``spool`` and in what a failed flush moved aside."""
    paths = [spool, *spool.parent.glob(spool.name + FLUSHING + "*")]
    return sum(len(path.read_bytes().splitlines()) for path in paths if path.exists())


def _kill_api_mid_run(scenario: Scenario) -> None:
    top = scenario.top
    run = scenario.runs["api-kill"] = top.trigger(SLOW)
    wait_until(lambda: _state_of(top, SLOW, run, "w1_first") == "running", 300, "w1_first running")
    top.deployment.kill("api-1")
    wait_until(
        lambda: _state_of(top, SLOW, run, "w1_second") in {"success", "failed"}, 300, "worker-1's tasks"
    )
    scenario.spooled_while_api_down = _spooled(top.spool("worker-1"))
    top.start_api("api-1")
    top.wait_for_api("api-1")
    back = top.deployment.postgres.query("SELECT now()")[0][0]
    # the spool's retry process sends it: no new event of worker-1 is needed
    wait_until(lambda: pending_bytes(top.spool("worker-1")) == 0, 120, "worker-1's spool sent")
    rows = top.deployment.postgres.query(
        "SELECT task_id FROM task_instance WHERE hostname = 'worker-1' AND start_date > %s", back
    )
    scenario.started_on_worker1_before_the_spool_was_sent = [str(task) for (task,) in rows]
    _wait_run(top, SLOW, run)


def _post_while_down(top: Topology) -> tuple[int, str | None]:
    body = json.dumps(_event(f"while_postgres_down_{uuid.uuid4()}")).encode()
    response = httpx.post(
        f"{top.api('api-2').base}/lineage-plus/api/v1/lineage",
        content=body,
        headers={"Authorization": f"Bearer {INGEST_KEY}"},
        timeout=60,
    )
    return response.status_code, response.headers.get("retry-after")


def _restart_postgres_mid_run(scenario: Scenario) -> None:
    top = scenario.top
    run = scenario.runs["postgres-restart"] = top.trigger(SLOW)
    wait_until(
        lambda: all(_state_of(top, SLOW, run, f"{q}_first") == "running" for q in ("w1", "w2")),
        300,
        "both first tasks running",
    )
    top.deployment.postgres.stop()
    try:
        scenario.while_postgres_down.append(_post_while_down(top))
        time.sleep(SLEEP)  # the first tasks end (and report) while the store is down
    finally:
        top.deployment.postgres.resume()
    _wait_run(top, SLOW, run, supervise=True)


def _event(name: str) -> dict[str, Any]:
    return {
        "eventType": "COMPLETE",
        "eventTime": "2026-12-03T06:00:00.000000+00:00",
        "producer": "https://github.com/example/flood",
        "schemaURL": "https://openlineage.io/spec/2-0-2/OpenLineage.json#/$defs/RunEvent",
        "run": {"runId": str(uuid.uuid4())},
        "job": {"namespace": "flood", "name": name},
        "inputs": [],
        "outputs": [{"namespace": "postgres://warehouse:5432", "name": f"flood.{name}"}],
    }


def _probe(top: Topology, stop: threading.Event, found: dict[str, list[tuple[int, float]]]) -> None:
    headers = {"Authorization": f"Bearer {top.token('admin', 'api-1')}"}
    with httpx.Client(base_url=top.api("api-1").base, headers=headers, timeout=60) as client:
        while not stop.is_set():
            for path in PROBED:
                began = time.perf_counter()
                status = client.get(path).status_code
                found.setdefault(path, []).append((status, time.perf_counter() - began))
            time.sleep(0.02)


def _probed(top: Topology, found: dict[str, list[tuple[int, float]]], seconds: float) -> None:
    stop = threading.Event()
    prober = threading.Thread(target=_probe, args=(top, stop, found))
    prober.start()
    time.sleep(seconds)
    stop.set()
    prober.join()


def _send_batch(top: Topology, client: httpx.Client, batch: bytes, statuses: Counter[int]) -> None:
    """One batch, sent again after ``Retry-After`` while it gets 429 or 503 (as OpenLineage's client does)."""
    while True:
        response = client.post(f"{top.api('api-1').base}/lineage-plus/api/v1/lineage/batch", content=batch)
        statuses[response.status_code] += 1
        if response.status_code not in (429, 503):
            assert response.status_code == 200 and response.json()["status"] == "success", response.text
            return
        time.sleep(float(response.headers["retry-after"]))


def _flood(scenario: Scenario) -> None:
    top = scenario.top
    _probed(top, scenario.idle, 6.0)
    names = scenario.flood_names = [f"flood_{n}" for n in range(FLOOD_EVENTS)]
    events = [orjson.dumps(_event(name)) for name in names]
    batches = [
        b"[" + b",".join(events[n : n + FLOOD_BATCH]) + b"]" for n in range(0, len(events), FLOOD_BATCH)
    ]
    stop = threading.Event()
    prober = threading.Thread(target=_probe, args=(top, stop, scenario.busy))
    prober.start()
    headers = {"Authorization": f"Bearer {INGEST_KEY}", "Content-Type": "application/json"}
    limits = httpx.Limits(max_connections=FLOOD_IN_FLIGHT)
    try:
        with (
            httpx.Client(headers=headers, timeout=120, limits=limits) as client,
            ThreadPoolExecutor(FLOOD_IN_FLIGHT) as pool,
        ):
            sent = [pool.submit(_send_batch, top, client, b, scenario.flood_statuses) for b in batches]
            for done in sent:
                done.result()
    finally:
        stop.set()
        prober.join()


@pytest.fixture(scope="module")
def scenario() -> Iterator[Scenario]:
    dags = [HA_SKIPS, DEPLOY / "dags" / "topology_dags.py"]
    began = time.monotonic()
    phases: list[str] = []

    def phase(name: str) -> None:
        phases.append(f"{name} {time.monotonic() - began:.0f} s")

    with topology(dags, {"TOPOLOGY_SLEEP": str(SLEEP)}) as top:
        phase("database migrated")
        found = Scenario(top)
        top.start(readable_dag=SKIPS)
        top.deployment.wait_for_dags([SKIPS, SLOW, DBT])
        phase("all up")
        top.deployment.unpause(SKIPS)  # two daily runs, caught up
        found.runs["dbt"] = top.trigger(DBT)
        _kill_api_mid_run(found)
        phase("api-1 killed and back")
        _restart_postgres_mid_run(found)
        phase("PostgreSQL restarted")
        _wait_run(top, DBT, found.runs["dbt"])
        wait_until(lambda: Counter(top.task_states(SKIPS).values())["skipped"] == 6, 300, "ha_skips' runs")
        wait_until(lambda: len(_skip_records(_events(top.stored()))) == 6, 300, "six skip records")
        wait_until(lambda: _spools_empty(top), 120, "every spool sent")
        phase("every run done")
        _flood(found)
        phase("flood")
        found.stored_bytes = top.stored()
        found.events = _events(found.stored_bytes)
        print("\ntopology scenario:", ", ".join(phases))
        yield found


def _events(stored: list[bytes]) -> list[dict[str, Any]]:
    return [orjson.loads(payload) for payload in stored]


def _skip_records(events: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [e for e in events if e["eventType"] == "ABORT" and "lineagePlus_skipState" in e["run"]["facets"]]


def _of_run(events: list[dict[str, Any]], dag_id: str, run_id: str) -> Counter[tuple[str, str]]:
    """(task, eventType) of the task events of one DAG run, counted."""
    found: Counter[tuple[str, str]] = Counter()
    for event in events:
        airflow = event["run"].get("facets", {}).get("airflow") or {}
        if airflow.get("dagRun", {}).get("run_id") == run_id and event["job"]["name"].startswith(
            f"{dag_id}."
        ):
            found[(event["job"]["name"].removeprefix(f"{dag_id}."), event["eventType"])] += 1
    return found


def _dag_run_events(events: list[dict[str, Any]], dag_id: str, run_id: str) -> Counter[str]:
    return Counter(
        e["eventType"]
        for e in events
        if e["job"]["name"] == dag_id
        and (e["run"].get("facets", {}).get("airflowDagRun") or {}).get("dagRun", {}).get("run_id") == run_id
    )


def test_every_stored_event_is_valid_openlineage_and_stored_once(scenario: Scenario) -> None:
    assert validate_events(scenario.events) == len(scenario.events) > FLOOD_EVENTS
    assert len(set(scenario.stored_bytes)) == len(scenario.stored_bytes)
    keys = Counter((e["job"]["name"], e["eventType"], e["run"]["runId"]) for e in scenario.events)
    assert [key for key, count in keys.items() if count > 1] == []


def test_the_workers_ran_their_tasks_in_network_namespaces_of_their_own(scenario: Scenario) -> None:
    """Fails where namespaces cannot be made (not root, no iproute2): the workers then shared the host's
    loopback, and docs/collector.md says so."""
    top = scenario.top
    assert top.network is not None, "no network namespaces here: the workers ran on the host's loopback"
    hosts = top.task_hosts(SLOW)
    assert {task: hosts[task] for task in SLOW_TASKS} == {
        "w1_first": "worker-1",
        "w1_second": "worker-1",
        "w2_first": "worker-2",
        "w2_second": "worker-2",
    }
    for host in HOSTS:
        assert top.deployment.log(host).count(" ready.") == 1


def test_killing_an_api_server_mid_run_spools_its_workers_events_and_loses_nothing(
    scenario: Scenario,
) -> None:
    top, run = scenario.top, scenario.runs["api-kill"]
    assert scenario.spooled_while_api_down >= 2  # at least w1_first's COMPLETE and w1_second's START
    assert scenario.started_on_worker1_before_the_spool_was_sent == []  # sent with no new event
    assert {task: _state_of(top, SLOW, run, task) for task in SLOW_TASKS} == dict.fromkeys(
        SLOW_TASKS, "success"
    )
    expected = Counter({(task, kind): 1 for task in SLOW_TASKS for kind in ("START", "COMPLETE")})
    assert _of_run(scenario.events, SLOW, run) == expected
    assert _dag_run_events(scenario.events, SLOW, run) == Counter({"START": 1, "COMPLETE": 1})
    assert _spools_empty(top)


def test_a_postgresql_restart_mid_run_answers_503_and_loses_nothing(scenario: Scenario) -> None:
    top, run = scenario.top, scenario.runs["postgres-restart"]
    assert scenario.while_postgres_down == [(503, "1")]
    assert set(top.revived) <= set(SUPERVISED)  # the API servers and the workers went on
    assert {task: _state_of(top, SLOW, run, task) for task in SLOW_TASKS} == dict.fromkeys(
        SLOW_TASKS, "success"
    )
    expected = Counter({(task, kind): 1 for task in SLOW_TASKS for kind in ("START", "COMPLETE")})
    assert _of_run(scenario.events, SLOW, run) == expected
    assert _dag_run_events(scenario.events, SLOW, run) == Counter({"START": 1, "COMPLETE": 1})
    assert not [e for e in scenario.events if e["job"]["name"].startswith("while_postgres_down_")]


def _view(scenario: Scenario, api: str, path: str, user: str, **params: Any) -> httpx.Response:
    """A Lineage view answer; a 503 (the view still reading the store) is asked again after its
    ``Retry-After``, as the page does."""
    deadline = time.monotonic() + 300
    while True:
        response = scenario.top.get(api, f"/lineage-plus/api/{path}", user, **params)
        if response.status_code != 503 or time.monotonic() > deadline:
            return response
        time.sleep(float(response.headers.get("retry-after", "1")))


def _dag(scenario: Scenario, api: str, dag_id: str, user: str = "admin") -> httpx.Response:
    return _view(scenario, api, "dag", user, dag_id=dag_id, depth=4)


def test_dbt_models_task_lineage_and_skip_records_are_one_graph_the_same_on_both_api_servers(
    scenario: Scenario,
) -> None:
    answers = {
        dag_id: [_dag(scenario, api, dag_id).json() for api in ("api-1", "api-2")]
        for dag_id in (SKIPS, SLOW, DBT)
    }
    for dag_id, (first, second) in answers.items():
        assert first == second, dag_id
    names = {dag_id: {node["name"] for node in graph[0]["nodes"]} for dag_id, graph in answers.items()}
    # ``work`` (an EmptyOperator the scheduler marks done without running it) reports nothing
    assert {f"{SKIPS}.{task}" for task in (*SKIPPED, "gate")} <= names[SKIPS]
    assert {f"{SLOW}.{task}" for task in SLOW_TASKS} <= names[SLOW]
    assets = {name for name in names[SLOW] if name.endswith(".parquet")}  # the tasks' inlets and outlets
    assert len(assets) == 4 and all(any(a.endswith(f"{t}.parquet") for a in assets) for t in SLOW_TASKS)
    assert scenario.top.task_states(DBT) == {(scenario.runs["dbt"], "dbt_build"): "success"}
    dbt_tables = {name for name in names[DBT] if name.endswith(("orders", "daily_totals"))}
    assert len(dbt_tables) == 2, names[DBT]
    records = _skip_records(scenario.events)
    assert Counter(e["job"]["name"].removeprefix(f"{SKIPS}.") for e in records) == Counter(
        dict.fromkeys(SKIPPED, 2)
    )
    dbt_runs = [
        e
        for e in scenario.events
        if (e["job"].get("facets") or {}).get("jobType", {}).get("integration") == "DBT"
    ]
    assert dbt_runs and {e["eventType"] for e in dbt_runs} >= {"START", "COMPLETE"}


def test_a_fab_user_with_one_dag_sees_only_that_dag_on_both_api_servers(scenario: Scenario) -> None:
    for api in ("api-1", "api-2"):
        assert _dag(scenario, api, SKIPS, "alpha").json() == _dag(scenario, api, SKIPS, "admin").json()
        for hidden in (SLOW, DBT):
            assert _dag(scenario, api, hidden, "alpha").status_code == 404
        assert _view(scenario, api, "search", "alpha", q="topology").json() == {"results": []}
        assert _view(scenario, api, "search", "admin", q="topology").json()["results"]


def _p95(samples: list[tuple[int, float]]) -> float:
    ordered = sorted(seconds for _, seconds in samples)
    return ordered[min(len(ordered) - 1, int(len(ordered) * 0.95))]


def test_a_flood_from_one_producer_gets_429s_loses_nothing_and_airflow_keeps_answering(
    scenario: Scenario,
) -> None:
    statuses = scenario.flood_statuses
    assert statuses[429] > 0 and statuses[200] == FLOOD_EVENTS // FLOOD_BATCH, statuses
    stored = Counter(e["job"]["name"] for e in scenario.events if e["job"]["namespace"] == "flood")
    assert stored == Counter(dict.fromkeys(scenario.flood_names, 1))
    for path in PROBED:
        assert {status for status, _ in scenario.idle[path] + scenario.busy[path]} == {200}, path
        ratio = _p95(scenario.busy[path]) / _p95(scenario.idle[path])
        print(
            f"{path}: p95 {_p95(scenario.busy[path]) * 1e3:.1f} ms during the flood, "
            f"{_p95(scenario.idle[path]) * 1e3:.1f} ms idle ({ratio:.2f}x)"
        )
        assert len(scenario.busy[path]) >= 3


def test_nothing_is_left_on_a_worker_and_no_component_stopped(scenario: Scenario) -> None:
    top = scenario.top
    assert _spools_empty(top)
    for name in ("scheduler", "dag-processor", "api-1", "api-2", *HOSTS):
        top.deployment.assert_running(name)
    assert os.path.isdir(top.deployment.root)
