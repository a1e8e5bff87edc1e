"""The OpenLineage endpoint of a real ``airflow api-server``: ingest rate, accept latency, and whether
Airflow's own API keeps answering while producers flood it.

    .venv/bin/python benchmarks/collector_bench.py [--events 3000] [--clients 4] [--batch 100]
        [--dag-runs 3] [--dag-only]

One API server (one worker, the plugin, an ingest key, a SQLite store of its own) on this machine, and
``--clients`` producer threads in this process, each with its own HTTP connection:

1. **single**: every event in its own ``POST /lineage-plus/api/v1/lineage`` (what OpenLineage's ``http``
   transport and this package's transport send): events/s, the accept latency (request to 202)
   median, p95 and p99, and the CPU time per event of the API server's worker, its writer process and
   the producers;
2. **batch**: the same number of events in ``POST .../lineage/batch`` arrays of ``--batch`` (what a
   spool flush sends): events/s;
3. **flood**: ``--flood-events`` events (10,000, issue #26's flood), in batches of ``--batch`` from
   ``--flood-clients`` threads (more events in flight than the endpoint's queue holds), while a process
   of its own asks ``/api/v2/monitor/health`` and ``/api/v2/dags`` every 50 ms: their p95 against the
   same probes on the idle server, how many requests got 429 (each is sent again after its
   ``Retry-After``, as the client does), and then the RSS of the worker and of its writer process;
4. **DAG wall time**: ``--dag-runs`` runs of ``tests/dags/trivial.py`` (``airflow dags test``) each
   without the package (``[lineage_plus] disabled``, the provider writing the client's ``file``
   transport), with the package's transport writing a local SQLite store, with it sending to this API
   server (``collector_url``), writing the event log alone (``store_url = "none"``: the transport as it
   was before the store, the baseline of issue #25's per-event target), and the first two ``deferred``
   (the tasks append to the spool, whose process sends on); then the first four again with
   ``[openlineage] execute_in_thread`` (the provider sends each event from a thread of the task's
   process, not from a process it forks for it); the ten alternating. Each run's time from the
   metadata database (first task's start to last task's end, and again from the second task's start: the
   first task holds Airflow's start-up, ~3 s that vary by ±0.5 s), both again less the full garbage
   collections of the ``dags test`` process that started in the span (``dag_hooks/sitecustomize.py`` on
   the runs' ``PYTHONPATH`` logs each one's start and length: 11 or 12 a run, up to 0.5 s each, with or
   without the package, landing in or out of the span as allocations shift), and the ratios of the
   medians (issue #25's with/without, issue #26's API server/local); per event, how long the task
   waited for the provider to send it (the same hook times the provider listener's ``_execute``) and,
   when forked, the forked process's time from building the client to the event sent.
   ``--dag-only`` runs this phase alone.

Every figure comes from one run; the producers and the server share the machine's cores, so the rates
are a floor for a server on a machine of its own. Events are ~1.5 KB RunEvents (a job, an input, an
output with a 5-column schema), each distinct; the store keeps every one (checked at the end).
"""

from __future__ import annotations

import argparse
import contextlib
import datetime
import http.client
import json
import os
import re
import signal
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import threading
import time
import urllib.parse
import uuid
from pathlib import Path
from typing import Any, NamedTuple

import httpx

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(HERE.parent / "tests" / "support"))

from api_server_memory import api_server, login  # noqa: E402
from processes import retry_processes  # noqa: E402

from airflow_lineage_plus.store.spool import pending_bytes  # noqa: E402

KEY = "collector-bench-key-" + "b" * 32
ENDPOINT = "/lineage-plus/api/v1/lineage"
HEADERS = {"Authorization": f"Bearer {KEY}", "Content-Type": "application/json"}


