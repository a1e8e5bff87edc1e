"""Scheduler loop time with and without airflow-lineage-plus: PostgreSQL, two schedulers, LocalExecutor.

    .venv/bin/python benchmarks/scheduler_bench.py [--runs 50] [--order ABBA]

One deployment (tests/support/postgres_env.py: PostgreSQL from Debian's packages in a temp dir, a migrated
metadata database, api-server and dag-processor) and ``benchmarks/dags/load_skips.py``: a 30-task DAG of
which 2 tasks run on the executor and 10 are skipped by the scheduler. The load is split into segments
in ``--order`` (A = without the package: ``[lineage_plus] disabled``; B = with it), each segment a fresh
DAG with ``--runs`` / 2 daily runs by catch-up, through two freshly started schedulers. ABBA cancels a
linear drift (the database grows, the machine's other load changes) out of the comparison.

Printed per segment and per configuration: the schedulers' own "Ran scheduling loop in N ms" figures
(DEBUG of ``airflow.jobs.scheduler_job_runner`` only) between unpausing the DAG and its last run's end
(mean, p95, sum), the two scheduler processes' CPU seconds, wall time; then the ratio with/without of the
mean loop time (one run: compare ratios, not absolute figures, on a shared machine), the exactly-one
check (every task instance the database shows skipped without running has one record in the event log)
and error lines in the scheduler logs. Last, EXPLAIN (ANALYZE, BUFFERS) of the audit-log read, in the
shape the package uses and in the shape it used before, on a ``log`` table holding a year of a 30-task
DAG's history.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import statistics
import sys
import time
from collections import Counter
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests" / "support"))

import psutil
from postgres_env import AirflowDeployment, add_log_history, free_port, postgres_airflow, wait_until

DAG_FILE = Path(__file__).resolve().parent / "dags" / "load_skips.py"
LOOP = re.compile(r"^(\S+Z) \[debug\s*\] Ran scheduling loop in ([\d.]+) ms")
CONFIGS = {"A": ("without", "True"), "B": ("with", "False")}
SKIPPED_PER_RUN = 10


def _segments(order: str) -> list[str]:
    seen: Counter[str] = Counter()
    names = []
    for config in order:
        seen[config] += 1
        names.append(f"{config.lower()}{seen[config]}")
    return names


def _loop_times(log: str, start: datetime, end: datetime) -> list[float]:
    found = []
    for line in log.splitlines():
        match = LOOP.match(line)
        if match:
            when = datetime.fromisoformat(match.group(1).replace("Z", "+00:00"))
            if start <= when <= end:
                found.append(float(match.group(2)))
    return found


def _finished_runs(dep: AirflowDeployment, dag_id: str) -> int:
    rows = dep.postgres.query(
        "SELECT count(*) FROM dag_run WHERE dag_id = %s AND state IN ('success', 'failed')", dag_id
    )
    return int(rows[0][0])


def _records(dep: AirflowDeployment, dag_id: str) -> list[dict[str, Any]]:
    return [
        e
        for e in dep.events()
        if e["eventType"] == "ABORT"
        and e["job"]["name"].startswith(f"{dag_id}.")
        and "lineagePlus_skipState" in e["run"].get("facets", {})
    ]


def run_segment(dep: AirflowDeployment, segment: str, runs: int) -> dict[str, Any]:
    """Start two schedulers in the segment's configuration, run the segment's DAG, stop them, measure."""
    label, disabled = CONFIGS[segment[0].upper()]
    dag_id = f"load_skips_{segment}"
    names = [f"scheduler-1-{segment}", f"scheduler-2-{segment}"]
    for name in names:
        dep.start(
            name,
            "scheduler",
            env={
                "AIRFLOW__LINEAGE_PLUS__DISABLED": disabled,
                "AIRFLOW__LOGGING__NAMESPACE_LEVELS": "airflow.jobs.scheduler_job_runner=DEBUG",
                "AIRFLOW__LOGGING__WORKER_LOG_SERVER_PORT": str(free_port()),
            },
        )
    wait_until(lambda: all("Starting the scheduler" in dep.log(n) for n in names), 300, "the schedulers")
    procs = [psutil.Process(dep.pid(n)) for n in names]
    cpu_before = sum(p.cpu_times().user + p.cpu_times().system for p in procs)
    start = datetime.now(timezone.utc)
    began = time.monotonic()
    dep.unpause(dag_id)
    wait_until(lambda: _finished_runs(dep, dag_id) == runs, 3600, f"{runs} runs of {dag_id}", poll=1.0)
    wall = time.monotonic() - began
    end = datetime.now(timezone.utc)
    cpu = sum(p.cpu_times().user + p.cpu_times().system for p in procs) - cpu_before
    expected = runs * SKIPPED_PER_RUN if label == "with" else 0
    deadline = time.monotonic() + 120  # the records follow the runs' ends (missing ones are reported)
    while len(_records(dep, dag_id)) < expected and time.monotonic() < deadline:
        time.sleep(1)
    dep.stop(*names)
    loops = [t for name in names for t in _loop_times(dep.log(name), start, end)]
    errors = [line for name in names for line in dep.error_lines(name)]
    return {
        "segment": segment,
        "config": label,
        "dag_id": dag_id,
        "loops": loops,
        "cpu": cpu,
        "wall": wall,
        "errors": errors,
    }


def exactly_once(dep: AirflowDeployment, dag_ids: list[str]) -> dict[str, int]:
    """Skipped-without-running task instances in the database vs skip records in the event log."""
    skipped: Counter[tuple[str, str, str]] = Counter()
    for dag_id in dag_ids:
        rows = dep.postgres.query(
            "SELECT ti.dag_id, ti.run_id, ti.task_id FROM task_instance ti WHERE ti.dag_id = %s "
            "AND ti.state IN ('skipped', 'upstream_failed') AND NOT EXISTS (SELECT 1 FROM log l "
            "WHERE l.dag_id = ti.dag_id AND l.task_id = ti.task_id AND l.run_id = ti.run_id "
            "AND l.event = 'running')",
            dag_id,
        )
        skipped.update((str(d), str(r), str(t)) for d, r, t in rows)
    parents = {
        e["run"]["runId"]: e["run"]["facets"]["airflowDagRun"]["dagRun"]["run_id"]
        for e in dep.events()
        if e["job"]["name"] in dag_ids and "airflowDagRun" in e["run"].get("facets", {})
    }
    records: Counter[tuple[str, str, str]] = Counter()
    for dag_id in dag_ids:
        for record in _records(dep, dag_id):
            run_id = parents.get(record["run"]["facets"]["parent"]["run"]["runId"], "?")
            records[(dag_id, run_id, record["job"]["name"].removeprefix(f"{dag_id}."))] += 1
    return {
        "skipped task instances": len(skipped),
        "records": sum(records.values()),
        "task instances with exactly one record": sum(1 for k in skipped if records[k] == 1),
        "duplicates": sum(n - 1 for n in records.values() if n > 1),
        "missing": sum(1 for k in skipped if records[k] == 0),
        "records of no skipped task instance": sum(1 for k in records if k not in skipped),
    }


def explain(dep: AirflowDeployment) -> dict[str, str]:
    """EXPLAIN (ANALYZE, BUFFERS) of the audit-log read, now and before, on a DAG with a year of history."""
    os.environ.update(dep.env)  # the statement is built by the package against Airflow's models
    from sqlalchemy.dialects import postgresql

    from airflow_lineage_plus.emit.skip_causes import audit_log_statement

    dag_id, run_id = "history_dag", "scheduled__history_200"
    tasks = [f"task_{i}" for i in range(1, 11)]
    with dep.postgres.connect() as connection:
        add_log_history(connection, dag_id)
        now = audit_log_statement(dag_id, run_id, tasks)
        shapes = {
            "now": str(now.compile(dialect=postgresql.dialect(), compile_kwargs={"literal_binds": True})),
            "before": "SELECT log.task_id, log.map_index, log.try_number FROM log WHERE log.dag_id = "
            f"'{dag_id}' AND log.run_id = '{run_id}' AND log.event = 'running'",
        }
        plans = {}
        for name, sql in shapes.items():
            connection.execute(f"EXPLAIN (ANALYZE, BUFFERS, COSTS OFF) {sql}")  # warm the cache
            rows = connection.execute(f"EXPLAIN (ANALYZE, BUFFERS, COSTS OFF) {sql}")
            plans[name] = sql + "\n" + "\n".join(r[0] for r in rows)
        count = connection.execute("SELECT count(*) FROM log").fetchone()
        plans["rows"] = str(count[0] if count else 0)
    return plans


def hook_cost(dep: AirflowDeployment, dag_id: str, repeat: int = 200) -> tuple[float, float]:
    """Median seconds, on the calling thread, of (DAG-run hook + commit) and of the commit alone.

    What the package adds to the scheduler's thread per DAG-run end, measured directly: the hook notes
    the run, the commit hands it to the provider's pool (whose process then finds every record claimed).
    """
    os.environ.update(dep.env)
    from airflow.models.dagrun import DagRun
    from airflow.providers.openlineage.plugins.listener import get_openlineage_listener
    from airflow.utils.session import create_session
    from sqlalchemy import select

    from airflow_lineage_plus.emit import skip_listener

    timings: dict[bool, list[float]] = {True: [], False: []}
    with create_session() as session:
        runs = list(session.scalars(select(DagRun).where(DagRun.dag_id == dag_id)))
        for i in range(repeat + 2):
            with_hook = i % 2 == 0
            dag_run = runs[i % len(runs)]
            session.refresh(dag_run)  # loaded, in an open transaction, as the scheduler has it
            began = time.perf_counter()
            if with_hook:
                skip_listener.on_dag_run_success(dag_run=dag_run, msg="benchmark")
            session.commit()
            if i >= 2:  # the first hand-off starts the provider's pool
                timings[with_hook].append(time.perf_counter() - began)
    # Let the pool finish the handed-off work before PostgreSQL stops, as a scheduler does on exit
    # (without this, the stop cuts the pool's sessions and it logs every run's batch as lost).
    get_openlineage_listener().before_stopping(component=None)
    return statistics.median(timings[True]), statistics.median(timings[False])


def _summary(loops: list[float]) -> str:
    if not loops:
        return "no loops"
    p95 = statistics.quantiles(loops, n=20)[-1] if len(loops) > 1 else loops[0]
    mean, median = statistics.fmean(loops), statistics.median(loops)
    return (
        f"{len(loops):5d} loops  mean {mean:7.2f} ms  median {median:7.2f} ms  p95 {p95:7.2f} ms  "
        f"sum {sum(loops) / 1000:6.1f} s"
    )


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--runs", type=int, default=50, help="DAG runs per configuration (default 50)")
    parser.add_argument("--order", default="ABBA", help="segments: A = without, B = with (default ABBA)")
    args = parser.parse_args()
    segments = _segments(args.order.upper())
    per_segment = args.runs // args.order.upper().count("A")
    env = {"LOAD_SKIPS_SEGMENTS": ",".join(segments), "LOAD_SKIPS_RUNS": str(per_segment)}
    print(f"{args.runs} DAG runs per configuration, segments {segments} of {per_segment} runs", flush=True)
    with postgres_airflow([DAG_FILE], env) as dep:
        dep.start_api_server()
        dep.start("dag-processor", "dag-processor")
        dep.wait_for_api_server()
        dep.wait_for_dags([f"load_skips_{s}" for s in segments], timeout=600)
        results = []
        for segment in segments:
            result = run_segment(dep, segment, per_segment)
            results.append(result)
            print(
                f"{segment:4s} {result['config']:7s} {_summary(result['loops'])}  scheduler CPU "
                f"{result['cpu']:6.1f} s  wall {result['wall']:6.1f} s  error lines {len(result['errors'])}",
                flush=True,
            )
        by_config = {
            label: [t for r in results if r["config"] == label for t in r["loops"]]
            for label, _ in CONFIGS.values()
        }
        cpu = {label: sum(r["cpu"] for r in results if r["config"] == label) for label, _ in CONFIGS.values()}
        for label, loops in by_config.items():
            print(f"{label:7s}      {_summary(loops)}  scheduler CPU {cpu[label]:6.1f} s")
        ratio = statistics.fmean(by_config["with"]) / statistics.fmean(by_config["without"])
        print(f"mean loop time with / without: {ratio:.3f}")
        median = statistics.median(by_config["with"]) / statistics.median(by_config["without"])
        print(f"median loop time with / without: {median:.3f}")
        print(f"scheduler CPU with / without: {cpu['with'] / cpu['without']:.3f}")
        same = {
            label: [statistics.fmean(r["loops"]) for r in results if r["config"] == label] for label in cpu
        }
        spread = {label: max(v) / min(v) for label, v in same.items() if len(v) > 1 and min(v) > 0}
        print("noise: mean loop time, slowest / fastest segment of the same configuration:", spread)
        with_dags = [r["dag_id"] for r in results if r["config"] == "with"]
        print("exactly once (with):", json.dumps(exactly_once(dep, with_dags)))
        without_dags = [r["dag_id"] for r in results if r["config"] == "without"]
        print("records without the package:", sum(len(_records(dep, d)) for d in without_dags))
        for result in results:
            for line in result["errors"][:5]:
                print(f"error line ({result['segment']}): {line[:300]}")
        dep.stop()
        hook, commit = hook_cost(dep, with_dags[0])
        added = hook - commit
        ends = sum(1 for r in results if r["config"] == "with") * per_segment
        loop_total = sum(by_config["with"]) / 1000
        print(
            f"DAG-run hook on the calling thread: hook + commit {hook * 1e6:.0f} us, commit alone "
            f"{commit * 1e6:.0f} us: {added * 1e6:.0f} us added per DAG-run end; x {ends} run ends = "
            f"{added * ends * 1000:.1f} ms of {loop_total:.0f} s in scheduler loops "
            f"({100 * added * ends / loop_total:.4f} %)"
        )
        plans = explain(dep)
        print(f"\nEXPLAIN on a log table of {plans['rows']} rows:")
        for name in ("now", "before"):
            print(f"-- {name}:\n{plans[name]}\n")


if __name__ == "__main__":
    main()
