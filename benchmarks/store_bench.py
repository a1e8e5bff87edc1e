"""Benchmark the lineage store (airflow_lineage_plus/store/), in one run on one machine (ratios from one run).

Prints, for SQLite (and PostgreSQL with ``--postgres``: Debian's server, started from a temporary directory
on a free port by ``tests/support/postgres_env.py``):

* ``import``: ``lineage-plus import LOG --store URL`` in a new process: wall and CPU time, peak memory,
  events per second (wall and CPU), and the store's size against the log's;
* ``new_cli_process_upstream``: ``lineage-plus upstream --depth 10`` in a new process, the store found
  through ``[lineage_plus] store_url`` (read without importing Airflow): it reads the folded state of the
  nodes the walk touches;
* ``warm``: one process asking ``--samples`` questions of random datasets, one after the other, on the
  same source (what the Lineage view's long-lived reader does): ``upstream`` at depth 10, and the view's
  ``lineage`` at depth 5 (both directions, at most 500 nodes), p50/p95/max in milliseconds; and that
  ``lineage`` as of the middle of the store's time range (the time slider), for the first 30 of them.

Both open the store as the view and the CLI do (``sources.open_store_source``), so ``[lineage_plus]``
options given in the environment apply: ``AIRFLOW__LINEAGE_PLUS__STORE_PREPARED_STATEMENTS=True`` measures
PostgreSQL with psycopg preparing the repeated statements (off by default: docs/deployment.md).

    python benchmarks/store_bench.py --log /tmp/events.jsonl --generate 1000000 [--postgres]

Targets (issue 25): import of 10M events <= 2 min; a new process answering upstream at depth 10 < 1 s;
a warm depth-10 walk p95 <= 20 ms; store size <= the log's. Figures are written to docs/graph.md ("The
lineage store").
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(HERE.parent / "tests" / "support"))

from first_answer_bench import python, timed  # noqa: E402 (beside this script)

TARGET = ("postgres://warehouse:5432", "analytics.dag_00500.t19_out0")

CLI_ANSWER = """
import json, sys, time
began = time.perf_counter()
from airflow_lineage_plus.cli import run
namespace, name = sys.argv[1].split("|")
question = ["upstream", "--namespace", namespace, "--name", name, "--depth", "10", "--format", "json"]
code, out, err = run(question)
assert code == 0, err
nodes = len(json.loads(out)["nodes"])
print(json.dumps({"in_process_s": round(time.perf_counter() - began, 3), "nodes": nodes,
                  "airflow_imported": "airflow" in sys.modules}))
"""

WARM = """
import json, random, statistics, sys, time
from airflow_lineage_plus.graph import LineageQueries
from airflow_lineage_plus.sources import open_store_source
from airflow_lineage_plus.store.folded import FoldedState
url, samples = sys.argv[1], int(sys.argv[2])
AS_OF_SAMPLES = 30  # each folds the events of the nodes it touches up to then: slower, fewer of them
source = open_store_source(url)  # as the view and the CLI open it: [lineage_plus] from the environment
datasets = sorted(FoldedState(source.store).node_ids(1))
targets = random.Random(7).sample(datasets, min(samples, len(datasets)))
queries = LineageQueries(source)

def figures(times):
    ordered = sorted(times)
    return {"p50_ms": round(statistics.median(ordered), 2),
            "p95_ms": round(ordered[min(len(ordered) - 1, round(0.95 * (len(ordered) - 1)))], 2),
            "max_ms": round(ordered[-1], 2)}

first, last = source.time_range()
middle = (first + last) // 2  # the time slider halfway
found = {}
for name, ask, asked in (("upstream_d10", lambda t: queries.upstream(t, 10), targets),
                         ("lineage_d5_limit500", lambda t: queries.lineage(t, 5, limit=500), targets),
                         ("lineage_d5_as_of_middle", lambda t: queries.lineage(t, 5, limit=500, as_of=middle),
                          targets[:AS_OF_SAMPLES])):
    ask(targets[0])  # the statements compiled once, as in a reader that has answered before
    times, nodes = [], []
    for target in asked:
        began = time.perf_counter()
        answer = ask(target)
        times.append((time.perf_counter() - began) * 1000)
        nodes.append(len(answer["nodes"]))
    found[name] = {**figures(times), "questions": len(times), "nodes_max": max(nodes),
                   "nodes_mean": round(statistics.mean(nodes), 1)}
