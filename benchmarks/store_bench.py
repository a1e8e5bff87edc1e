"""Benchmark the lineage store (airflow_lineage_plus/store/), in one run on one machine (ratios from one run).

Prints, for SQLite (and PostgreSQL with ``--postgres``: Debian's server, started from a temporary directory
on a free port by ``tests/support/postgres_env.py``):

* ``import``: ``lineage-plus import LOG --store URL`` in a new process: wall and CPU time, peak memory,
  events per second, the store's size against the log's;
* ``new_process_upstream_quick``: a new process answering ``upstream`` at depth 10 as the CLI does
  (``open_source(store=URL, quick=True)``: only the events of the nodes the walk touches are folded);
* ``new_cli_process_upstream``: the same question from ``lineage-plus upstream`` in a new process, the
  store found through ``[lineage_plus] store_url`` (read without importing Airflow, :mod:`..conf`), and
  (``..._with_airflow``) the same with Airflow imported first, as every CLI process did before;
* ``new_process_upstream``: a new process opening the store as a source (``open_source(store=URL)``: it
  folds every raw event, as the event log source folds the log, and as the Lineage view does once) and
  answering the same question (``--no-full-fold`` skips it);
* ``event_log_upstream``: the same question from the raw log folded whole (``open_source(events=LOG)``),
  the fold the store source reproduces, as the yardstick of the same run.

    python benchmarks/store_bench.py --log /tmp/events.jsonl --generate 1000000 [--postgres]

Targets (issue 25): import of 10M events <= 2 min; a new process answering upstream at depth 10 < 1 s;
store size <= the log's. Figures are written to docs/graph.md ("The lineage store").
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
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
if sys.argv[2:] == ["with-airflow"]:
    import airflow.configuration  # as every new CLI process did before conf.py read options without it
from airflow_lineage_plus.cli import run
namespace, name = sys.argv[1].split("|")
question = ["upstream", "--namespace", namespace, "--name", name, "--depth", "10", "--format", "json"]
code, out, err = run(question)
assert code == 0, err
nodes = len(json.loads(out)["nodes"])
print(json.dumps({"in_process_s": round(time.perf_counter() - began, 3), "nodes": nodes,
                  "airflow_imported": "airflow.configuration" in sys.modules}))
"""

STORE_ANSWER = """
import json, sys, time
began = time.perf_counter()
from airflow_lineage_plus.graph import LineageQueries, dataset_id, open_source
source = open_source(store=sys.argv[1], quick=sys.argv[3] == "quick")
opened = time.perf_counter()
namespace, name = sys.argv[2].split("|")
answer = LineageQueries(source).upstream(dataset_id(namespace, name), 10)
print(json.dumps({"in_process_s": round(time.perf_counter() - began, 3), "open_s": round(opened - began, 3),
                  "events": getattr(source, "events", None), "nodes": len(answer["nodes"])}))
"""

LOG_ANSWER = """
import json, sys, time
began = time.perf_counter()
from airflow_lineage_plus.graph import LineageQueries, dataset_id, open_source
source = open_source(events=sys.argv[1])
namespace, name = sys.argv[2].split("|")
answer = LineageQueries(source).upstream(dataset_id(namespace, name), 10)
print(json.dumps({"in_process_s": round(time.perf_counter() - began, 3), "events": source.events,
                  "nodes": len(answer["nodes"])}))
"""


def _events(log: Path) -> int:
    with open(log, "rb") as handle:
        return sum(chunk.count(b"\n") for chunk in iter(lambda: handle.read(1 << 24), b""))


def bench_engine(log: Path, url: str, home: Path, size_of: Any, target: str, full: bool) -> dict[str, Any]:
    """Import the log into the store at ``url``, then ask a new process."""
    env = {**os.environ, "AIRFLOW_HOME": str(home)}
    command = [sys.executable, "-m", "airflow_lineage_plus.cli", "import", str(log), "--store", url]
    imported = timed(command, env=env)
    lines = _events(log)
    figures: dict[str, Any] = {
        "import": {
            **{k: v for k, v in imported.items() if k != "out"},
            "said": imported["out"].strip(),
            "events_per_s": round(lines / imported["wall_s"]),
        }
    }
    store_bytes = size_of()
    figures["store_bytes"] = store_bytes
    figures["store_to_log_size"] = round(store_bytes / log.stat().st_size, 2)
    quick = timed(python(STORE_ANSWER, url, target, "quick"), env=env)
    figures["new_process_upstream_quick"] = {**quick, "out": json.loads(quick["out"])}
    # the command itself: the store from [lineage_plus] store_url, as a user's CLI finds it
    configured = {
        **env,
        "AIRFLOW__LINEAGE_PLUS__STORE_URL": url,
        "AIRFLOW__LINEAGE_PLUS__EVENT_LOG_PATH": str(home / "no-spool.jsonl"),
    }
    command = timed(python(CLI_ANSWER, target), env=configured)
    figures["new_cli_process_upstream"] = {**command, "out": json.loads(command["out"])}
    command = timed(python(CLI_ANSWER, target, "with-airflow"), env=configured)
    figures["new_cli_process_upstream_with_airflow"] = {**command, "out": json.loads(command["out"])}
    if full:
        answer = timed(python(STORE_ANSWER, url, target, "full"), env=env)
        figures["new_process_upstream"] = {**answer, "out": json.loads(answer["out"])}
    return figures


def _sqlite(log: Path, root: Path, target: str, full: bool) -> dict[str, Any]:
    path = root / "lineage.db"

    def size() -> int:
        return sum(p.stat().st_size for p in root.glob("lineage.db*"))

    return bench_engine(log, f"sqlite:///{path}", root, size, target, full)


def _postgres(log: Path, root: Path, target: str, full: bool) -> dict[str, Any]:
    from postgres_env import PostgresServer

    server = PostgresServer(root)
    server.start()
    try:

        def size() -> int:
            rows = server.query(
                "SELECT pg_total_relation_size('lineage_plus_event')"
                " + pg_total_relation_size('lineage_plus_edge')"
            )
            return int(rows[0][0])

        return bench_engine(log, server.url(), root, size, target, full)
    finally:
        server.stop()


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--log", type=Path, required=True, help="the event log to import (JSONL)")
    parser.add_argument("--generate", type=int, help="first write a log of this many events there")
    parser.add_argument("--postgres", action="store_true", help="also measure PostgreSQL")
    parser.add_argument("--no-sqlite", action="store_true", help="skip SQLite")
    parser.add_argument("--target", default="|".join(TARGET), help="the dataset asked about: NAMESPACE|NAME")
    parser.add_argument("--no-log-answer", action="store_true", help="skip the event log's yardstick")
    parser.add_argument("--no-full-fold", action="store_true", help="skip the new process folding the store")
    args = parser.parse_args()
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
            figures["sqlite"] = _sqlite(args.log, root / "sqlite", args.target, not args.no_full_fold)
            print(json.dumps({"sqlite": figures["sqlite"]}), flush=True)
        if args.postgres:
            (root / "postgres").mkdir()
            figures["postgresql"] = _postgres(args.log, root / "postgres", args.target, not args.no_full_fold)
            print(json.dumps({"postgresql": figures["postgresql"]}), flush=True)
        if not args.no_log_answer:
            answer = timed(python(LOG_ANSWER, str(args.log), args.target))
            figures["event_log_upstream"] = {**answer, "out": json.loads(answer["out"])}
    finally:
        shutil.rmtree(root, ignore_errors=True)
    figures["load_1min_end"] = os.getloadavg()[0]
    print(json.dumps(figures, indent=2))


if __name__ == "__main__":
    main()
