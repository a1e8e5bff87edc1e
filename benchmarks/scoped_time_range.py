"""The time slider's range for a reader of some DAGs (``/api/time-range``, asked when the Lineage view
opens), in a new process: its wall time and the process's peak resident memory, against a reader of every
DAG (one query of the event table).

A reader of some DAGs gets the span of the runs of the jobs they may see, so every job is decided: a job
whose runs name a DAG the reader may not read is hidden by one count per lot of jobs, the rest have their
records read. Generated logs name no DAG unless given the provider's facets
(``with_airflow_facets.py``); without them every job is read (the slowest case)::

    python benchmarks/with_airflow_facets.py /tmp/ev1m.jsonl /tmp/ev1m_af.jsonl
    lineage-plus import /tmp/ev1m_af.jsonl --store sqlite:////tmp/ev1m_af.db
    python benchmarks/scoped_time_range.py --store sqlite:////tmp/ev1m_af.db --dag dag_00001
"""

from __future__ import annotations

import argparse
import json
import resource
import subprocess
import sys
import time


def _measure(store_url: str, dag: str | None) -> dict[str, object]:
    from airflow_lineage_plus.graph.queries import LineageQueries
    from airflow_lineage_plus.graph.store_source import StoreSource
    from airflow_lineage_plus.store import LineageStore

    store = LineageStore(store_url, create=False)
    try:
        queries = LineageQueries(StoreSource(store))
        if dag is not None:
            queries = queries.scoped(lambda dag_id: dag_id == dag)
        began = time.perf_counter()
        answer = queries.time_range()
        seconds = time.perf_counter() - began
    finally:
        store.close()
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    return {"reader": dag or "every DAG", "seconds": round(seconds, 3), "peak_mib": round(peak), **answer}


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument(
        "--store", required=True, help="the store's URL (sqlite:////path, postgresql+psycopg://...)"
    )
    parser.add_argument("--dag", default="dag_00001", help="the one DAG the scoped reader may read")
    parser.add_argument("--child", choices=("every", "scoped"), help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child is not None:
        print(json.dumps(_measure(args.store, args.dag if args.child == "scoped" else None)))
        return
    for child in ("every", "scoped"):  # each in a new process: its peak memory is its own
        found = subprocess.run(
            [sys.executable, __file__, "--store", args.store, "--dag", args.dag, "--child", child],
            check=True,
            capture_output=True,
            text=True,
        )
        print(found.stdout.strip())


if __name__ == "__main__":
    main()
