"""Workers on two "machines": CeleryExecutor, Redis, two workers, and where the lineage ends up.

    python benchmarks/celery_topology.py [--runs 2]

Needs ``apache-airflow-providers-celery`` and ``celery<5.7`` (celery 5.7 breaks providers-celery 3.26) in
the venv, and Debian's ``redis-server`` and ``postgresql`` (``scripts/system-deps.sh`` installs the latter;
``apt-get install redis-server`` the former). Not part of CI: see docs/deployment.md for why and for what
it costs.

Starts PostgreSQL (tests/support/postgres_env.py), Redis in a temp dir, a Marquez stand-in
(tests/support/fake_marquez.py, the one place lineage should end up), an api-server, a dag-processor, one
scheduler and two Celery workers. Each component has its own ``AIRFLOW_HOME`` and its own event log, as on
separate machines; all of them use the recommended transport (the event-log transport, forwarding to
Marquez). Runs ``tests/emit/dags/ha_skips.py`` and prints, per component, what its local event log holds,
then what Marquez holds and whether it is the union of them all, and the cost (CPU seconds, wall time).
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests" / "support"))

import psutil
from fake_marquez import FakeMarquez
from postgres_env import AirflowDeployment, free_port, postgres_airflow, wait_until
from processes import stop_gracefully

SUPPORT = Path(__file__).resolve().parents[1] / "tests" / "support"
DAG_FILE = Path(__file__).resolve().parents[1] / "tests" / "emit" / "dags" / "ha_skips.py"
DAG_ID = "ha_skips"
COMPONENTS = ("scheduler", "worker-1", "worker-2")


def _read(path: Path) -> list[dict[str, Any]]:
    if not path.exists():
        return []
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


def _key(event: dict[str, Any]) -> tuple[str, str, str]:
    return (event["job"]["name"], event["run"]["runId"], event["eventType"])


def _start_redis(root: Path) -> tuple[subprocess.Popen[bytes], int]:
    port = free_port()
    (root / "redis").mkdir()
    command = ["redis-server", "--port", str(port), "--bind", "127.0.0.1", "--dir", str(root / "redis")]
    proc = subprocess.Popen(
        [*command, "--save", "", "--appendonly", "no"],
        stdout=(root / "redis" / "redis.log").open("wb"),
        stderr=subprocess.STDOUT,
        start_new_session=True,
    )
    return proc, port


def _component_env(dep: AirflowDeployment, name: str, marquez: str, broker: str) -> dict[str, str]:
    home = dep.root / name
    home.mkdir(exist_ok=True)
    transport = {
        "type": "airflow_lineage_plus.transport.EventLogTransport",
        "forward_timeout": 5,
        "forward": {"type": "http", "url": marquez, "endpoint": "api/v1/lineage"},
    }
    result_backend = dep.postgres.url().replace("postgresql+psycopg://", "db+postgresql://")
    return {
        "AIRFLOW_HOME": str(home),
        # each component records its own host name, as on separate machines
        "PYTHONPATH": os.pathsep.join(filter(None, [os.environ.get("PYTHONPATH"), str(SUPPORT)])),
        "AIRFLOW__CORE__HOSTNAME_CALLABLE": "fake_host.hostname",
        "LINEAGE_PLUS_FAKE_HOSTNAME": name,
        "AIRFLOW__CORE__EXECUTOR": "CeleryExecutor",
        "AIRFLOW__CELERY__BROKER_URL": broker,
        "AIRFLOW__CELERY__RESULT_BACKEND": result_backend,
        "AIRFLOW__CELERY__WORKER_CONCURRENCY": "1",
        "AIRFLOW__OPENLINEAGE__TRANSPORT": json.dumps(transport),
        "AIRFLOW__LINEAGE_PLUS__EVENT_LOG_PATH": str(home / "events.jsonl"),
        "AIRFLOW__LOGGING__WORKER_LOG_SERVER_PORT": str(free_port()),
    }


def _cpu(pids: list[int]) -> float:
    total = 0.0
    for pid in pids:
        try:
            proc = psutil.Process(pid)
            for member in [proc, *proc.children(recursive=True)]:
                times = member.cpu_times()
                total += times.user + times.system + times.children_user + times.children_system
        except psutil.NoSuchProcess:
            continue
    return total


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--runs", type=int, default=2, help="DAG runs (the DAG has two; default 2)")
    args = parser.parse_args()
    if shutil.which("redis-server") is None:
        sys.exit("redis-server is not installed: apt-get install redis-server")
    began = time.monotonic()
    with FakeMarquez() as marquez, postgres_airflow([DAG_FILE]) as dep:
        redis, port = _start_redis(dep.root)
        broker = f"redis://127.0.0.1:{port}/0"
        envs = {name: _component_env(dep, name, marquez.url, broker) for name in COMPONENTS}
        try:
            dep.start_api_server()
            dep.start("dag-processor", "dag-processor", env=envs["scheduler"])
            dep.start("scheduler", "scheduler", env=envs["scheduler"])
            for worker in ("worker-1", "worker-2"):
                host = f"{worker}@%h"
                dep.start(worker, "celery", "worker", "-H", host, env=envs[worker])
            dep.wait_for_api_server()
            wait_until(
                lambda: all("ready" in dep.log(w) for w in ("worker-1", "worker-2")), 300, "both workers"
            )
            dep.wait_for_dags([DAG_ID])
            up = time.monotonic() - began
            pids = [dep.pid(name) for name in ("api-server", "dag-processor", *COMPONENTS)]
            cpu_up = _cpu(pids)  # cumulative since each process started: the start-up's share
            dep.unpause(DAG_ID)

            def done() -> bool:
                ended = [e for e in marquez.state.events if e["job"]["name"] == DAG_ID]
                records = [e for e in marquez.state.events if e["eventType"] == "ABORT"]
                return (
                    sum(e["eventType"] == "COMPLETE" for e in ended) >= args.runs
                    and len(records) >= 3 * args.runs
                )

            wait_until(done, 600, f"{args.runs} runs in Marquez")
            cpu = _cpu(pids) - cpu_up
            ran = time.monotonic() - began - up
            dep.stop()
        finally:
            stop_gracefully([redis])
        local = {name: _read(dep.root / name / "events.jsonl") for name in COMPONENTS}
        in_marquez = Counter(_key(e) for e in marquez.state.events)
        union = Counter(_key(e) for events in local.values() for e in events)
        hosts = dep.postgres.query(
            "SELECT run_id, task_id, hostname FROM task_instance WHERE hostname <> '' ORDER BY run_id"
        )
        errors = {name: len(dep.error_lines(name)) for name in ("scheduler", "worker-1", "worker-2")}
    print(f"start-up (PostgreSQL, migrate, 5 components): {up:.1f} s; {args.runs} runs: {ran:.1f} s")
    print(f"CPU seconds of the Airflow components: start-up {cpu_up:.1f}, the runs {cpu:.1f}")
    print("task instances ran on:", [f"{run}/{task}: {host}" for run, task, host in hosts])
    for name, events in local.items():
        kinds = Counter(f"{e['eventType']} {e['job']['name'].split('.')[-1]}" for e in events)
        print(f"{name:9s} local event log: {len(events):3d} events  {dict(sorted(kinds.items()))}")
    print(f"Marquez: {sum(in_marquez.values())} events; union of the local logs: {sum(union.values())}")
    print("Marquez holds exactly the union of the local logs:", in_marquez == union)
    print("error lines:", errors)


if __name__ == "__main__":
    main()
