"""Latency of the Lineage view's graph API, through the real Airflow API server app, on a large event log.

Builds Airflow's own ``create_app()`` (plugin mounted from the installed entry point, SimpleAuthManager,
a real JWT on every request) over an event log from ``benchmarks/generate_events.py`` (read as it is,
``graph_source = events``) or, with ``--store URL``, over the lineage store the log was imported into
(``lineage-plus import LOG --store URL``: ``graph_source = store``, as installed), then times
``GET /lineage-plus/api/lineage?depth=5`` (what the page asks for; datasets also get their failed
upstream jobs) around random datasets and jobs, plus search and node details. Prints JSON figures.

    python benchmarks/ui_graph_api.py --log /tmp/events.jsonl --generate 1000000
"""

from __future__ import annotations

import argparse
import atexit
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
from typing import Any

HERE = Path(__file__).resolve().parent


def _percentiles(samples: list[float]) -> dict[str, float]:
    ordered = sorted(samples)
    p95 = ordered[min(len(ordered) - 1, round(0.95 * (len(ordered) - 1)))]
    return {
        "p50_ms": round(statistics.median(ordered), 2),
        "p95_ms": round(p95, 2),
        "max_ms": round(ordered[-1], 2),
    }


def run(log: Path, samples: int, depth: int, seed: int, store: str | None = None) -> dict[str, Any]:
    home = Path(tempfile.mkdtemp(prefix="alp-ui-bench-"))
    atexit.register(shutil.rmtree, home, True)  # after the app (and its SQLite files) is gone
    os.environ.update(
        {
            "AIRFLOW_HOME": str(home),
            "AIRFLOW__CORE__LOAD_EXAMPLES": "False",
            "AIRFLOW__DATABASE__SQL_ALCHEMY_CONN": f"sqlite:///{home / 'airflow.db'}",
            "AIRFLOW__LINEAGE_PLUS__EVENT_LOG_PATH": str(log if store is None else home / "no-spool.jsonl"),
            "AIRFLOW__LINEAGE_PLUS__GRAPH_SOURCE": "events" if store is None else "store",
            "AIRFLOW__LINEAGE_PLUS__STORE_URL": store or "",
            "AIRFLOW__CORE__SIMPLE_AUTH_MANAGER_USERS": "bench:viewer",
            "AIRFLOW__CORE__SIMPLE_AUTH_MANAGER_PASSWORDS_FILE": str(home / "passwords.json"),
            "AIRFLOW__API_AUTH__JWT_SECRET": "ui-bench-" + "x" * 64,
            "AIRFLOW__LOGGING__LOGGING_LEVEL": os.environ.get("AIRFLOW__LOGGING__LOGGING_LEVEL", "WARNING"),
        }
    )
    airflow = str(Path(sys.executable).parent / "airflow")
    subprocess.run([airflow, "db", "migrate"], check=True, capture_output=True)  # token checks read the DB
    from airflow.api_fastapi.app import create_app, get_auth_manager
    from airflow.api_fastapi.auth.managers.simple.user import SimpleAuthManagerUser
    from fastapi.testclient import TestClient

    from airflow_lineage_plus.plugin import LineagePlusPlugin

    client = TestClient(create_app(), base_url="http://localhost")
    token = get_auth_manager().generate_jwt(SimpleAuthManagerUser(username="bench", role="viewer"))
    headers = {"Authorization": f"Bearer {token}"}

    # The first request starts opening the log in the background; "Still loading" (503) until it is open.
    began = time.perf_counter()
    while True:
        first = client.get("/lineage-plus/api/search", params={"q": "orders", "limit": 5}, headers=headers)
        if first.status_code != 503 or "Still loading" not in first.text:
            break
    assert first.status_code == 200, first.text
    cold_s = time.perf_counter() - began

    reader = LineagePlusPlugin.fastapi_apps[0]["app"].build().state.lineage_reader
    if store is None:
        datasets, jobs = reader.run(lambda q: (sorted(q.source.graph.datasets), sorted(q.source.graph.jobs)))
    else:
        from airflow_lineage_plus.store import LineageStore
        from airflow_lineage_plus.store.folded import FoldedState

        state = FoldedState(LineageStore(store, create=False))
        datasets, jobs = sorted(state.node_ids(1)), sorted(state.node_ids(0))
    rng = random.Random(seed)
    targets = rng.sample(datasets, samples // 2) + rng.sample(jobs, samples - samples // 2)

    def timed(path: str, params: dict[str, Any]) -> tuple[float, Any]:
        start = time.perf_counter()
        response = client.get(path, params=params, headers=headers)
        elapsed = (time.perf_counter() - start) * 1000
        assert response.status_code == 200, (path, params, response.status_code, response.text[:300])
        return elapsed, response.json()

    timed("/lineage-plus/api/lineage", {"node": targets[0], "depth": depth})  # warm
    lineage_ms, sizes, truncated = [], [], 0
    for target in targets:
        elapsed, body = timed("/lineage-plus/api/lineage", {"node": target, "depth": depth})
        lineage_ms.append(elapsed)
        sizes.append(len(body["nodes"]))
        truncated += bool(body.get("truncated"))
    node_ms = [timed("/lineage-plus/api/node", {"node": t})[0] for t in targets[:50]]
    search_ms = [
        timed("/lineage-plus/api/search", {"q": w})[0] for w in ("orders", "raw/source_00", "dag_01", "fct")
    ]
    return {
        "log": str(log),
        "source": "events" if store is None else store,
        "bytes": log.stat().st_size,
        "datasets": len(datasets),
        "jobs": len(jobs),
        "cold_open_s": round(cold_s, 2),
        f"lineage_depth{depth}": {
            **_percentiles(lineage_ms),
            "samples": len(lineage_ms),
            "median_nodes": statistics.median(sizes),
            "max_nodes": max(sizes),
            "truncated_answers": truncated,
        },
        "node_details": _percentiles(node_ms),
        "search": _percentiles(search_ms),
    }


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--log", type=Path, required=True)
    parser.add_argument(
        "--generate", type=int, default=0, help="first (re)generate a log with this many events"
    )
    parser.add_argument("--samples", type=int, default=200)
    parser.add_argument("--depth", type=int, default=5)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--store", help="a lineage store the log was imported into (default: read the log)")
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
    print(json.dumps(run(args.log, args.samples, args.depth, args.seed, args.store), indent=2))


if __name__ == "__main__":
    main()
