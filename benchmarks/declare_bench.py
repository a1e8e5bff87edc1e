"""Benchmarks of the declaration layer (issue: declare lineage on tasks). Prints figures; asserts nothing.

1. Added cost per event for a task with 3 inputs and 3 outputs of 200 columns each, every output column
   with column lineage from one input column: building the provider's OperatorLineage from the
   declaration (with runtime figures for COMPLETE) and serialising the datasets to JSON, as the client
   does on emit. Goal: under 2 ms per event.
2. Throughput of the profiling helper on 1M rows x 10 columns, as a list of dicts and as a pyarrow table.

Run: python benchmarks/declare_bench.py [--rows 1000000]
"""

from __future__ import annotations

import argparse
import json
import os
import tempfile
import time

os.environ.setdefault("AIRFLOW_HOME", tempfile.mkdtemp(prefix="alp-bench-"))


def bench_event_cost(repeat: int) -> None:
    from openlineage.client.serde import Serde

    from airflow_lineage_plus import ColumnFrom, Field, Input, LineageSpec, Output, datasets
    from airflow_lineage_plus.author.profiling import profile
    from airflow_lineage_plus.author.runtime import DatasetFacts, TaskFacts

    columns = [f"col_{i:03d}" for i in range(200)]
    ins = [datasets.snowflake("acme-xy123", "raw", "sales", f"source_{i}") for i in range(3)]
    outs = [datasets.snowflake("acme-xy123", "analytics", "marts", f"target_{i}") for i in range(3)]
    schema = [Field(c, "NUMBER(12,2)", f"column {c}") for c in columns]
    spec = LineageSpec(
        inputs=[Input(ref, schema=schema) for ref in ins],
        outputs=[
            Output(
                ref,
                schema=schema,
                column_lineage={
                    c: [ColumnFrom(ins[j % 3], c, subtype="TRANSFORMATION")] for j, c in enumerate(columns)
                },
            )
            for ref in outs
        ],
        owners=["team:analytics"],
        sql="INSERT INTO analytics.marts.target SELECT * FROM raw.sales.source",
    )
    spec.validate("bench")
    facts = TaskFacts()
    sample = profile([{c: 1.0 for c in columns} for _ in range(100)])
    for ref in outs:
        facts.by_dataset[ref] = DatasetFacts(profile=sample, bytes=1024)

    def one(final: bool) -> tuple[float, int]:
        start = time.perf_counter()
        lineage = spec.to_operator_lineage(facts if final else None, final=final)
        payload = json.dumps(
            {
                "inputs": [Serde.to_dict(d) for d in lineage.inputs],
                "outputs": [Serde.to_dict(d) for d in lineage.outputs],
                "job": {k: Serde.to_dict(f) for k, f in lineage.job_facets.items()},
            }
        )
        return time.perf_counter() - start, len(payload)

    for label, final in (("START (declaration only)", False), ("COMPLETE (with runtime figures)", True)):
        for _ in range(5):
            one(final)
        build: list[float] = []
        total: list[float] = []
        size = 0
        for _ in range(repeat):
            start = time.perf_counter()
            spec.to_operator_lineage(facts if final else None, final=final)
            build.append((time.perf_counter() - start) * 1000)
            elapsed, size = one(final)
            total.append(elapsed * 1000)
        print(
            f"{label}: building the declared lineage (this package): median {_p(build, 50):.2f} ms, "
            f"p95 {_p(build, 95):.2f} ms (goal < 2 ms); with the client's own JSON serialisation of the "
            f"{size / 1024:.0f} KiB it adds: median {_p(total, 50):.1f} ms; n={repeat}"
        )


def _p(values: list[float], percentile: int) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(len(ordered) * percentile / 100))]


def bench_profiling(rows: int) -> None:
    import pyarrow as pa

    from airflow_lineage_plus.author.profiling import profile

    names = [f"c{i}" for i in range(10)]
    records = [{n: (None if (r + i) % 17 == 0 else r * i) for i, n in enumerate(names)} for r in range(rows)]
    start = time.perf_counter()
    result = profile(records)
    elapsed = time.perf_counter() - start
    print(
        f"profiling {rows:,} rows x 10 columns, list of dicts: {elapsed:.2f} s "
        f"({rows / elapsed / 1e6:.2f} M rows/s, row_count={result.row_count})"
    )
    table = pa.Table.from_pylist(records)
    del records
    start = time.perf_counter()
    result = profile(table)
    elapsed = time.perf_counter() - start
    print(
        f"profiling {rows:,} rows x 10 columns, pyarrow table: {elapsed * 1000:.1f} ms "
        f"({rows / elapsed / 1e6:.1f} M rows/s, row_count={result.row_count})"
    )
    start = time.perf_counter()
    profile(table, distinct=True, min_max=True)
    print(f"    with distinct counts and min/max: {(time.perf_counter() - start) * 1000:.1f} ms")


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--rows", type=int, default=1_000_000)
    parser.add_argument("--repeat", type=int, default=200)
    args = parser.parse_args()
    bench_event_cost(args.repeat)
    bench_profiling(args.rows)


if __name__ == "__main__":
    main()