def event(i: int, phase: str) -> bytes:
    fields = [{"name": f"c{n}", "type": "VARCHAR"} for n in range(5)]
    schema = {
        "_producer": "https://example.com/bench",
        "_schemaURL": "https://openlineage.io/spec/facets/1-1-1/SchemaDatasetFacet.json#/$defs/SchemaDatasetFacet",
        "fields": fields,
    }
    return json.dumps(
        {
            "eventType": "COMPLETE",
            "eventTime": "2026-12-02T06:00:00.000000+00:00",
            "producer": "https://example.com/bench",
            "schemaURL": "https://openlineage.io/spec/2-0-2/OpenLineage.json#/$defs/RunEvent",
            "run": {"runId": str(uuid.uuid4()), "facets": {}},
            "job": {"namespace": "bench", "name": f"{phase}.job_{i}", "facets": {}},
            "inputs": [{"namespace": "postgres://db:5432", "name": f"public.source_{i % 50}", "facets": {}}],
            "outputs": [
                {
                    "namespace": "postgres://db:5432",
                    "name": f"public.{phase}_{i}",
                    "facets": {"schema": schema},
                }
            ],
        }
    ).encode()


def produce(base: str, bodies: list[bytes], path: str, latencies: list[float], refused: list[int]) -> None:
    """Post each body on one kept-alive connection; a 429/503 is retried after its Retry-After (as the
    client's retry does). The standard library's HTTP client: a third of httpx's CPU per request, which
    leaves more of the machine's two cores to the server (producers are elsewhere in production)."""
    url = urllib.parse.urlsplit(base)
    connection = http.client.HTTPConnection(url.hostname or "127.0.0.1", url.port, timeout=60)
    try:
        for body in bodies:
            while True:
                started = time.perf_counter()
                connection.request("POST", path, body, HEADERS)
                response = connection.getresponse()
                text = response.read()
                if response.status in (429, 503):
                    refused.append(response.status)
                    time.sleep(float(response.getheader("Retry-After") or "1"))
                    continue
                if response.status not in (200, 202):  # a batch: 200 with the spec's summary
                    raise RuntimeError(f"{response.status}: {text[:300]!r}")
                latencies.append(time.perf_counter() - started)
                break
    finally:
        connection.close()


def run_phase(
    base: str, bodies: list[bytes], clients: int, path: str
) -> tuple[float, list[float], list[int]]:
    """(seconds, accept latencies, refused statuses) of ``clients`` threads posting ``bodies``."""
    latencies: list[float] = []
    refused: list[int] = []
    shares = [bodies[n::clients] for n in range(clients)]
    threads = [threading.Thread(target=produce, args=(base, s, path, latencies, refused)) for s in shares]
    started = time.perf_counter()
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    return time.perf_counter() - started, latencies, refused


PROBED = ("/api/v2/monitor/health", "/api/v2/dags")


def probe(base: str, token: str) -> None:
    """The prober's own process (``--probe BASE TOKEN``): asks each of :data:`PROBED` every 50 ms until its
    stdin closes, then prints the latencies of the 200s as JSON. A process of its own, so the producers'
    threads (this process's GIL) add nothing to what it measures."""
    found: dict[str, list[float]] = {}
    stop = threading.Event()
    threading.Thread(target=lambda: (sys.stdin.read(), stop.set()), daemon=True).start()
    with httpx.Client(timeout=30, headers={"Authorization": f"Bearer {token}"}) as client:
        while not stop.is_set():
            for path in PROBED:
                started = time.perf_counter()
                response = client.get(base + path)
                if response.status_code == 200:
                    found.setdefault(path, []).append(time.perf_counter() - started)
            time.sleep(0.05)
    print(json.dumps(found))


class Prober:
    """:func:`probe` in a process of its own, from its start to :meth:`stop` (the latencies found)."""

    def __init__(self, base: str, token: str) -> None:
        self.process = subprocess.Popen(
            [sys.executable, __file__, "--probe", base, token],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
        )

    def stop(self) -> dict[str, list[float]]:
        out, _ = self.process.communicate("", timeout=120)
        found: dict[str, list[float]] = json.loads(out)
        return found


