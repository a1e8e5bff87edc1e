"""A real ``airflow api-server`` with the plugin, serving the Lineage view while the event log grows and is
rotated: its memory over many incremental refreshes, and whether it survives the log being truncated in
place (logrotate's ``copytruncate``) while requests come in.

The server folds the log into memory on the first request, then each request picks up the events
appended since. Each round appends one generated DAG run (42 events)
and asks for a node's lineage; the resident memory of the server's processes is sampled every round.
Then the log is truncated and refilled while threads keep asking: the server must keep answering and
show the new log.

    python benchmarks/api_server_memory.py --log /tmp/graph_1m.jsonl --refreshes 200

With ``--store URL`` (the store the log was imported into: ``lineage-plus import LOG --store URL``; a
SQLite file is copied first) the server reads the lineage store instead (``graph_source = store``, as
installed): each round stores one more generated DAG run (as a worker's transport would) and asks the
lineage (depth 4) and ``what-changed`` of a random dataset, every 20th round also the view's first page
(``/attention``, which reads every job); its resident memory is sampled every round, and the time of
each ``/attention`` is printed. No truncation then (a store is not a file rotated in place).

    python benchmarks/api_server_memory.py --log /tmp/ev1m.jsonl --store sqlite:////tmp/ev1m.jsonl.db
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import threading
import time
import urllib.error
import urllib.parse
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import psutil

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(HERE.parent / "tests" / "support"))

from generate_events import generate  # noqa: E402
from servers import free_port, stop  # noqa: E402

USER, PASSWORD = "viewer", "viewer-password"
NODE = "dataset:postgres://warehouse:5432:analytics.dag_00000.t19_out0"
MARKER = "dataset:rotated:after_rotation"  # only in the log written after the rotation


def marker_event() -> bytes:
    return (
        json.dumps(
            {
                "eventType": "COMPLETE",
                "eventTime": "2026-06-01T00:00:00Z",
                "run": {"runId": "6d1c3a52-6a0c-4b5e-9d2a-0d3e5a6b7c8d"},
                "job": {"namespace": "rotated", "name": "marker"},
                "inputs": [],
                "outputs": [{"namespace": "rotated", "name": "after_rotation"}],
                "producer": "https://example.com/rotation",
                "schemaURL": "https://openlineage.io/spec/2-0-2/OpenLineage.json#/$defs/RunEvent",
            }
        ).encode()
        + b"\n"
    )


@contextmanager
def api_server(
    log: Path, workdir: Path, env: dict[str, str] | None = None, store: str | None = None
) -> Iterator[tuple[str, int]]:
    """(base URL, pid) of a real ``airflow api-server`` over ``log`` (over the lineage store ``store``
    when given); stopped (process group) after."""
    passwords = workdir / "passwords.json"
    passwords.write_text(json.dumps({USER: PASSWORD}))
    port = free_port()
    environment = {
        **(env if env is not None else os.environ),
        "AIRFLOW__LINEAGE_PLUS__EVENT_LOG_PATH": str(log),
        # the event log's own reader (a log truncated in place); the store keeps what it took
        "AIRFLOW__LINEAGE_PLUS__GRAPH_SOURCE": "events",
        "AIRFLOW__CORE__SIMPLE_AUTH_MANAGER_USERS": f"{USER}:viewer",
        "AIRFLOW__CORE__SIMPLE_AUTH_MANAGER_PASSWORDS_FILE": str(passwords),
        "AIRFLOW__CORE__SIMPLE_AUTH_MANAGER_ALL_ADMINS": "False",
        "AIRFLOW__API_AUTH__JWT_SECRET": "lineage-plus-memory-" + "m" * 64,
        "AIRFLOW__API__BASE_URL": f"http://127.0.0.1:{port}/",
    }
    if store is not None:
        environment |= {
            "AIRFLOW__LINEAGE_PLUS__GRAPH_SOURCE": "store",
            "AIRFLOW__LINEAGE_PLUS__STORE_URL": store,
        }
    airflow = str(Path(sys.executable).parent / "airflow")
    output = (workdir / "api-server.log").open("wb")
    process = subprocess.Popen(
        [airflow, "api-server", "--host", "127.0.0.1", "--port", str(port), "--workers", "1"],
        env=environment,
        stdout=output,
        stderr=subprocess.STDOUT,
        start_new_session=True,
    )
    try:
        yield f"http://127.0.0.1:{port}", process.pid
    finally:
        stop(process)
        output.close()


def _request(url: str, token: str | None = None, body: Any = None, timeout: float = 120) -> tuple[int, Any]:
    headers = {"Content-Type": "application/json", "Accept": "application/json"}
    if token:
        headers["Authorization"] = f"Bearer {token}"
    data = json.dumps(body).encode() if body is not None else None
    request = urllib.request.Request(url, data=data, headers=headers, method="POST" if data else "GET")
    try:
        with urllib.request.urlopen(request, timeout=timeout) as response:
            return response.status, json.loads(response.read() or b"null")
    except urllib.error.HTTPError as error:
        return error.code, json.loads(error.read() or b"null")


def login(base: str, timeout: float = 180) -> str:
    """A token from the simple auth manager, once the server answers."""
    deadline = time.monotonic() + timeout
    while True:
        try:
            status, body = _request(f"{base}/auth/token", body={"username": USER, "password": PASSWORD})
            if status == 201:
                return str(body["access_token"])
        except OSError:
            pass
        if time.monotonic() > deadline:
            raise TimeoutError(f"the api-server at {base} did not come up")
        time.sleep(0.5)


def lineage(base: str, token: str, node: str = NODE, timeout: float = 300) -> dict[str, Any]:
    """The node's lineage, waiting while the server says it is still loading."""
    query = urllib.parse.urlencode({"node": node, "depth": 4})
    deadline = time.monotonic() + timeout
    while True:
        status, body = _request(f"{base}/lineage-plus/api/lineage?{query}", token)
        if status == 200:
            return dict(body)
        if status != 503 or time.monotonic() > deadline:
            raise RuntimeError(f"lineage answered {status}: {body}")
        time.sleep(0.5)


