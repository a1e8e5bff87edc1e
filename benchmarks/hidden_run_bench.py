"""How long ``/api/run``'s question takes for a run the reader may not see, one that does not exist, and
one they may see: a hidden run must cost what a missing one does (its details are never read).

    python benchmarks/hidden_run_bench.py --repeat 2000

The world is ``tests/support/graph_builders.permissions_world`` (the reader may read DAG ``alpha``
only); prints the median microseconds of each, and their ratios.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests" / "support"))

import contextlib

from graph_builders import permissions_world, run_id, write_log

from airflow_lineage_plus.exceptions import NodeNotFound
from airflow_lineage_plus.graph import LineageQueries, open_source


def median_micros(queries: LineageQueries, run: str, repeat: int) -> float:
    took = []
    for _ in range(repeat):
        started = time.perf_counter_ns()
        with contextlib.suppress(NodeNotFound):
            queries.run_details(run)
        took.append(time.perf_counter_ns() - started)
    return statistics.median(took) / 1000


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=2000)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as folder:
        source = open_source(events=str(write_log(Path(folder) / "events.jsonl", permissions_world())))
        queries = LineageQueries(source).scoped(lambda dag_id: dag_id == "alpha")
        hidden = median_micros(queries, run_id("beta-score"), args.repeat)
        missing = median_micros(queries, "0190aaaa-0000-7000-8000-000000000000", args.repeat)
        shown = median_micros(queries, run_id("alpha-publish"), args.repeat)
    print(f"hidden run  {hidden:8.1f} us")
    print(f"missing run {missing:8.1f} us")
    print(f"shown run   {shown:8.1f} us (details read)")
    print(f"hidden/missing {hidden / missing:.2f}, shown/hidden {shown / hidden:.1f}")


if __name__ == "__main__":
    main()
