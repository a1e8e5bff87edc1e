"""Benchmark the first answer from a raw event log given to ``--events`` against DuckDB, in one run on one
machine (ratios from the same run).

Prints, each measured in a new process (the log read once before, so that both find it in the page
cache):

* ``duckdb_edges``: DuckDB reading the log's edges (explicit columns: the job, the inputs' and outputs'
  names; distinct edges), the yardstick of the first answer;
* ``first_answer_raw``: ``lineage-plus --events LOG upstream --depth 10`` (the quick scan and a focused
  fold, :mod:`airflow_lineage_plus.graph.scan`), and its ratios to DuckDB's wall and CPU time.

    python benchmarks/first_answer_bench.py --log /tmp/events.jsonl --generate 1000000
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

import psutil

HERE = Path(__file__).resolve().parent
PYTHON = sys.executable
EDGES_QUERY = """
WITH ev AS (SELECT job, inputs, outputs FROM read_json('{log}', format='newline_delimited',
    columns={{job: 'STRUCT(namespace VARCHAR, name VARCHAR)',
             inputs: 'STRUCT(namespace VARCHAR, name VARCHAR)[]',
             outputs: 'STRUCT(namespace VARCHAR, name VARCHAR)[]'}}, maximum_object_size=67108864))
SELECT DISTINCT 'dataset:' || i.namespace || ':' || i.name AS origin,
    'job:' || job.namespace || ':' || job.name AS destination
FROM (SELECT job, unnest(inputs) AS i FROM ev)
UNION
SELECT DISTINCT 'job:' || job.namespace || ':' || job.name, 'dataset:' || o.namespace || ':' || o.name
FROM (SELECT job, unnest(outputs) AS o FROM ev)
"""


class Peak:
    """The peak of the summed resident memory of a process and all its descendants (sampled)."""

    def __init__(self, pid: int, every: float = 0.1) -> None:
        self.root, self.every, self.peak = psutil.Process(pid), every, 0
        self.done = threading.Event()
        self.thread = threading.Thread(target=self._sample, daemon=True)
        self.thread.start()

    def _sample(self) -> None:
        while not self.done.is_set():
            try:
                family = [self.root, *self.root.children(recursive=True)]
                self.peak = max(self.peak, sum(p.memory_info().rss for p in family if p.is_running()))
            except psutil.Error:
                pass
            self.done.wait(self.every)

    def stop(self) -> int:
        self.done.set()
        self.thread.join()
        return self.peak


def timed(command: list[str], env: dict[str, str] | None = None) -> dict[str, Any]:
    """Run a command; its wall time, CPU time (with its children) and peak memory (all its processes)."""
    before = os.times()
    began = time.perf_counter()
    process = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)
    peak = Peak(process.pid)
    out, err = process.communicate()
    wall = time.perf_counter() - began
    after = os.times()
    if process.returncode != 0:
        raise RuntimeError(f"{command} failed: {err[-2000:]}")
    cpu = (after.children_user - before.children_user) + (after.children_system - before.children_system)
    return {
        "wall_s": round(wall, 2),
        "cpu_s": round(cpu, 2),
        "peak_mib": round(peak.stop() / 2**20),
        "out": out,
    }


def python(code: str, *args: str) -> list[str]:
    return [PYTHON, "-c", code, *args]


FIRST_ANSWER = """
import json, sys, time
began = time.perf_counter()
from airflow_lineage_plus.cli import run
namespace, name = sys.argv[2].split("|")
question = ["upstream", "--namespace", namespace, "--name", name, "--depth", "10", "--format", "json"]
code, out, err = run(["--events", sys.argv[1], *sys.argv[3:], *question])
assert code == 0, err
nodes = len(json.loads(out)["nodes"])
print(json.dumps({"in_process_s": round(time.perf_counter() - began, 3), "nodes": nodes}))
"""

DUCKDB_EDGES = """
import sys, duckdb
con = duckdb.connect()
con.execute("SET enable_progress_bar = false")
print(len(con.execute(sys.argv[1]).fetchall()))
"""


def read_through(log: Path) -> float:
    """Read the whole log once, so both measurements find it in the page cache (whichever ran first
    would otherwise also pay for the disk: DuckDB 10.9 s cold against 3.2 s warm on 2026-12-07)."""
    began = time.perf_counter()
    with open(log, "rb") as handle:
        while handle.read(1 << 24):
            pass
    return round(time.perf_counter() - began, 2)


def first_answers(log: Path, target: tuple[str, str]) -> dict[str, Any]:
    figures: dict[str, Any] = {"page_cache_read_s": read_through(log)}
    duck = timed(python(DUCKDB_EDGES, EDGES_QUERY.format(log=log)))
    figures["duckdb_edges"] = {**duck, "out": int(duck["out"])}
    raw = timed(python(FIRST_ANSWER, str(log), "|".join(target)))
    figures["first_answer_raw"] = {**raw, "out": json.loads(raw["out"])}
    figures["first_answer_ratio_to_duckdb_wall"] = round(raw["wall_s"] / duck["wall_s"], 2)
    figures["first_answer_ratio_to_duckdb_cpu"] = round(raw["cpu_s"] / duck["cpu_s"], 2)
    return figures


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--log", type=Path, required=True)
    parser.add_argument(
        "--generate", type=int, default=0, help="first (re)generate a log with this many events"
    )
    args = parser.parse_args()
    os.environ.pop("PYTHONDONTWRITEBYTECODE", None)  # a user's installation has its bytecode cached
    if args.generate:
        subprocess.run(
            [
                PYTHON,
                str(HERE / "generate_events.py"),
                "--out",
                str(args.log),
                "--events",
                str(args.generate),
            ],
            check=True,
        )
    target = ("postgres://warehouse:5432", "analytics.dag_00500.t19_out0")
    began = time.strftime("%Y-%m-%dT%H:%M:%S")
    figures: dict[str, Any] = {
        "log_bytes": args.log.stat().st_size,
        "started": began,
        "load_1min": os.getloadavg()[0],
    }
    figures.update(first_answers(args.log, target))
    figures["load_1min_after"] = os.getloadavg()[0]
    print(json.dumps(figures, indent=2))


if __name__ == "__main__":
    main()