def rss_mib(pid: int) -> float:
    """Resident memory of the process and its descendants, MiB."""
    root = psutil.Process(pid)
    family = [root, *root.children(recursive=True)]
    return sum(p.memory_info().rss for p in family if p.is_running()) / 2**20


def refreshes(
    base: str, token: str, pid: int, log: Path, rounds: int, workdir: Path, *, new_runs: bool = True
) -> list[float]:
    """Resident memory after each of ``rounds`` appends of one DAG run, each picked up by a request.

    ``new_runs=False`` appends the same DAG run's events every time (a producer re-sending them): every
    refresh reads and folds new bytes, but the graph has nothing new to keep, so what the memory gains is
    what the refreshes themselves leave behind."""
    batch = workdir / "batch.jsonl"
    samples = []
    for round_ in range(rounds):
        generate(batch, events=42, datasets=400, jobs=20, seed=1000 + (round_ if new_runs else 0))
        with open(log, "ab") as out:
            out.write(batch.read_bytes())
        lineage(base, token)
        samples.append(round(rss_mib(pid), 1))
    return samples


def ask(base: str, token: str, route: str, timeout: float = 300, **params: Any) -> tuple[int, float]:
    """(status, seconds) of one GET of a Lineage view route."""
    began = time.perf_counter()
    query = urllib.parse.urlencode(params)
    status, _ = _request(f"{base}/lineage-plus/api/{route}?{query}", token, timeout=timeout)
    return status, time.perf_counter() - began


def store_rounds(
    base: str, token: str, pid: int, store: str, rounds: int, workdir: Path
) -> tuple[list[float], list[float], dict[int, int]]:
    """Resident memory after each round (one DAG run stored, then questions of random datasets: see the
    module docstring), the seconds of each ``/attention``, and the statuses answered."""
    import random

    from airflow_lineage_plus.store import LineageStore
    from airflow_lineage_plus.store.facts import DATASET_KIND
    from airflow_lineage_plus.store.folded import FoldedState

    writer = LineageStore(store)
    datasets = sorted(FoldedState(writer).node_ids(DATASET_KIND))
    rng = random.Random(5)
    batch = workdir / "batch.jsonl"
    samples: list[float] = []
    firsts: list[float] = []
    statuses: dict[int, int] = {}
    try:
        for round_ in range(rounds):
            generate(batch, events=42, datasets=400, jobs=20, seed=1000 + round_)
            writer.append(batch.read_bytes().splitlines())
            node = rng.choice(datasets)
            asked = [
                ask(base, token, "lineage", node=node, depth=4),
                ask(base, token, "what-changed", node=node),
            ]
            if round_ % 20 == 0:
                asked.append(ask(base, token, "attention"))
                firsts.append(round(asked[-1][1], 2))
            for status, _ in asked:
                statuses[status] = statuses.get(status, 0) + 1
            samples.append(round(rss_mib(pid), 1))
    finally:
        writer.close()
    return samples, firsts, statuses


