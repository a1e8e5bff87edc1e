"""What a reader of some DAGs asks of every job when the Lineage view opens, each in a new process: the
time slider's range (``/api/time-range``) and the first page's datasets and changes (``/api/attention``),
their wall time and the process's peak resident memory, against a reader of every DAG.

A reader of some DAGs gets the span of the runs of the jobs they may see, and the changes of the datasets
those jobs write, so every job is decided: a job whose runs name a DAG the reader may not read is hidden
by one count per lot of jobs, the rest have their records read. Generated logs name no DAG unless given
the provider's facets (``with_airflow_facets.py``); without them every job is read (the slowest case).
The first page is asked as of the store's last event time::

    python benchmarks/with_airflow_facets.py /tmp/ev1m.jsonl /tmp/ev1m_af.jsonl
    lineage-plus import /tmp/ev1m_af.jsonl --store sqlite:////tmp/ev1m_af.db
    python benchmarks/scoped_reader.py --store sqlite:////tmp/ev1m_af.db --dag dag_00001
"""

from __future__ import annotations

import argparse
import json
import resource
import subprocess
import sys
import time


def _measure(store_url: str, dag: str | None, question: str) -> dict[str, object]:
    from airflow_lineage_plus.graph.attention import attention
    from airflow_lineage_plus.graph.changes import Thresholds
    from airflow_lineage_plus.graph.queries import LineageQueries
    from airflow_lineage_plus.graph.store_source import StoreSource
    from airflow_lineage_plus.store import LineageStore

    store = LineageStore(store_url, create=False)
    try:
        queries = LineageQueries(StoreSource(store))
        if dag is not None:
            queries = queries.scoped(lambda dag_id: dag_id == dag)
        last = store.time_range()[1] or 0
        began = time.perf_counter()
        if question == "time-range":
            answer: dict[str, object] = queries.time_range()
        else:
            found = attention(queries, now=last, baseline_runs=7, thresholds=Thresholds())
            answer = {"failedJobs": len(found["failedJobs"]), "changes": len(found["changes"])}
        seconds = time.perf_counter() - began
    finally:
        store.close()
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    reader = dag or "every DAG"
    return {
        "question": question,
        "reader": reader,
        "seconds": round(seconds, 3),
        "peak_mib": round(peak),
        **answer,
    }


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument(
        "--store", required=True, help="the store's URL (sqlite:////path, postgresql+psycopg://...)"
    )
    parser.add_argument("--dag", default="dag_00001", help="the one DAG the scoped reader may read")
    parser.add_argument("--child", help=argparse.SUPPRESS)
    parser.add_argument("--every", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child is not None:
        print(json.dumps(_measure(args.store, None if args.every else args.dag, args.child)))
        return
    for question in ("time-range", "attention"):
        for every in (True, False):  # each in a new process: its peak memory is its own
            command = [
                sys.executable,
                __file__,
                "--store",
                args.store,
                "--dag",
                args.dag,
                "--child",
                question,
            ]
            found = subprocess.run(
                [*command, *(["--every"] if every else [])], check=True, capture_output=True, text=True
            )
            print(found.stdout.strip())


if __name__ == "__main__":
    main()