class DagRun(NamedTuple):
    """One ``airflow dags test`` run's figures (:func:`dag_seconds`)."""

    whole: float  #: seconds, first task's start to last task's end
    after_first: float  #: seconds, second task's start to last task's end
    events: list[float]  #: milliseconds per event, provider's "will use" to its "Successfully emitted"
    waits: list[float]  #: milliseconds per event that the task waited (the listener's ``_execute``)
    full_gc: list[float]  #: milliseconds of each full garbage collection of the process
    whole_gc: float  #: seconds of full collections that started inside ``whole``
    after_first_gc: float  #: seconds of full collections that started inside ``after_first``


_STAMP = re.compile(r"^(\d{4}-\d\d-\d\dT[\d:.]+)Z?")


def dag_seconds(env: dict[str, str], home: Path, logical_date: str) -> DagRun:
    """One ``airflow dags test`` run of ``trivial``: from the metadata database, its first task's start to
    its last task's end (each task's lineage events are sent inside that span), and its second task's
    start to the last task's end (without the first task, in which Airflow starts its in-process
    execution API: about 3 s, varying by ±0.5 s between runs whatever the transport); from its output,
    each event's time in the process the provider forks for it, and its full garbage collections."""
    airflow = str(Path(sys.executable).parent / "airflow")
    done = subprocess.run(
        [airflow, "dags", "test", "trivial", logical_date],
        env=env,
        check=True,
        capture_output=True,
        text=True,
        timeout=600,
    )
    with sqlite3.connect(home / "airflow.db") as db:
        spans = db.execute(
            "SELECT start_date, end_date FROM task_instance WHERE dag_id = 'trivial' AND run_id = "
            "(SELECT run_id FROM dag_run WHERE dag_id = 'trivial' ORDER BY id DESC LIMIT 1)"
            " ORDER BY start_date"
        ).fetchall()
    end = max(_when(finished) for _, finished in spans)
    output = done.stdout + done.stderr
    events: list[float] = []
    building: datetime.datetime | None = None
    for line in output.splitlines():
        stamp = _STAMP.match(line)
        if stamp is None:
            continue
        if "OpenLineageClient will use" in line:
            building = _when(stamp.group(1))
        elif "Successfully emitted OpenLineage" in line and building is not None:
            events.append((_when(stamp.group(1)) - building).total_seconds() * 1e3)
            building = None
    waits = [float(line.split()[-1]) for line in output.splitlines() if "lineage-plus-bench wait" in line]
    collections = [
        (_when(line.split()[-2]), float(line.split()[-1]))
        for line in output.splitlines()
        if "lineage-plus-bench full-gc" in line
    ]
    first, second = _when(spans[0][0]), _when(spans[1][0])
    return DagRun(
        (end - first).total_seconds(),
        (end - second).total_seconds(),
        events,
        waits,
        [took for _, took in collections],
        sum(took for at, took in collections if first <= at <= end) / 1e3,
        sum(took for at, took in collections if second <= at <= end) / 1e3,
    )


def _when(text: str) -> datetime.datetime:
    """A UTC time of the metadata database, the log or the garbage collection hook (naive: UTC)."""
    when = datetime.datetime.fromisoformat(text.replace(" ", "T").replace("Z", "+00:00"))
    return when.astimezone(datetime.timezone.utc).replace(tzinfo=None) if when.tzinfo else when


