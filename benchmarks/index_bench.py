"""Benchmark the event log's index against DuckDB, in one run on one machine (ratios from the same run).

Prints, each measured in a new process unless said otherwise:

* ``duckdb_edges``: DuckDB reading the log's edges (explicit columns: the job, the inputs' and outputs'
  names; distinct edges), the yardstick of the first answer;
* ``first_answer_raw``: ``lineage-plus upstream --depth 10`` on the raw log (no index: the quick scan and a
  focused fold), and its ratio to DuckDB's time;
* ``index_build``: building the index (``python -m airflow_lineage_plus.graph.index``), with the peak
  memory of all its processes together (sampled);
* ``first_answer_indexed``: the same question in a new process with the index;
* ``warm``: p50/p95 of upstream and downstream at depth 10 for random datasets in one process with the
  index open, first touch and again (warm);
* ``duckdb_index``: DuckDB as the index instead (the edges and each job's latest run in a database file):
  its build time and a new process's answer (a recursive query), for the engine comparison.

    python benchmarks/index_bench.py --log /tmp/events.jsonl --generate 1000000
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


def first_answers(log: Path, target: tuple[str, str]) -> dict[str, Any]:
    figures: dict[str, Any] = {}
    duck = timed(python(DUCKDB_EDGES, EDGES_QUERY.format(log=log)))
    figures["duckdb_edges"] = {**duck, "out": int(duck["out"])}
    index = Path(str(log) + ".lpindex")
    index.unlink(missing_ok=True)
    raw = timed(python(FIRST_ANSWER, str(log), "|".join(target)))
    figures["first_answer_raw"] = {**raw, "out": json.loads(raw["out"])}
    figures["first_answer_ratio_to_duckdb_wall"] = round(raw["wall_s"] / duck["wall_s"], 2)
    figures["first_answer_ratio_to_duckdb_cpu"] = round(raw["cpu_s"] / duck["cpu_s"], 2)
    return figures


def build_and_ask(log: Path, target: tuple[str, str], workers: int | None) -> dict[str, Any]:
    figures: dict[str, Any] = {}
    command = [PYTHON, "-m", "airflow_lineage_plus.graph.index", str(log)]
    if workers is not None:
        command += ["--workers", str(workers)]
    build = timed(command)
    figures["index_build"] = {k: v for k, v in build.items() if k != "out"}
    figures["index_mib"] = round(Path(str(log) + ".lpindex").stat().st_size / 2**20)
    answer = timed(python(FIRST_ANSWER, str(log), "|".join(target)))
    figures["first_answer_indexed"] = {**answer, "out": json.loads(answer["out"])}
    return figures


WARM = """
import json, random, statistics, sys, time
from airflow_lineage_plus.graph import LineageQueries
from airflow_lineage_plus.graph.index import IndexedEventLog
source = IndexedEventLog(sys.argv[1])
queries = LineageQueries(source)
rng = random.Random(1)
targets = rng.sample(sorted(source.graph.node_ids("dataset:")), int(sys.argv[2]))
figures = {}
for rounds in ("first_touch", "warm"):
    for name in ("upstream", "downstream"):
        times = []
        for target in targets:
            began = time.perf_counter()
            getattr(queries, name)(target, 10)
            times.append((time.perf_counter() - began) * 1000)
        times.sort()
        figures[f"{rounds}_{name}_d10"] = {"p50_ms": round(statistics.median(times), 2),
                                           "p95_ms": round(times[int(0.95 * (len(times) - 1))], 2),
                                           "max_ms": round(times[-1], 2)}
import resource
figures["rss_mib"] = round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024)
print(json.dumps(figures))
"""


DUCKDB_BUILD = """
import sys, duckdb
log, db = sys.argv[1], sys.argv[2]
con = duckdb.connect(db)
con.execute("SET enable_progress_bar = false")
con.execute(f'''CREATE TEMP TABLE ev AS SELECT job, run.runId AS run_id, eventType, eventTime, inputs, outputs
    FROM read_json('{log}', format='newline_delimited', maximum_object_size=67108864,
        columns={{job: 'STRUCT(namespace VARCHAR, name VARCHAR)', run: 'STRUCT(runId VARCHAR)',
                 eventType: 'VARCHAR', eventTime: 'TIMESTAMPTZ',
                 inputs: 'STRUCT(namespace VARCHAR, name VARCHAR)[]',
                 outputs: 'STRUCT(namespace VARCHAR, name VARCHAR)[]'}})''')
