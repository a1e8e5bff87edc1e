"""A Marquez that never answers, behind a real ``airflow api-server``: how the Lineage view and Airflow fare.

Starts ``airflow api-server`` (SimpleAuthManager, one worker, a fresh SQLite home) with the Lineage view
reading a "Marquez" that accepts connections and never answers (``tests/support/fake_marquez.py``:
``SilentMarquez``), then sends ``--requests`` lineage requests at once and, while they are pending, keeps
timing Airflow's own routes (``/api/v2/monitor/health``, ``/api/v2/dags``, the UI's index page). Prints
JSON: how long each lineage request took and what it answered, and Airflow's latencies before and during.

    python benchmarks/ui_stall.py --requests 60 --deadline 10
"""

from __future__ import annotations

import argparse
import atexit
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import httpx

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "tests" / "support"))

from fake_marquez import SilentMarquez  # noqa: E402
from servers import free_port, stop, wait_until_serving  # noqa: E402

AIRFLOW_ROUTES = ("/api/v2/monitor/health", "/api/v2/dags", "/")


def _summary(samples: list[float]) -> dict[str, float]:
    ordered = sorted(samples)
    return {
        "n": len(ordered),
        "p50_ms": round(statistics.median(ordered) * 1000, 1),
        "max_ms": round(ordered[-1] * 1000, 1),
    }


def _timed(client: httpx.Client, path: str, headers: dict[str, str]) -> tuple[float, int, str, str]:
    """(seconds, status, Retry-After, body); status 0 when the client gave up (``--client-timeout``)."""
    began = time.monotonic()
    try:
        response = client.get(path, headers=headers)
    except httpx.TimeoutException:
        return time.monotonic() - began, 0, "", ""
    return (
        time.monotonic() - began,
        response.status_code,
        response.headers.get("retry-after", ""),
        response.text,
    )


def _start_server(home: Path, marquez_url: str, deadline: float, port: int) -> subprocess.Popen[bytes]:
    (home / "passwords.json").write_text(json.dumps({"bench": "bench-pw"}))
    env = {
        **os.environ,
        "AIRFLOW_HOME": str(home),
        "AIRFLOW__CORE__LOAD_EXAMPLES": "False",
        "AIRFLOW__CORE__DAGS_FOLDER": str(home / "dags"),
        "AIRFLOW__DATABASE__SQL_ALCHEMY_CONN": f"sqlite:///{home / 'airflow.db'}",
        "AIRFLOW__CORE__SIMPLE_AUTH_MANAGER_USERS": "bench:viewer",
        "AIRFLOW__CORE__SIMPLE_AUTH_MANAGER_PASSWORDS_FILE": str(home / "passwords.json"),
        "AIRFLOW__API_AUTH__JWT_SECRET": "ui-stall-bench-" + "x" * 64,
        "AIRFLOW__LINEAGE_PLUS__GRAPH_SOURCE": "marquez",
        "AIRFLOW__LINEAGE_PLUS__MARQUEZ_URL": marquez_url,
        "AIRFLOW__LINEAGE_PLUS__MARQUEZ_TIMEOUT": "60",
        "AIRFLOW__LINEAGE_PLUS__UI_REQUEST_TIMEOUT": str(deadline),
        "AIRFLOW__LOGGING__LOGGING_LEVEL": "WARNING",
    }
    (home / "dags").mkdir(exist_ok=True)
    airflow = str(Path(sys.executable).parent / "airflow")
    subprocess.run([airflow, "db", "migrate"], env=env, check=True, capture_output=True, timeout=600)
    log = (home / "api-server.log").open("wb")
    return subprocess.Popen(
        [airflow, "api-server", "--host", "127.0.0.1", "--port", str(port), "--workers", "1"],
        env=env,
        stdout=log,
        stderr=subprocess.STDOUT,
        start_new_session=True,
    )


def _airflow_latencies(
    client: httpx.Client, headers: dict[str, str], until: threading.Event
) -> dict[str, Any]:
    samples: dict[str, list[float]] = {path: [] for path in AIRFLOW_ROUTES}
    statuses: set[int] = set()
    while not until.is_set():
        for path in AIRFLOW_ROUTES:
            seconds, status, _, _ = _timed(client, path, headers)
            samples[path].append(seconds)
            statuses.add(status)
        time.sleep(0.1)
    return {
        "statuses": sorted(statuses),
        **{path: _summary(found) for path, found in samples.items() if found},
    }


def measure(requests: int, deadline: float, client_timeout: float) -> dict[str, Any]:
    home = Path(tempfile.mkdtemp(prefix="alp-ui-stall-"))
    atexit.register(shutil.rmtree, home, True)
    port = free_port()
    base = f"http://127.0.0.1:{port}"
    with SilentMarquez() as marquez:
        proc = _start_server(home, marquez.url, deadline, port)
        try:
            began = time.monotonic()
            wait_until_serving(f"{base}/api/v2/monitor/health", proc, timeout=300)
            started_s = time.monotonic() - began
            client = httpx.Client(
                base_url=base, timeout=client_timeout, limits=httpx.Limits(max_connections=requests + 8)
            )
            token = client.post("/auth/token", json={"username": "bench", "password": "bench-pw"})
            headers = {"Authorization": f"Bearer {token.json()['access_token']}"}
            idle = {
                path: _summary([_timed(client, path, headers)[0] for _ in range(10)])
                for path in AIRFLOW_ROUTES
            }
            finished = threading.Event()
            node = "/lineage-plus/api/node?node=dataset:warehouse:analytics.orders"
            with ThreadPoolExecutor(requests + 1) as pool:
                during = pool.submit(_airflow_latencies, client, headers, finished)
                began = time.monotonic()
                lineage = list(pool.map(lambda _: _timed(client, node, headers), range(requests)))
                all_done_s = time.monotonic() - began
                finished.set()
                airflow_during = during.result()
            secrets_in_bodies = sum(marquez.url.split("//")[1] in text for _, _, _, text in lineage)
            return {
                "api_server_start_s": round(started_s, 1),
                "deadline_s": deadline,
                "marquez_connections": marquez.connections,
                "lineage_requests": requests,
                "lineage_statuses": {
                    str(s): sum(1 for _, st, _, _ in lineage if st == s)
                    for s in {st for _, st, _, _ in lineage}
                },
                "lineage_retry_after": sorted({ra for _, _, ra, _ in lineage}),
                "lineage_latency": _summary([seconds for seconds, _, _, _ in lineage]),
                "lineage_all_answered_s": round(all_done_s, 2),
                "bodies_naming_marquez": secrets_in_bodies,
                "airflow_idle": idle,
                "airflow_during_stall": airflow_during,
            }
        finally:
            stop(proc)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--requests", type=int, default=60, help="lineage requests sent at once")
    parser.add_argument("--deadline", type=float, default=10.0, help="[lineage_plus] ui_request_timeout")
    parser.add_argument(
        "--client-timeout", type=float, default=60.0, help="seconds the client waits per request"
    )
    args = parser.parse_args()
    print(json.dumps(measure(args.requests, args.deadline, args.client_timeout), indent=2))


if __name__ == "__main__":
    main()