def dag_wall(env: dict[str, str], home: Path, base: str, workdir: Path, runs: int) -> dict[str, list[DagRun]]:
    """``runs`` :class:`DagRun` of each way lineage leaves a task: ``without`` the package (disabled; the
    provider writes the client's ``file`` transport), ``local`` (the package's transport writing the local
    SQLite store), ``remote`` (sending to the API server at ``base``), ``log only`` (no store), and
    ``local`` and ``remote`` ``deferred`` (the tasks append, the spool's process sends on), and
    ``without``, ``local``, ``remote`` and ``log only`` again with ``[openlineage] execute_in_thread``
    (the provider sends from a thread of the task's process instead of a process forked for each event);
    the ten alternate. Then waits for the deferred spools to be sent, and checks the store holds each
    event of the runs that write it."""
    transport = "airflow_lineage_plus.transport.EventLogTransport"
    local = {"type": transport, "log_file_path": str(workdir / "local" / "spool.jsonl")}
    remote = {**local, "log_file_path": str(workdir / "remote" / "spool.jsonl"), "collector_url": base}
    deferred_local = {
        **local,
        "log_file_path": str(workdir / "deferred-local" / "spool.jsonl"),
        "deferred": True,
    }
    deferred_remote = {
        **remote,
        "log_file_path": str(workdir / "deferred-remote" / "spool.jsonl"),
        "deferred": True,
    }
    without = {"type": "file", "log_file_path": str(workdir / "without.jsonl"), "append": True}
    log_only = {**local, "log_file_path": str(workdir / "log-only" / "events.jsonl"), "store_url": "none"}
    path = os.pathsep.join(filter(None, [str(HERE / "dag_hooks"), env.get("PYTHONPATH")]))
    common = {**env, "AIRFLOW__CORE__DAGS_FOLDER": str(HERE.parent / "tests" / "dags"), "PYTHONPATH": path}
    ways: dict[str, tuple[dict[str, Any], dict[str, str]]] = {
        "without": (without, {"AIRFLOW__LINEAGE_PLUS__DISABLED": "True"}),
        "local": (local, {}),
        "remote": (remote, {}),
        "log only": (log_only, {}),
        "local, deferred": (deferred_local, {}),
        "remote, deferred": (deferred_remote, {}),
    }
    in_thread = {"AIRFLOW__OPENLINEAGE__EXECUTE_IN_THREAD": "True"}
    for name in ("without", "local", "remote", "log only"):
        config, extra = ways[name]
        ways[f"{name}, thread"] = (config, {**extra, **in_thread})
    found: dict[str, list[DagRun]] = {name: [] for name in ways}
    day = 0
    for _ in range(runs):
        for name, (config, extra) in ways.items():
            day += 1
            run_env = {**common, **extra, "AIRFLOW__OPENLINEAGE__TRANSPORT": json.dumps(config)}
            logical_date = datetime.date(2024, 1, 1) + datetime.timedelta(days=day)
            found[name].append(dag_seconds(run_env, home, logical_date.isoformat()))
    spools = [Path(deferred_local["log_file_path"]), Path(deferred_remote["log_file_path"])]
    deadline = time.monotonic() + 60
    while any(pending_bytes(spool) for spool in spools) and time.monotonic() < deadline:
        time.sleep(0.2)
    store = env["AIRFLOW__LINEAGE_PLUS__STORE_URL"].removeprefix("sqlite:///")
    with contextlib.closing(sqlite3.connect(store)) as db:  # local, remote, deferred: all go to this store
        kept = db.execute("SELECT count(*) FROM lineage_plus_event").fetchone()[0]
    stored = [way for way in found if not way.startswith(("without", "log only"))]
    emitted = sum(len(run.events) for way in stored for run in found[way])
    print(
        f"  deferred: {sum(map(pending_bytes, spools))} bytes still in the spools; the store holds {kept}"
        f" events, the runs' provider said it emitted {emitted} of them (the others: the endpoint's warm-up)"
    )
    for pid in retry_processes(workdir):
        os.kill(pid, signal.SIGKILL)
    return found


