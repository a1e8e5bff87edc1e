"""Benchmarks of the declaration layer (issue: declare lineage on tasks). Prints figures; asserts nothing.

1. What a user pays per event, everything included: building the provider's OperatorLineage from the
   declaration (with runtime figures, as on COMPLETE), the event, and the recommended transport's
   emit (fixed limits, redaction, values policy, size budget, the locked write), for a small event, a
   wide one (3 inputs and 3 outputs of 200 columns, column lineage on every output column, figures)
   and a 1 MB one; p50/p95, and the same declarations through the client's own ``file`` transport in
   the same run (alternating blocks of 10 events, the first of each block not counted: it pays for the
   other transport's garbage and caches), with the ratio. Goal: wide event under 2 ms p50.
2. Throughput of the profiling helper on 1M rows x 10 columns, as a list of dicts and as a pyarrow table.

``--baseline DIR`` measures the per-event cost again, in the same run, against another copy of the package
(``DIR`` holds its ``airflow_lineage_plus``, e.g. ``git archive main airflow_lineage_plus | tar -x -C DIR``)
in a child process, alternating with this copy, and prints both.

Run: python benchmarks/declare_bench.py [--rows 1000000] [--baseline DIR] [--no-profiling]
"""

from __future__ import annotations

import argparse
import atexit
import os
import shutil
import tempfile
import time
import uuid
from datetime import datetime, timezone
from typing import Any

if "AIRFLOW_HOME" not in os.environ:
    os.environ["AIRFLOW_HOME"] = tempfile.mkdtemp(prefix="alp-bench-")
    atexit.register(shutil.rmtree, os.environ["AIRFLOW_HOME"], True)


def _spec(inputs: int, outputs: int, columns: int, description: str | None = None) -> Any:
    from airflow_lineage_plus import ColumnFrom, Field, Input, LineageSpec, Output, datasets
    from airflow_lineage_plus.author import validation

    names = [f"col_{i:03d}" for i in range(columns)]
    ins = [datasets.snowflake("acme-xy123", "raw", "sales", f"source_{i}") for i in range(inputs)]
    outs = [datasets.snowflake("acme-xy123", "analytics", "marts", f"target_{i}") for i in range(outputs)]
    schema = [Field(c, "NUMBER(12,2)", f"column {c}") for c in names]
    spec = LineageSpec(
        inputs=[Input(ref, schema=schema, description=description) for ref in ins],
        outputs=[
            Output(
                ref,
                schema=schema,
                column_lineage={
                    c: [ColumnFrom(ins[j % inputs], c, subtype="TRANSFORMATION")] for j, c in enumerate(names)
                },
            )
            for ref in outs
        ],
        owners=["team:analytics"],
        sql="INSERT INTO analytics.marts.target SELECT * FROM raw.sales.source",
    )
    validation.validate(spec, "bench")
    return spec, outs, names


def _facts(outs: list[Any], names: list[str]) -> Any:
    from airflow_lineage_plus.author.profiling import profile
    from airflow_lineage_plus.author.runtime import DatasetFacts, TaskFacts

    facts = TaskFacts()
    sample = profile([{c: 1.0 for c in names} for _ in range(100)])
    for ref in outs:
        facts.by_dataset[ref] = DatasetFacts(profile=sample, bytes=1024)
    return facts


def _declared_event(spec: Any, facts: Any) -> Any:
    """What the provider builds from our OperatorLineage on COMPLETE (its own facets left out: they cost
    the same whichever transport writes them)."""
    from openlineage.client.event_v2 import Job, Run, RunEvent, RunState

    from airflow_lineage_plus.author import build

    lineage = build.to_operator_lineage(spec, facts, final=True)
    return RunEvent(
        eventType=RunState.COMPLETE,
        eventTime=datetime.now(timezone.utc).isoformat(),
        run=Run(runId=str(uuid.uuid4()), facets=lineage.run_facets),
        job=Job(namespace="bench", name="bench_dag.load", facets=lineage.job_facets),
        producer="https://github.com/airflow-lineage-plus/airflow-lineage-plus/benchmarks",
        inputs=lineage.inputs,
        outputs=lineage.outputs,
    )


