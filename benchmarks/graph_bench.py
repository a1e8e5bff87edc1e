"""Benchmark the lineage graph on a synthetic event log (see benchmarks/generate_events.py).

Prints cold load time and peak memory, warm p50/p95 latency of upstream/downstream at depth 10,
failed-upstream and the UI's lineage(depth 5), and the cost of picking up appended events.

    python benchmarks/graph_bench.py --log /tmp/events.jsonl --generate 1000000
"""

from __future__ import annotations

import argparse
import functools
import os
import random
import resource
import statistics
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from generate_events import generate  # noqa: E402

from airflow_lineage_plus.graph import LineageQueries  # noqa: E402
from airflow_lineage_plus.graph.eventlog import EventLogSource  # noqa: E402


def _percentiles(samples: list[float]) -> tuple[float, float]:
    ordered = sorted(samples)
    p95 = ordered[min(len(ordered) - 1, round(0.95 * (len(ordered) - 1)))]
    return statistics.median(ordered), p95


def _time(fn: Callable[[], Any]) -> float:
    began = time.perf_counter()
    fn()
    return (time.perf_counter() - began) * 1000


def calibrate() -> float:
    """CPU seconds of a plain 10M-step Python loop, to compare the speed of the machine the figures
    were taken on with another one."""
    began = time.process_time()
    total = 0
    for i in range(10_000_000):
        total += i
    return round(time.process_time() - began, 2)


def run(log: Path, samples: int = 200, append: int = 1000, seed: int = 1) -> dict[str, Any]:
    """Figures for one event log (the caller starts a fresh process for honest cold-load numbers)."""
    rss_before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    load_average = os.getloadavg()[0]
    began, began_cpu = time.perf_counter(), time.process_time()
    source = EventLogSource(log)
    load_s, load_cpu_s = time.perf_counter() - began, time.process_time() - began_cpu
    peak_mib = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    queries = LineageQueries(source)
    rng = random.Random(seed)
    datasets = sorted(source.graph.datasets)
    jobs = sorted(source.graph.jobs)
    targets = rng.sample(datasets, min(samples, len(datasets)))
    job_targets = rng.sample(jobs, min(samples, len(jobs)))
    figures: dict[str, Any] = {
        "events": source.events,
        "bytes": log.stat().st_size,
        "datasets": len(datasets),
        "jobs": len(jobs),
        "runs": len(source.graph.runs),
        "problems": dict(source.problems),
        "cold_load_s": round(load_s, 2),
        "cold_load_cpu_s": round(load_cpu_s, 2),
        "load_average_1min_before": round(load_average, 2),
        "peak_rss_mib": round(peak_mib, 1),
        "rss_before_load_mib": round(rss_before / 1024, 1),
    }
    cases: dict[str, Callable[[str], Any]] = {
        "upstream_d10": lambda t: queries.upstream(t, 10),
        "downstream_d10": lambda t: queries.downstream(t, 10),
        "failed_upstream_d10": lambda t: queries.failed_upstream(t, 10),
        "lineage_d5_limit500": lambda t: queries.lineage(t, 5, limit=500),
    }
    for name, fn in cases.items():
        pool = (
            targets
            if name != "lineage_d5_limit500"
            else targets[: samples // 2] + job_targets[: samples // 2]
        )
        fn(pool[0])  # warm
        times = [_time(functools.partial(fn, t)) for t in pool]
        p50, p95 = _percentiles(times)
        figures[f"{name}_p50_ms"] = round(p50, 2)
        figures[f"{name}_p95_ms"] = round(p95, 2)
        figures[f"{name}_max_ms"] = round(max(times), 2)
    # incremental pick-up: append events of a few new DAG runs, then refresh
    extra = log.with_suffix(".extra.jsonl")
    written = generate(extra, events=append, datasets=500, jobs=100, seed=seed + 99).events
    figures["refresh_nothing_new_ms"] = round(_time(source.refresh), 2)
    size_before = log.stat().st_size
    with open(log, "ab") as out, open(extra, "rb") as new:
        out.write(new.read())
    began = time.perf_counter()
    picked = source.refresh()
    figures["appended_events"] = written
    figures["refresh_appended_events"] = picked
    figures["refresh_appended_ms"] = round((time.perf_counter() - began) * 1000, 2)
    figures["refresh_read_bytes"] = source.offset - size_before
    figures["appended_bytes"] = log.stat().st_size - size_before
    extra.unlink()
    os.truncate(log, size_before)  # leave the log as it was, for the next run
    return figures


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--log", type=Path, required=True)
    parser.add_argument(
        "--generate", type=int, default=0, help="first (re)generate a log with this many events"
    )
    parser.add_argument("--datasets", type=int, default=100_000)
    parser.add_argument("--jobs", type=int, default=20_000)
    parser.add_argument("--samples", type=int, default=200)
    parser.add_argument("--append", type=int, default=1000)
    args = parser.parse_args()
    if args.generate:
        # generated in a child process so its memory does not count against the load
        subprocess.run(
            [
                sys.executable,
                str(HERE / "generate_events.py"),
                "--out",
                str(args.log),
                "--events",
                str(args.generate),
                "--datasets",
                str(args.datasets),
                "--jobs",
                str(args.jobs),
            ],
            check=True,
        )
    figures = run(args.log, samples=args.samples, append=args.append)
    figures["python_loop_10M_cpu_s"] = calibrate()
    width = max(len(k) for k in figures)
    for key, value in figures.items():
        print(f"{key:<{width}}  {value}")


if __name__ == "__main__":
    main()