def report_dag_wall(found: dict[str, list[DagRun]]) -> None:
    """Print the medians of :func:`dag_wall`'s runs, with the ratios of issue #25 (local/without) and
    issue #26 (API server/local), each way's alike (forked, deferred, in a thread), and per event."""
    runs = len(found["without"])
    ratios = [
        ("local/without", "local", "without"),
        ("API server/local", "remote", "local"),
        ("deferred: local/without", "local, deferred", "without"),
        ("deferred: API server/local", "remote, deferred", "local, deferred"),
        ("in a thread: local/without", "local, thread", "without, thread"),
        ("in a thread: API server/local", "remote, thread", "local, thread"),
        ("local, in a thread/forked", "local, thread", "local"),
    ]
    for what, figure in [
        ("first task's start to the end", lambda run: run.whole),
        ("second task's start (Airflow's start-up left out) to the end", lambda run: run.after_first),
        (
            "first task's start to the end, less the full collections that started in that span",
            lambda run: run.whole - run.whole_gc,
        ),
        (
            "second task's start to the end, less the full collections that started in that span",
            lambda run: run.after_first - run.after_first_gc,
        ),
    ]:
        median = {way: statistics.median(map(figure, found[way])) for way in WAYS}
        print(f"  DAG wall time (tests/dags/trivial.py, {what}, median of {runs}):")
        print("    " + ", ".join(f"{way} {median[way]:.2f} s" for way in WAYS))
        print("    " + ", ".join(f"{name} {median[a] / median[b]:.3f}x" for name, a, b in ratios))
    print(
        "  per event, median: the task's wait (the provider's fork and wait, or its thread and join);"
        " in the forked process, the provider's 'will use' to 'Successfully emitted'"
    )
    for way in WAYS:
        waits = [ms for run in found[way] for ms in run.waits]
        events = [ms for run in found[way] for ms in run.events]
        forked = "" if way.endswith("thread") else f"; forked {statistics.median(events):5.1f} ms"
        gcs = [sum(run.full_gc) for run in found[way]]
        counts = sorted(len(run.full_gc) for run in found[way])
        print(
            f"    {way:18} wait {statistics.median(waits):5.1f} ms ({len(waits)} events){forked};"
            f" full garbage collections of the dags test process: {counts[0]}-{counts[-1]} a run,"
            f" {min(gcs) / 1e3:.2f}-{max(gcs) / 1e3:.2f} s in all"
        )


#: a new process with what a task process has imported (the task runner, the provider's listener, this
#: package's listener): the preload's milliseconds, then the ingest key's read outside a task's context
PREPARATION = """
import time
import airflow.sdk.execution_time.task_runner, airflow.providers.openlineage.plugins.listener
import airflow_lineage_plus.emit.skip_listener
from airflow_lineage_plus.deliver.ingest_key import ingest_key
from airflow_lineage_plus.deliver.preload import preload_transport
started = time.perf_counter()
assert preload_transport()
preloaded = time.perf_counter()
ingest_key()
print((preloaded - started) * 1e3, (time.perf_counter() - preloaded) * 1e3)
"""


def report_preparation(env: dict[str, str], workdir: Path, runs: int) -> None:
    """Print what the transport's preload costs a task process (local store, and sending to an API
    server, where it reads the ingest key), in ``runs`` new processes each."""
    local = {
        "type": "airflow_lineage_plus.transport.EventLogTransport",
        "log_file_path": str(workdir / "p.jsonl"),
    }
    figures: dict[str, list[list[float]]] = {}
    for way, config in [("local", local), ("remote", {**local, "collector_url": "http://127.0.0.1:9"})]:
        run_env = {**env, "AIRFLOW__OPENLINEAGE__TRANSPORT": json.dumps(config)}
        figures[way] = [
            [
                float(x)
                for x in subprocess.run(
                    [sys.executable, "-c", PREPARATION],
                    env=run_env,
                    check=True,
                    capture_output=True,
                    text=True,
                    timeout=300,
                ).stdout.split()[-2:]
            ]
            for _ in range(runs)
        ]
    local_ms = statistics.median(f[0] for f in figures["local"])
    remote_ms = statistics.median(f[0] for f in figures["remote"])
    key_ms = statistics.median(f[1] for f in figures["local"])
    print(
        f"  the preload in a new task-like process, median of {runs}: {local_ms:.1f} ms (local store),"
        f" {remote_ms:.1f} ms (API server, with the ingest key's read: outside a task it goes through"
        f" Airflow's ORM); the ingest key read outside a task, after a local preload: {key_ms:.1f} ms"
    )