def truncate_under_load(base: str, token: str, log: Path, workdir: Path, readers: int = 4) -> dict[str, Any]:
    """Truncate the log in place and refill it while threads keep asking; what they got."""
    stop, outcomes = threading.Event(), {"ok": 0, "not_found": 0, "other": []}
    lock = threading.Lock()

    def ask() -> None:
        while not stop.is_set():
            query = urllib.parse.urlencode({"node": NODE, "depth": 2})
            try:
                status, _ = _request(f"{base}/lineage-plus/api/lineage?{query}", token, timeout=60)
            except OSError as error:
                status = repr(error)
            with lock:
                key = "ok" if status in (200, 503) else "not_found" if status == 404 else None
                if key:
                    outcomes[key] += 1
                else:
                    outcomes["other"].append(status)

    threads = [threading.Thread(target=ask) for _ in range(readers)]
    for thread in threads:
        thread.start()
    time.sleep(2)
    fresh = workdir / "fresh.jsonl"
    generate(fresh, events=2000, datasets=300, jobs=40, seed=77)
    with open(log, "r+b") as handle:  # copytruncate: the file keeps its inode, its bytes go
        handle.truncate(0)
    with open(log, "ab") as out:
        out.write(fresh.read_bytes() + marker_event())
    time.sleep(3)
    stop.set()
    for thread in threads:
        thread.join()
    after = lineage(base, token, node=MARKER)
    return {**outcomes, "marker_upstream": [n["id"] for n in after["nodes"]]}


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--log", type=Path, required=True, help="an event log (copied: it is appended to)")
    parser.add_argument("--refreshes", type=int, default=200)
    parser.add_argument("--store", help="serve this lineage store (the log imported into it) instead")
    args = parser.parse_args()
    workdir = Path(tempfile.mkdtemp(prefix="alp-server-memory-"))
    try:
        home = workdir / "airflow-home"
        env = {**os.environ, "AIRFLOW_HOME": str(home), "AIRFLOW__CORE__LOAD_EXAMPLES": "False"}
        airflow = str(Path(sys.executable).parent / "airflow")
        subprocess.run([airflow, "db", "migrate"], env=env, check=True, capture_output=True, timeout=900)
        log = workdir / "events.jsonl"
        if args.store:
            _serve_store(args, workdir, env)
            return
        shutil.copy(args.log, log)
        with api_server(log, workdir, env) as (base, pid):
            token = login(base)
            began = time.perf_counter()
            lineage(base, token)
            opened_s = round(time.perf_counter() - began, 1)
            samples = refreshes(base, token, pid, log, args.refreshes, workdir)
            truncation = truncate_under_load(base, token, log, workdir)
            alive = psutil.pid_exists(pid)
        print(
            json.dumps(
                {
                    "log_bytes": args.log.stat().st_size,
                    "first_answer_s": opened_s,
                    "rss_mib_after_refresh": {
                        str(i + 1): samples[i]
                        for i in (0, 9, 19, 49, 99, 149, len(samples) - 1)
                        if i < len(samples)
                    },
                    "rss_growth_mib_20_to_last": round(samples[-1] - samples[min(19, len(samples) - 1)], 1),
                    "rss_growth_mib_first_to_last": round(samples[-1] - samples[0], 1),
                    "truncation_under_load": truncation,
                    "server_alive_after_truncation": alive,
                },
                indent=2,
            )
        )
    finally:
        shutil.rmtree(workdir, ignore_errors=True)


def _serve_store(args: argparse.Namespace, workdir: Path, env: dict[str, str]) -> None:
    store = str(args.store)
    if store.startswith("sqlite:///"):  # the rounds write to it: a copy
        copy = workdir / "store.db"
        shutil.copy(store.removeprefix("sqlite:///"), copy)
        store = f"sqlite:///{copy}"
    log = workdir / "spool.jsonl"  # (the transport's spool; nothing is read from it)
    with api_server(log, workdir, env, store=store) as (base, pid):
        token = login(base)
        idle = round(rss_mib(pid), 1)
        samples, attention_s, statuses = store_rounds(base, token, pid, store, args.refreshes, workdir)
        alive = psutil.pid_exists(pid)
    print(
        json.dumps(
            {
                "store": args.store,
                "rss_mib_before_questions": idle,
                "rss_mib_after_round": {
                    str(i + 1): samples[i]
                    for i in (0, 9, 19, 49, 99, 149, len(samples) - 1)
                    if i < len(samples)
                },
                "rss_mib_peak": max(samples),
                "attention_s": attention_s,
                "statuses": statuses,
                "server_alive": alive,
            },
            indent=2,
        )
    )


if __name__ == "__main__":
    main()