print(json.dumps(found))
"""


def _events(log: Path) -> int:
    with open(log, "rb") as handle:
        return sum(chunk.count(b"\n") for chunk in iter(lambda: handle.read(1 << 24), b""))


def bench_questions(url: str, home: Path, target: str, samples: int) -> dict[str, Any]:
    """Ask the store at ``url`` from a new CLI process, then from one warm process."""
    env = {**os.environ, "AIRFLOW_HOME": str(home)}
    configured = {
        **env,
        "AIRFLOW__LINEAGE_PLUS__STORE_URL": url,
        "AIRFLOW__LINEAGE_PLUS__EVENT_LOG_PATH": str(home / "no-spool.jsonl"),
    }
    # the first process after an install writes the package's bytecode (a pip install writes it at
    # install time); then five more, each new
    runs = [timed(python(CLI_ANSWER, target), env=configured) for _ in range(6)]
    walls = sorted(run["wall_s"] for run in runs[1:])
    warm = timed(python(WARM, url, str(samples)), env=env)
    return {
        "new_cli_process_upstream": {
            "first_wall_s": runs[0]["wall_s"],
            "median_wall_s": statistics.median(walls),
            "max_wall_s": walls[-1],
            "median_cpu_s": statistics.median(run["cpu_s"] for run in runs[1:]),
            "peak_mib": max(run["peak_mib"] for run in runs[1:]),
            "out": json.loads(runs[-1]["out"]),
        },
        "warm": {**json.loads(warm["out"]), "process_peak_mib": warm["peak_mib"]},
    }


def bench_engine(log: Path, url: str, home: Path, size_of: Any, target: str, samples: int) -> dict[str, Any]:
    """Import the log into the store at ``url``, then ask a new process, then one warm process."""
    env = {**os.environ, "AIRFLOW_HOME": str(home)}
    command = [sys.executable, "-m", "airflow_lineage_plus.cli", "import", str(log), "--store", url]
    imported = timed(command, env=env)
    lines = _events(log)
    figures: dict[str, Any] = {
        "import": {
            **{k: v for k, v in imported.items() if k != "out"},
            "said": imported["out"].strip(),
            "events_per_wall_s": round(lines / imported["wall_s"]),
            "events_per_cpu_s": round(lines / imported["cpu_s"]),
        }
    }
    print(json.dumps({url.split(":")[0]: figures}), flush=True)  # kept whatever follows
    store_bytes = size_of()
    figures["store_bytes"] = store_bytes
    figures["store_to_log_size"] = round(store_bytes / log.stat().st_size, 2)
    return {**figures, **bench_questions(url, home, target, samples)}


def _sqlite(log: Path, root: Path, target: str, samples: int, path: Path | None) -> dict[str, Any]:
    path = path or root / "lineage.db"
    if path.exists():
        raise SystemExit(f"{path} exists: the import is measured into a new store")

    def size() -> int:
        return sum(p.stat().st_size for p in path.parent.glob(path.name + "*"))

    return bench_engine(log, f"sqlite:///{path}", root, size, target, samples)


def _postgres(log: Path, root: Path, target: str, samples: int) -> dict[str, Any]:
    from postgres_env import PostgresServer

    with PostgresServer(root) as server:

        def size() -> int:
            rows = server.query(
                "SELECT sum(pg_total_relation_size(oid)) FROM pg_class "
                "WHERE relkind = 'r' AND relname LIKE 'lineage_plus_%%'"
            )
            return int(rows[0][0])

        return bench_engine(log, server.url(), root, size, target, samples)


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--log", type=Path, required=True, help="the event log to import (JSONL)")
    parser.add_argument("--generate", type=int, help="first write a log of this many events there")
    parser.add_argument("--postgres", action="store_true", help="also measure PostgreSQL")
    parser.add_argument("--no-sqlite", action="store_true", help="skip SQLite")
    parser.add_argument("--target", default="|".join(TARGET), help="the dataset asked about: NAMESPACE|NAME")
    parser.add_argument("--samples", type=int, default=200, help="questions of the warm process")
    parser.add_argument(
        "--sqlite-store",
        type=Path,
        help="make the SQLite store here and keep it (for ui_graph_api.py --store, what_changed_bench.py)",
    )
    parser.add_argument(
        "--store", help="only ask this store (already imported): a new CLI process, then the warm one"
    )
    args = parser.parse_args()
    os.environ.pop("PYTHONDONTWRITEBYTECODE", None)  # a user's installation has its bytecode cached
    if args.store:
        home = Path(tempfile.mkdtemp(prefix="alp-store-bench-"))
        try:
            asked = bench_questions(args.store, home, args.target, args.samples)
        finally:
            shutil.rmtree(home, ignore_errors=True)
        print(json.dumps({"store": args.store, "load_1min": os.getloadavg()[0], **asked}, indent=2))
        return
    if args.generate:
        subprocess.run(
            [
                sys.executable,
                str(HERE / "generate_events.py"),
                "--out",
                str(args.log),
                "--events",
                str(args.generate),
            ],
            check=True,
        )
    figures: dict[str, Any] = {
        "log_bytes": args.log.stat().st_size,
        "started": time.strftime("%Y-%m-%dT%H:%M:%S"),
        "load_1min": os.getloadavg()[0],
    }
    root = Path(tempfile.mkdtemp(prefix="alp-store-bench-"))
    os.chmod(root, 0o755)  # PostgreSQL's server runs as the postgres user when this runs as root
    try:
        if not args.no_sqlite:
            (root / "sqlite").mkdir()
            figures["sqlite"] = _sqlite(
                args.log, root / "sqlite", args.target, args.samples, args.sqlite_store
            )
            print(json.dumps({"sqlite": figures["sqlite"]}), flush=True)
        if args.postgres:
            (root / "postgres").mkdir()
            figures["postgresql"] = _postgres(args.log, root / "postgres", args.target, args.samples)
            print(json.dumps({"postgresql": figures["postgresql"]}), flush=True)
    finally:
        shutil.rmtree(root, ignore_errors=True)
    figures["load_1min_end"] = os.getloadavg()[0]
    print(json.dumps(figures, indent=2))


if __name__ == "__main__":
    main()