#: the ways of :func:`dag_wall`, in the order they are reported
WAYS = (
    "without",
    "local",
    "remote",
    "log only",
    "local, deferred",
    "remote, deferred",
    "without, thread",
    "local, thread",
    "remote, thread",
    "log only, thread",
)


def percentile(values: list[float], share: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(len(ordered) * share))]


def ms(seconds: float) -> str:
    return f"{seconds * 1e3:6.1f} ms"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--events", type=int, default=3000, help="events per phase")
    parser.add_argument("--clients", type=int, default=4, help="producer threads")
    parser.add_argument("--batch", type=int, default=100, help="events per batch request")
    parser.add_argument("--flood-clients", type=int, default=32, help="producer threads of the flood")
    parser.add_argument("--flood-events", type=int, default=10000, help="events of the flood")
    parser.add_argument("--probe", nargs=2, metavar=("BASE", "TOKEN"), help=argparse.SUPPRESS)
    parser.add_argument("--dag-runs", type=int, default=3, help="DAG runs per transport (0: none)")
    parser.add_argument("--dag-only", action="store_true", help="only the DAG wall time (phase 4)")
    parser.add_argument(
        "--postgres",
        action="store_true",
        help="phases 1-3 with the store on PostgreSQL (Debian's server, started for the run), not SQLite",
    )
    args = parser.parse_args()
    if args.probe:
        probe(*args.probe)
        return
    with tempfile.TemporaryDirectory(prefix="alp-collector-bench-") as tmp, contextlib.ExitStack() as stack:
        workdir = Path(tmp)
        store_url = f"sqlite:///{workdir / 'store' / 'lineage.db'}"
        if args.postgres:
            if args.dag_runs:
                raise SystemExit("--postgres measures phases 1-3: give --dag-runs 0")
            from postgres_env import PostgresServer

            store_url = stack.enter_context(PostgresServer(workdir)).url()
        bench(args, workdir, store_url)


def bench(args: argparse.Namespace, workdir: Path, store_url: str) -> None:
    """The phases asked for, against one API server writing the store at ``store_url``."""
    airflow = str(Path(sys.executable).parent / "airflow")
    home = workdir / "airflow"
    home.mkdir()
    env = {
        **os.environ,
        "AIRFLOW_HOME": str(home),
        "AIRFLOW__CORE__LOAD_EXAMPLES": "False",
        "AIRFLOW__LINEAGE_PLUS__STORE_URL": store_url,
        "AIRFLOW_CONN_LINEAGE_PLUS_COLLECTOR": json.dumps({"conn_type": "generic", "password": KEY}),
    }
    subprocess.run([airflow, "db", "migrate"], env=env, check=True, capture_output=True, timeout=900)
    with api_server(workdir / "events.jsonl", workdir, env) as (base, pid):
        token = login(base)
        warm = [event(i, "warm") for i in range(50)]
        run_phase(base, warm, 1, ENDPOINT)  # the store created, the code paths warm

        if not args.dag_only:
            ingest(args, base, token, pid, len(warm), store_url)
        if args.dag_runs:
            report_dag_wall(dag_wall(env, home, base, workdir, args.dag_runs))
            report_preparation(env, workdir, args.dag_runs)


