"""Benchmark ``what-changed`` on the lineage store (docs/what-changed.md has the figures).

A log of ``--generate`` events (benchmarks/generate_events.py) with about 30 runs of each DAG (the
generator's DAGs take turns, so ``--events`` / (42 events a DAG run x 30) DAGs), imported once into a
SQLite store beside it (``lineage-plus import``); then:

* ``new_process``: ``lineage-plus what-changed --depth 10`` in a new process reading the store
  (``[lineage_plus] store_url``), median and max of ``--repeat`` targets;
* ``new_process (graph only)``: the same question in a new process that imports only the Airflow-free
  graph (``LineageQueries`` over ``open_source(store=URL)``, as a service embedding it would), with the
  time of the answer alone inside it: what the CLI adds on top is its imports (Airflow's configuration);
* ``warm``: p50/p95 of ``LineageQueries.what_changed`` at depth 10 in one process with the store open,
  first touch and asked again, over ``--targets`` datasets;
* per answer: nodes walked, changes found.

    python benchmarks/what_changed_bench.py --log /tmp/wc-events.jsonl --generate 1000000

Without ``--generate`` it reuses the log at ``--log`` (and its store, imported first when missing). With
``--postgres`` it then imports the log into PostgreSQL too (Debian's server, started from a temporary
directory by ``tests/support/postgres_env.py``) and prints the import time and the warm figures there.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(HERE.parent / "tests" / "support"))

from generate_events import TASKS_PER_DAG, generate  # noqa: E402

RUNS_PER_DAG = 30
EVENTS_PER_DAG_RUN = 2 + 2 * TASKS_PER_DAG


def _store_url(log: Path) -> str:
    return f"sqlite:///{log.with_name(log.name + '.db')}"


def _targets(url: str, count: int, seed: int) -> list[tuple[str, str]]:
    """Datasets some job writes, with an upstream at least a few hops deep when there are such."""
    from airflow_lineage_plus.graph import LineageQueries, open_source
    from airflow_lineage_plus.node_ids import split_node_id
    from airflow_lineage_plus.store.facts import DATASET_KIND
    from airflow_lineage_plus.store.folded import FoldedState

    source = open_source(store=url)
    try:
        queries = LineageQueries(source)
        ids = sorted(FoldedState(source.store).node_ids(DATASET_KIND))  # type: ignore[attr-defined]
        rng = random.Random(seed)
        rng.shuffle(ids)
        deep: list[tuple[str, str]] = []
        for node in ids[: count * 20]:
            nodes = queries.upstream(node, 10).get("nodes", [])
            if len(nodes) >= 6:
                _, namespace, name = split_node_id(node)
                deep.append((namespace, name))
            if len(deep) >= count:
                break
        return deep
    finally:
        source.close()


def _new_process(url: str, home: Path, namespace: str, name: str) -> float:
    command = [str(Path(sys.executable).parent / "lineage-plus"), "what-changed"]
    command += ["--namespace", namespace, "--name", name, "--depth", "10", "--format", "json"]
    env = {**os.environ, "AIRFLOW_HOME": str(home), "AIRFLOW__LINEAGE_PLUS__STORE_URL": url}
    env["AIRFLOW__LINEAGE_PLUS__GRAPH_SOURCE"] = "store"
    began = time.perf_counter()
    done = subprocess.run(command, capture_output=True, text=True, timeout=600, env=env)
    took = time.perf_counter() - began
    if done.returncode != 0:
        raise SystemExit(f"what-changed failed: {done.stderr[-2000:]}")
    return took


_ONE = """
import json, sys, time
began = time.perf_counter()
from airflow_lineage_plus.graph import LineageQueries, open_source
from airflow_lineage_plus.node_ids import dataset_id
source = open_source(store=sys.argv[1])
opened = time.perf_counter()
answer = LineageQueries(source).what_changed(dataset_id(sys.argv[2], sys.argv[3]), 7, 10)
done = time.perf_counter()
print(json.dumps([opened - began, done - opened, len(answer["changes"]), "notCompared" in answer]))
"""


def _new_graph_process(url: str, namespace: str, name: str) -> tuple[float, float, float]:
    """(whole process, import and open, the answer alone) in seconds."""
    began = time.perf_counter()
    command = [sys.executable, "-c", _ONE, url, namespace, name]
    done = subprocess.run(command, capture_output=True, text=True, timeout=600, check=True)
    took = time.perf_counter() - began
    opening, answering, _, _ = json.loads(done.stdout.strip().splitlines()[-1])
    return took, opening, answering


def _warm(url: str, targets: list[tuple[str, str]]) -> None:
    from airflow_lineage_plus.graph import LineageQueries, open_source
    from airflow_lineage_plus.node_ids import dataset_id

    source = open_source(store=url)
    queries = LineageQueries(source)
    for label in ("first touch", "again (warm)"):
        times, walked, found, cut = [], [], [], 0
        for namespace, name in targets:
            node = dataset_id(namespace, name)
            began = time.perf_counter()
            answer = queries.what_changed(node, 7, 10)
            times.append(time.perf_counter() - began)
            walked.append(len(queries.upstream(node, 10)["nodes"]) + 1)
            found.append(len(answer["changes"]))
            cut += "notCompared" in answer
        times.sort()
        p95 = times[min(len(times) - 1, int(len(times) * 0.95))]
        print(
            f"warm {label}: p50 {statistics.median(times) * 1000:.1f} ms, p95 {p95 * 1000:.1f} ms, "
            f"max {times[-1] * 1000:.1f} ms over {len(times)} targets; nodes walked median "
            f"{statistics.median(walked):.0f} (max {max(walked)}), "
            f"changes median {statistics.median(found):.0f}; cut by what_changed_max_nodes: {cut}"
        )
    source.close()


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--log", type=Path, required=True)
    parser.add_argument("--generate", type=int, default=0, help="write a log of this many events first")
    parser.add_argument("--targets", type=int, default=30)
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--seed", type=int, default=11)
    parser.add_argument("--postgres", action="store_true", help="also import into PostgreSQL and ask it warm")
    args = parser.parse_args()
    os.environ.pop("PYTHONDONTWRITEBYTECODE", None)  # a user's installation has its bytecode cached
    if args.generate:
        args.log.parent.mkdir(parents=True, exist_ok=True)
        dags = max(1, args.generate // (EVENTS_PER_DAG_RUN * RUNS_PER_DAG))
        began = time.perf_counter()
        plan = generate(args.log, args.generate, datasets=dags * 60, jobs=dags * TASKS_PER_DAG)
        print(
            f"generated {plan.events} events, {dags} DAGs x ~{RUNS_PER_DAG} runs "
            f"in {time.perf_counter() - began:.1f} s"
        )
    url, home = _store_url(args.log), Path(tempfile.mkdtemp(prefix="wc-bench-home-"))
    if args.generate or not args.log.with_name(args.log.name + ".db").exists():
        args.log.with_name(args.log.name + ".db").unlink(missing_ok=True)
        began = time.perf_counter()
        command = [sys.executable, "-m", "airflow_lineage_plus.cli", "import", str(args.log), "--store", url]
        subprocess.run(command, check=True, env={**os.environ, "AIRFLOW_HOME": str(home)})
        print(f"imported into {url} in {time.perf_counter() - began:.1f} s")
    targets = _targets(url, args.targets, args.seed)
    if not targets:
        raise SystemExit("no dataset with a deep enough upstream")
    first = _new_process(url, home, *targets[0])  # writes the bytecode, as a pip install would have
    print(f"first new process after the install: {first:.2f} s (not counted)")
    times = [_new_process(url, home, ns, name) for ns, name in targets[: args.repeat]]
    print(
        f"new process (lineage-plus what-changed --depth 10): median {statistics.median(times):.2f} s, "
        f"max {max(times):.2f} s over {len(times)} targets"
    )
    lean = [_new_graph_process(url, ns, name) for ns, name in targets[: args.repeat]]
    whole = sorted(t for t, _, _ in lean)
    answering = sorted(a for _, _, a in lean)
    opening = statistics.median(o for _, o, _ in lean)
    print(
        f"new process (graph only): median {statistics.median(whole):.2f} s, max {whole[-1]:.2f} s; "
        f"of which import and open median {opening:.2f} s, the answer median "
        f"{statistics.median(answering):.2f} s (max {answering[-1]:.2f} s) over {len(lean)} targets"
    )
    _warm(url, targets)
    if args.postgres:
        _postgres(args.log, home, targets)
    shutil.rmtree(home, ignore_errors=True)


def _postgres(log: Path, home: Path, targets: list[tuple[str, str]]) -> None:
    from postgres_env import PostgresServer

    root = Path(tempfile.mkdtemp(prefix="wc-bench-pg-"))
    server = PostgresServer(root)
    server.start()
    try:
        url = server.url()
        began = time.perf_counter()
        command = [sys.executable, "-m", "airflow_lineage_plus.cli", "import", str(log), "--store", url]
        subprocess.run(
            command, check=True, capture_output=True, env={**os.environ, "AIRFLOW_HOME": str(home)}
        )
        print(f"PostgreSQL: imported in {time.perf_counter() - began:.1f} s")
        _warm(url, targets)
    finally:
        server.stop()
        shutil.rmtree(root, ignore_errors=True)


if __name__ == "__main__":
    main()
