"""Event-log transport vs the client's ``file`` transport: latency, throughput, and concurrent safety.

    .venv/bin/python benchmarks/transport_bench.py [--events 200] [--workers 4] [--per-worker 250]
        [--forked 300] [--wal-trim-bytes N]

Part 1 (one process): per-event latency and throughput writing small (~3 KB), wide (~250 KB) and large
(~1 MB) events: ours as installed (limits and redaction, into the SQLite lineage store beside the log),
ours without limits into the store, ours without limits into the log only (``store_url = "none"``), and
the client's ``file`` transport (``Serde.to_json``, buffered text ``write``). Part 2 (``--workers``
processes at once): mixed sizes up to 1 MB written by each transport into one store or one log; counts
events that do not parse, and events missing or duplicated. Part 3 (``--forked`` events, the provider's
way): each small event from a process forked for it, which builds the transport, emits, and leaves with
``os._exit`` without closing anything, and no other process holds the store open: the median per event
(in the forked process) of the first and the last 100 events, and the size of the store's WAL at the
end. ``--wal-trim-bytes`` sets :data:`~airflow_lineage_plus.store.sqlite_connections.WAL_TRIM_BYTES` for
the run (a huge value: the store as it was before the writes trimmed the WAL).
"""

from __future__ import annotations

import argparse
import multiprocessing
import os
import statistics
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests" / "support"))

import orjson
from openlineage.client.serde import Serde
from openlineage.client.transport import get_default_factory
from reliability_events import run_event
from reliability_writers import write_events

import airflow_lineage_plus.deliver.event_log_transport  # noqa: F401  (registers lineage_plus_event_log)
from airflow_lineage_plus import conf
from airflow_lineage_plus.deliver.store_writer import close_stores
from airflow_lineage_plus.store import sqlite_connections
from airflow_lineage_plus.store.database import LineageStore, sqlite_url


def configs(path: Path, with_budget: bool = False) -> dict[str, dict[str, Any]]:
    found: dict[str, dict[str, Any]] = {}
    if with_budget:
        found["ours (store, limits)"] = {"type": "lineage_plus_event_log", "log_file_path": str(path)}
    return found | {
        "ours (store)": {"type": "lineage_plus_event_log", "log_file_path": str(path), "budget": False},
        "ours (log only)": {
            "type": "lineage_plus_event_log",
            "log_file_path": str(path),
            "budget": False,
            "store_url": "none",
        },
        "client file (append)": {"type": "file", "log_file_path": str(path), "append": True},
    }


def _into_store(config: dict[str, Any]) -> bool:
    return config["type"] == "lineage_plus_event_log" and config.get("store_url") != "none"


def _written(config: dict[str, Any]) -> list[bytes]:
    """Every event the transport wrote: the store's payloads, or the log's lines."""
    path = Path(config["log_file_path"])
    if _into_store(config):
        return LineageStore(sqlite_url(path.with_suffix(".db")), create=False).all_payloads()
    return [line for line in path.read_bytes().split(b"\n") if line]


def latency(name: str, config: dict[str, Any], events: list[Any]) -> None:
    transport = get_default_factory().create(dict(config))
    timings = []
    started = time.perf_counter()
    for event in events:
        t = time.perf_counter()
        transport.emit(event)
        timings.append(time.perf_counter() - t)
    total = time.perf_counter() - started
    size = sum(len(Serde.to_json(event)) for event in events) / len(events)
    assert len(_written(config)) == len(events), name
    p95 = sorted(timings)[int(len(timings) * 0.95)]
    print(
        f"  {name:24s} {size / 1e3:9.1f} KB/event  median {statistics.median(timings) * 1e3:8.2f} ms"
        f"  p95 {p95 * 1e3:8.2f} ms  {len(events) / total:8.0f} events/s"
        f"  {size * len(events) / total / 1e6:7.1f} MB/s"
    )