def ingest(args: argparse.Namespace, base: str, token: str, pid: int, warm: int, store: str) -> None:
    """The single, batch and flood phases against the API server at ``base`` (worker ``pid``); then
    whether ``store`` kept every event sent (``warm`` of them before)."""
    prober = Prober(base, token)
    time.sleep(8)  # its start (an interpreter, httpx), then 5 s or more of probes
    idle = prober.stop()

    engine = store.split(":", 1)[0].split("+", 1)[0]
    print(
        f"one api-server (1 worker), a {engine} store, {args.clients} producer threads on the same 2-core"
        " machine"
    )
    single = [event(i, "single") for i in range(args.events)]
    before = cpu_seconds(pid)
    seconds, latencies, refused = run_phase(base, single, args.clients, ENDPOINT)
    spent = {role: cpu_seconds(pid)[role] - before.get(role, 0.0) for role in cpu_seconds(pid)}
    print(
        f"  single   {args.events} events in {seconds:5.1f} s: {args.events / seconds:6.0f} events/s;"
        f" accept median {ms(statistics.median(latencies))}, p95 {ms(percentile(latencies, 0.95))},"
        f" p99 {ms(percentile(latencies, 0.99))}; 429/503: {len(refused)}"
    )
    print(
        "    CPU per event: "
        + ", ".join(f"{role} {spent[role] / args.events * 1000:.2f} ms" for role in sorted(spent))
        + f" (machine: 2 cores, {2 * seconds / args.events * 1000:.2f} ms of CPU per event available)"
    )
    events = [event(i, "batch") for i in range(args.events)]
    batches = [b"[" + b",".join(events[n : n + args.batch]) + b"]" for n in range(0, len(events), args.batch)]
    seconds, latencies, refused = run_phase(base, batches, args.clients, ENDPOINT + "/batch")
    print(
        f"  batch    {args.events} events in {len(batches)} requests of {args.batch}"
        f" in {seconds:5.1f} s: {args.events / seconds:6.0f} events/s;"
        f" request median {ms(statistics.median(latencies))};"
        f" 429/503: {len(refused)}"
    )
    flood = [event(i, "flood") for i in range(args.flood_events)]
    floods = [b"[" + b",".join(flood[n : n + args.batch]) + b"]" for n in range(0, len(flood), args.batch)]
    prober = Prober(base, token)
    time.sleep(3)  # its start
    seconds, latencies, refused = run_phase(base, floods, args.flood_clients, ENDPOINT + "/batch")
    busy = prober.stop()
    print(
        f"  flood    {args.flood_events} events in batches of {args.batch},"
        f" {args.flood_clients} in flight, in {seconds:5.1f} s; 429/503: {len(refused)}"
    )
    for path in PROBED:
        ratio = percentile(busy[path], 0.95) / percentile(idle[path], 0.95)
        print(
            f"    {path}: p95 {ms(percentile(busy[path], 0.95))} busy vs"
            f" {ms(percentile(idle[path], 0.95))} idle ({ratio:.2f}x, {len(busy[path])} probes)"
        )
    print(f"  memory after the flood (RSS): {memory(pid)}")
    stored = _count(store)
    expected = warm + 2 * args.events + args.flood_events
    print(f"  stored {stored} events of {expected} sent ({'all' if stored == expected else 'MISSING'})")


def cpu_seconds(pid: int) -> dict[str, float]:
    """CPU seconds (user + system) so far of the API server's worker(s), its writer process(es) and these
    producers (this process)."""
    import psutil

    found = {"producers": sum(os.times()[:2])}
    top = psutil.Process(pid)
    for process in [top, *top.children(recursive=True)]:
        with contextlib.suppress(psutil.Error):
            role = "writer process" if "ingest_process" in " ".join(process.cmdline()) else "api-server"
            times = process.cpu_times()
            found[role] = found.get(role, 0.0) + times.user + times.system
    return found


def memory(pid: int) -> str:
    """The RSS of the API server ``pid`` and its processes (its worker, the worker's writer process)."""
    import psutil

    top = psutil.Process(pid)
    parts = []
    for process in [top, *top.children(recursive=True)]:
        with contextlib.suppress(psutil.Error):
            command = " ".join(process.cmdline())
            role = "writer process" if "ingest_process" in command else f"pid {process.pid}"
            parts.append(f"{role} {process.memory_info().rss / 2**20:.0f} MiB")
    return ", ".join(parts)


def _count(store: str) -> int:
    from airflow_lineage_plus.store.database import LineageStore

    opened = LineageStore(store, create=False)
    try:
        return opened.count()
    finally:
        opened.close()


if __name__ == "__main__":
    main()