con.execute('''CREATE TABLE edges AS
    SELECT DISTINCT 'dataset:' || i.namespace || ':' || i.name AS origin,
        'job:' || job.namespace || ':' || job.name AS destination
        FROM (SELECT job, unnest(inputs) AS i FROM ev)
    UNION SELECT DISTINCT 'job:' || job.namespace || ':' || job.name,
        'dataset:' || o.namespace || ':' || o.name
        FROM (SELECT job, unnest(outputs) AS o FROM ev)''')
con.execute('''CREATE TABLE latest AS SELECT job, arg_max(state, coalesce(started, ended)) AS state FROM (
    SELECT 'job:' || job.namespace || ':' || job.name AS job, run_id, arg_max(eventType, eventTime) AS state,
        min(CASE WHEN eventType = 'START' THEN eventTime END) AS started, max(eventTime) AS ended
    FROM ev GROUP BY ALL) GROUP BY job''')
con.close()
"""

DUCKDB_ASK = """
import json, random, sys, time
began = time.perf_counter()
import duckdb
con = duckdb.connect(sys.argv[1], read_only=True)
UP = '''WITH RECURSIVE up(node, depth) AS (SELECT ?, 0 UNION
    SELECT e.origin, up.depth + 1 FROM edges e JOIN up ON e.destination = up.node WHERE up.depth < 10)
    SELECT node, min(depth), any_value(l.state) FROM up LEFT JOIN latest l ON l.job = up.node
    GROUP BY node'''
rows = con.execute(UP, [sys.argv[2]]).fetchall()
first = round(time.perf_counter() - began, 3)
written = "SELECT DISTINCT destination FROM edges WHERE destination LIKE 'dataset:%'"
targets = [r[0] for r in con.execute(written).fetchall()]
times = []
for target in random.Random(1).sample(sorted(targets), int(sys.argv[3])):
    start = time.perf_counter()
    con.execute(UP, [target]).fetchall()
    times.append((time.perf_counter() - start) * 1000)
times.sort()
warm = {"p50_ms": round(times[len(times) // 2], 2), "p95_ms": round(times[int(0.95 * (len(times) - 1))], 2)}
print(json.dumps({"in_process_s": first, "rows": len(rows), "warm_upstream_d10": warm}))
"""


def duckdb_index(log: Path, target_id: str, samples: int) -> dict[str, Any]:
    db = Path(str(log) + ".duckdb")
    db.unlink(missing_ok=True)
    build = timed(python(DUCKDB_BUILD, str(log), str(db)))
    ask = timed(python(DUCKDB_ASK, str(db), target_id, str(samples)))
    figures = {
        "duckdb_index_build": {k: v for k, v in build.items() if k != "out"},
        "duckdb_index_mib": round(db.stat().st_size / 2**20),
        "duckdb_first_answer_indexed": {**ask, "out": json.loads(ask["out"])},
    }
    db.unlink()
    return figures


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--log", type=Path, required=True)
    parser.add_argument(
        "--generate", type=int, default=0, help="first (re)generate a log with this many events"
    )
    parser.add_argument("--samples", type=int, default=200)
    parser.add_argument("--workers", type=int, default=None, help="processes building the index")
    parser.add_argument("--skip-duckdb-index", action="store_true")
    args = parser.parse_args()
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
    figures.update(build_and_ask(args.log, target, args.workers))
    warm = timed(python(WARM, str(args.log), str(args.samples)))
    figures["warm"] = json.loads(warm["out"])
    if not args.skip_duckdb_index:
        figures.update(duckdb_index(args.log, f"dataset:{target[0]}:{target[1]}", args.samples))
    figures["load_1min_after"] = os.getloadavg()[0]
    print(json.dumps(figures, indent=2))


if __name__ == "__main__":
    main()