def bench_event_cost(repeat: int) -> None:
    """What a user pays per event: declaration, event, budget, redaction and the write, through our
    EventLogTransport and, in the same run (alternating), through the client's own ``file`` transport."""
    from openlineage.client.transport import get_default_factory

    import airflow_lineage_plus.transport  # noqa: F401  (registers the short type)

    cases = [
        ("small (1 in / 1 out x 5 columns)", _spec(1, 1, 5), repeat),
        ("wide (3 in / 3 out x 200 columns, column lineage, figures)", _spec(3, 3, 200), repeat),
        ("wide (1 in / 1 out x 300 columns, column lineage, figures)", _spec(1, 1, 300), repeat),
        # just under the default event_size_budget (1 000 000 bytes), so nothing is trimmed
        ("1 MB (1 in / 1 out x 5 columns, 0.9 MB description)", _spec(1, 1, 5, "lorem ipsum " * 75_000), 30),
    ]
    with tempfile.TemporaryDirectory() as tmp:
        for label, (spec, outs, names), count in cases:
            facts = _facts(outs, names)
            transports = {
                "ours": get_default_factory().create(
                    {
                        "type": "lineage_plus_event_log",
                        "log_file_path": f"{tmp}/{count}-{label[:4]}-ours.jsonl",
                    }
                ),
                "client file": get_default_factory().create(
                    {
                        "type": "file",
                        "log_file_path": f"{tmp}/{count}-{label[:4]}-client.jsonl",
                        "append": True,
                    }
                ),
            }
            timings: dict[str, list[float]] = {name: [] for name in transports}
            cpu: dict[str, list[float]] = {name: [] for name in transports}
            cold: dict[str, list[float]] = {name: [] for name in transports}
            block = 10
            rounds = -(-count // (block - 1))  # enough blocks for ``count`` events counted
            for _ in range(rounds):
                for name, transport in transports.items():
                    for i in range(block):
                        start, start_cpu = time.perf_counter(), time.thread_time()
                        transport.emit(_declared_event(spec, facts))
                        # the first of a block pays for the other transport's garbage and caches
                        (timings[name] if i > 0 else cold[name]).append((time.perf_counter() - start) * 1000)
                        if i > 0:
                            cpu[name].append((time.thread_time() - start_cpu) * 1000)
            size = os.path.getsize(f"{tmp}/{count}-{label[:4]}-ours.jsonl") / (rounds * block)
            ours, theirs = timings["ours"], timings["client file"]
            print(
                f"{label}, {size / 1024:.0f} KiB/event, n={len(ours)}: declaration + event + budget"
                f" + redaction + write, ours: p50 {_p(ours, 50):.2f} ms, p95 {_p(ours, 95):.2f} ms;"
                f" the same through the client's file transport: p50 {_p(theirs, 50):.2f} ms,"
                f" p95 {_p(theirs, 95):.2f} ms;"
                f" ratio ours/client at p50 {_p(ours, 50) / _p(theirs, 50):.2f}"
            )
            print(
                f"    CPU time of this thread (what the other processes on a shared machine do not add):"
                f" ours p50 {_p(cpu['ours'], 50):.2f} ms, client p50 {_p(cpu['client file'], 50):.2f} ms"
            )
            print(
                f"    the first event of each block (right after the other transport's block): ours p50"
                f" {_p(cold['ours'], 50):.2f} ms, client p50 {_p(cold['client file'], 50):.2f} ms"
            )
            _declaration_only(spec, facts, count)


def _declaration_only(spec: Any, facts: Any, count: int) -> None:
    build: list[float] = []
    cpu: list[float] = []
    for _ in range(count):
        start, start_cpu = time.perf_counter(), time.thread_time()
        _declared_event(spec, facts)
        build.append((time.perf_counter() - start) * 1000)
        cpu.append((time.thread_time() - start_cpu) * 1000)
    print(
        f"    of which declaration + event alone: p50 {_p(build, 50):.2f} ms, p95 {_p(build, 95):.2f} ms"
        f" (CPU p50 {_p(cpu, 50):.2f} ms)"
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


def _compare(directory: str, repeat: int) -> None:
    """The per-event cost of this copy and of the one in ``directory``, each in its own child process,
    this one, the other, then this one again (the machine's load changes over a run)."""
    import subprocess
    import sys

    command = [sys.executable, __file__, "--no-profiling", "--repeat", str(repeat)]
    for name, path in (("this copy", None), (f"baseline {directory}", directory), ("this copy, again", None)):
        env = {**os.environ, **({"PYTHONPATH": path} if path else {})}
        print(f"== {name}", flush=True)
        subprocess.run(command, env=env, check=True)


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--rows", type=int, default=1_000_000)
    parser.add_argument("--repeat", type=int, default=200)
    parser.add_argument("--no-profiling", action="store_true", help="only the per-event cost")
    parser.add_argument("--baseline", help="a directory holding another airflow_lineage_plus to compare")
    args = parser.parse_args()
    if args.baseline:
        _compare(args.baseline, args.repeat)
        return
    from airflow_lineage_plus import conf

    conf.sql_max_length()  # configure Airflow (and its logging) before timing
    bench_event_cost(args.repeat)
    if not args.no_profiling:
        bench_profiling(args.rows)


if __name__ == "__main__":
    main()