def concurrent(name: str, config: dict[str, Any], workers: int, per_worker: int) -> None:
    path = Path(config["log_file_path"])
    path.touch()  # the steady state: the log exists (creating it reads [lineage_plus], importing Airflow)
    started = time.perf_counter()
    with multiprocessing.get_context("spawn").Pool(workers) as pool:
        pool.starmap(write_events, [(config, w, per_worker, 1_000_000) for w in range(workers)])
    elapsed = time.perf_counter() - started
    bad, names = 0, Counter[str]()
    written = _written(config)
    for line in written:
        try:
            names[orjson.loads(line)["job"]["name"]] += 1
        except orjson.JSONDecodeError:
            bad += 1
    expected = {f"writer_{w}.event_{i}" for w in range(workers) for i in range(per_worker)}
    missing = len(expected - set(names))
    duplicated = sum(1 for n in names.values() if n > 1)
    megabytes = sum(len(line) for line in written) / 1e6
    print(
        f"  {name:24s} {workers} x {per_worker} events, {megabytes:7.1f} MB in {elapsed:5.1f} s:"
        f" corrupt lines {bad}, missing events {missing}, duplicated {duplicated}"
    )


def forked(name: str, config: dict[str, Any], events: list[Any]) -> None:
    """Each event from a process forked for it (the provider's way), nothing else holding the store."""
    transport = get_default_factory().create(dict(config))
    transport.emit(events[0])  # the store and the log exist, as after a task's first event
    close_stores()
    timings = []
    for event in events[1:]:
        read, write = os.pipe()
        pid = os.fork()
        if pid == 0:  # the provider's child: build the client's transport, emit, leave without closing
            started = time.perf_counter()
            get_default_factory().create(dict(config)).emit(event)
            os.write(write, str(time.perf_counter() - started).encode())
            os._exit(0)
        os.close(write)
        timings.append(float(os.read(read, 64)))
        os.close(read)
        os.waitpid(pid, 0)
    assert len(_written(config)) == len(events), name
    wal = Path(config["log_file_path"]).with_suffix(".db-wal")
    first, last = timings[:100], timings[-100:]
    print(
        f"  {name:24s} median per event: first 100 {statistics.median(first) * 1e3:6.2f} ms, last 100"
        f" {statistics.median(last) * 1e3:6.2f} ms; WAL at the end"
        f" {wal.stat().st_size / 1e6 if wal.exists() else 0:6.2f} MB"
    )


def main() -> None:
    conf.sql_max_length()  # configure Airflow (and its logging) before timing
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--events", type=int, default=200, help="events per latency run (large: / 10)")
    parser.add_argument("--workers", type=int, default=4)
    parser.add_argument("--per-worker", type=int, default=250)
    parser.add_argument("--forked", type=int, default=300, help="events of part 3 (0: none)")
    parser.add_argument("--wal-trim-bytes", type=int, default=sqlite_connections.WAL_TRIM_BYTES)
    args = parser.parse_args()
    sqlite_connections.WAL_TRIM_BYTES = args.wal_trim_bytes
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        for label, events in (
            ("small events (3 columns)", [run_event(f"bench.small_{i}") for i in range(args.events)]),
            (
                "wide events (300 columns, ~250 KB)",
                [run_event(f"bench.wide_{i}", columns=300) for i in range(max(args.events // 10, 5))],
            ),
            (
                "large events (~1 MB of text)",
                [run_event(f"bench.large_{i}", padding=990_000) for i in range(max(args.events // 10, 5))],
            ),
        ):
            print(label)
            for n, (name, config) in enumerate(configs(work / "x", with_budget=True).items()):
                config["log_file_path"] = str(work / f"{label[:5]}-{n}.jsonl")
                latency(name, config, events)
        print(f"concurrent writers (mixed sizes up to 1 MB, {args.workers} processes)")
        for n, (name, config) in enumerate(configs(work / "x").items()):
            config["log_file_path"] = str(work / f"concurrent-{n}.jsonl")
            concurrent(name, config, args.workers, args.per_worker)
        if args.forked:
            print(
                f"one process forked per event ({args.forked} small events, WAL trimmed past"
                f" {args.wal_trim_bytes} bytes)"
            )
            events = [run_event(f"bench.forked_{i}") for i in range(args.forked + 1)]
            for n, (name, config) in enumerate(configs(work / "x").items()):
                config["log_file_path"] = str(work / f"forked-{n}.jsonl")
                forked(name, config, events)


if __name__ == "__main__":
    main()
