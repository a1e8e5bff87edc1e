"""``python -m demo [--no-serve] [--port N]``: the sample pipelines through real Airflow, then the UI.

1. a fresh Airflow home under ``demo-home/`` and its metadata database (``airflow db migrate``);
2. a local S3-compatible endpoint (moto) with the ``raw-data-lake`` bucket, which ``aws_default`` points at;
3-9. ``airflow dags test`` runs of the sample DAGs, all in one Airflow process (``dag_batch.py``), with
   the OpenLineage provider and this package: CRM contacts on three ordinary days, a day the CRM returns
   fewer contacts and a day the staging job's SQL changes (each followed by ``lineage-plus what-changed``
   of ``analytics.marts.dim_contacts``), a good day of orders (the mart built by dbt), a day with no
   orders (the gate skips) and a day whose dbt model ``fct_daily_orders`` fails on purpose;
10. the lineage report of ``analytics.marts.fct_daily_orders`` (upstream, failed upstream, impact);
11. ``airflow api-server`` with the Lineage view, until Ctrl-C (skipped with ``--no-serve``).

Ctrl-C, SIGTERM and SIGHUP all stop what the demo started (the api-server, the S3 endpoint, a running
``airflow`` command) before it exits (130, 143, 129).
"""

from __future__ import annotations

import argparse
import json
import shutil
import signal
import socket
import subprocess
import sys
import time
import urllib.parse
import urllib.request
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from demo.dag_batch import DagBatch, DagBatchError, dags_test_argv
from demo.environment import ADMIN_USER, REPO, DemoHome
from demo.processes import ProcessGroup
from demo.progress import Progress, fail
from demo.s3_endpoint import LocalS3

BUCKET = "raw-data-lake"
MART_TABLE = "analytics.marts.fct_daily_orders"
DIM_CONTACTS = "analytics.marts.dim_contacts"


class DemoError(RuntimeError):
    """A step of the demo went wrong; the message says what and where its log is."""


class Stopped(BaseException):
    """SIGTERM or SIGHUP arrived (a process manager, a closed terminal): stop as on Ctrl-C."""

    def __init__(self, signum: int) -> None:
        super().__init__(signum)
        self.signum = signum


#: the signals that stop the demo like Ctrl-C does (exit status 128 + the signal's number)
STOP_SIGNALS = (signal.SIGTERM, signal.SIGHUP)


def _stop(signum: int, _frame: object) -> None:
    for sig in STOP_SIGNALS:  # once: a second signal must not interrupt the stopping itself
        signal.signal(sig, signal.SIG_IGN)
    raise Stopped(signum)


@dataclass(frozen=True)
class SampleRun:
    """One ``airflow dags test`` run of a sample DAG and what the demo expects of it."""

    title: str
    dag_id: str
    logical_date: str
    conf: dict[str, Any] = field(default_factory=dict)
    expect_failure: bool = False
    env: dict[str, str] = field(default_factory=dict)
    #: after the run, print ``lineage-plus what-changed`` of the contact dimension
    what_changed: bool = False


SAMPLE_RUNS = [
    SampleRun(
        "running crm_contacts_ingestion (CRM -> S3 -> staging -> dim_contacts)",
        "crm_contacts_ingestion",
        "2024-06-01",
    ),
    *(
        SampleRun(
            f"running crm_contacts_ingestion for {day} (an ordinary day)", "crm_contacts_ingestion", day
        )
        for day in ("2024-06-02", "2024-06-03")
    ),
    SampleRun(
        "running crm_contacts_ingestion for 2024-06-04 (the CRM returns 42 of its 60 contacts)",
        "crm_contacts_ingestion",
        "2024-06-04",
        {"crm_contacts_returned": 42},
        what_changed=True,
    ),
    SampleRun(
        "running crm_contacts_ingestion for 2024-06-05 (load_stg_contacts gets a new SQL)",
        "crm_contacts_ingestion",
        "2024-06-05",
        env={"LINEAGE_SAMPLES_STAGING_SQL": "v2"},
        what_changed=True,
    ),
    SampleRun(
        "running ecommerce_orders for 2024-06-01 (40 orders)",
        "ecommerce_orders",
        "2024-06-01",
        {"order_count": 40},
    ),
    SampleRun(
        "running ecommerce_orders for 2024-06-02 (no orders: the gate skips)",
        "ecommerce_orders",
        "2024-06-02",
        {"order_count": 0},
    ),
    SampleRun(
        "running ecommerce_orders for 2024-06-03 (the dbt model fct_daily_orders fails on purpose)",
        "ecommerce_orders",
        "2024-06-03",
        {"order_count": 25, "fail_stage": "fct_daily_orders"},
        expect_failure=True,
    ),
]


def airflow_bin() -> str:
    return str(Path(sys.executable).parent / "airflow")


def read_events(path: Path) -> list[dict[str, Any]]:
    """The events the runs wrote: those in the lineage store beside the event log ``path`` (``.db``),
    then those still waiting in the log, its spool."""
    from airflow_lineage_plus.store import LineageStore, sqlite_url

    stored: list[bytes] = []
    if path.with_suffix(".db").exists():
        store = LineageStore(sqlite_url(path.with_suffix(".db")), create=False)
        try:
            stored = store.all_payloads()
        finally:
            store.close()
    known = set(stored)
    spooled = [line for line in path.read_bytes().splitlines() if line.strip()] if path.exists() else []
    return [json.loads(raw) for raw in stored + [line for line in spooled if line not in known]]


def wait_for_dag_run_event(
    log: Path, dag_id: str, already: int, timeout: float = 60.0
) -> dict[str, Any] | None:
    """The DAG run's terminal event, which the provider emits from a process pool shortly after the run."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        for event in read_events(log)[already:]:
            if event.get("job", {}).get("name") == dag_id and event.get("eventType") in {"COMPLETE", "FAIL"}:
                return event
        time.sleep(0.2)
    return None


def task_states(dag_event: dict[str, Any] | None) -> str:
    if dag_event is None:
        return "no DAG-run event arrived"
    state = dag_event.get("run", {}).get("facets", {}).get("airflowState", {})
    tasks = state.get("tasksState", {})
    return f"run {state.get('dagRunState', '?')}: " + ", ".join(f"{t}={s}" for t, s in tasks.items())


def mart_dataset(events: list[dict[str, Any]]) -> tuple[str, str] | None:
    """Namespace and name of the mart, as the dbt model that builds it reported them."""
    for event in events:
        for output in event.get("outputs", []):
            if output.get("name") == MART_TABLE:
                return output["namespace"], output["name"]
    return None


def free_port(preferred: int) -> int:
    for port in (preferred, 0):
        with socket.socket() as sock:
            try:
                sock.bind(("127.0.0.1", port))
            except OSError:
                continue
            return int(sock.getsockname()[1])
    raise RuntimeError("no free TCP port")


def wait_http(url: str, timeout: float) -> bool:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            with urllib.request.urlopen(url, timeout=2) as response:
                if response.status < 500:
                    return True
        except OSError:
            time.sleep(0.5)
    return False


def tail(path: Path, lines: int = 40) -> str:
    return "\n".join(path.read_text(errors="replace").splitlines()[-lines:]) if path.exists() else ""


REPORTS = (
    ("upstream", "everything the mart is built from"),
    ("failed-upstream", "upstream jobs whose latest run failed"),
    ("impact", "what depends on the mart"),
)


def report_commands(log: Path, namespace: str, name: str) -> list[list[str]] | None:
    """``lineage-plus`` queries about the mart, or None when the CLI is not installed."""
    cli = shutil.which("lineage-plus", path=str(Path(sys.executable).parent))
    if cli is None:
        return None
    target = ["--namespace", namespace, "--name", name]
    return [[cli, query, *target] for query, _what in REPORTS]  # the configured lineage store


def _print_what_changed(log: Path, env: dict[str, str]) -> None:
    """``lineage-plus what-changed`` of the contact dimension, as of now (what the last run changed)."""
    cli = shutil.which("lineage-plus", path=str(Path(sys.executable).parent))
    found = _output_dataset(read_events(log), DIM_CONTACTS)
    if cli is None or found is None:
        return
    command = [cli, "what-changed", "--namespace", found[0], "--name", found[1]]
    print(
        f"\n  $ lineage-plus {' '.join(command[1:])}    # what changed upstream of the contacts", flush=True
    )
    report = subprocess.run(command, env=env, capture_output=True, text=True, check=False)
    for line in (report.stdout.rstrip() or report.stderr.rstrip()).splitlines():
        print(f"    {line}", flush=True)
    print(flush=True)


def _output_dataset(events: list[dict[str, Any]], name: str) -> tuple[str, str] | None:
    for event in events:
        for output in event.get("outputs") or ():
            if output.get("name") == name:
                return str(output["namespace"]), name
    return None


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m demo", description=__doc__.splitlines()[0])
    parser.add_argument("--no-serve", action="store_true", help="stop after the lineage report")
    parser.add_argument("--port", type=int, default=8080, help="port of the Airflow UI (default 8080)")
    parser.add_argument(
        "--home", type=Path, default=REPO / "demo-home", help="where the demo keeps its files"
    )
    args = parser.parse_args(argv)
    for sig in STOP_SIGNALS:
        signal.signal(sig, _stop)

    home = DemoHome(args.home.resolve())
    processes = ProcessGroup()
    s3 = LocalS3()
    progress = Progress(total=len(SAMPLE_RUNS) + 3 + (0 if args.no_serve else 1))
    logs = home.root / "logs"
    try:
        port = free_port(args.port)
        with progress.step(f"preparing Airflow home {home.root} and its metadata database") as step:
            home.reset()
            password = home.admin_password()
            env = home.env(s3_connection="{}", api_port=port)
            if processes.run([airflow_bin(), "db", "migrate"], env, logs / "db-migrate.log") != 0:
                raise DemoError(f"airflow db migrate failed:\n{tail(logs / 'db-migrate.log')}")
        with progress.step("starting local S3 endpoint (moto server)") as step:
            endpoint = s3.start()
            s3.create_bucket(BUCKET)
            env = home.env(s3_connection=s3.airflow_connection(), api_port=port)
            step.detail(
                f"{endpoint}, bucket s3://{BUCKET}; connection aws_default -> endpoint_url {endpoint}"
            )
            step.detail(f"warehouse connection -> DuckDB file {home.warehouse_file}")
        # one Airflow process for every run (demo/dag_batch.py): Airflow is imported once, not 8 times
        batch = DagBatch(processes.start_piped(DagBatch.command(), env))
        for sample in SAMPLE_RUNS:
            with progress.step(sample.title) as step:
                already = len(read_events(home.event_log))
                log = logs / f"{sample.dag_id}-{sample.logical_date}.log"
                argv = dags_test_argv(sample.dag_id, sample.logical_date, sample.conf or None)
                try:
                    code = batch.run(argv, sample.env, log)
                except DagBatchError as error:
                    raise DemoError(f"{error}:\n{tail(log)}") from error
                dag_event = wait_for_dag_run_event(home.event_log, sample.dag_id, already)
                failed = code != 0 or (dag_event is not None and dag_event["eventType"] == "FAIL")
                if failed and not sample.expect_failure:
                    raise DemoError(f"{sample.dag_id} failed (log {log}):\n{tail(log)}")
                if sample.expect_failure and not failed:
                    raise DemoError(f"{sample.dag_id} was meant to fail and did not (log {log})")
                if sample.expect_failure:
                    step.text = "failed, as intended"
                step.detail(task_states(dag_event))
            if sample.what_changed:
                _print_what_changed(home.event_log, env)
        batch.close()
        events = read_events(home.event_log)
        with progress.step(f"lineage report for {MART_TABLE}") as step:
            found = mart_dataset(events)
            if found is None:
                raise DemoError(f"no event names {MART_TABLE} as an output; see {home.event_log}")
            namespace, name = found
            commands = report_commands(home.event_log, namespace, name)
            step.detail(f"{len(events)} OpenLineage events in {home.event_log}")
        if commands is None:
            print("  (the lineage-plus CLI is not installed: no report)", flush=True)
        for command, (_query, what) in zip(commands or [], REPORTS, strict=True):
            print(f"\n  $ lineage-plus {' '.join(command[1:])}    # {what}", flush=True)
            report = subprocess.run(command, env=env, capture_output=True, text=True, check=False)
            for line in (report.stdout.rstrip() or report.stderr.rstrip()).splitlines():
                print(f"    {line}", flush=True)
        if args.no_serve:
            return 0
        with progress.step(f"starting the Airflow UI on port {port}") as step:
            if processes.run([airflow_bin(), "dags", "reserialize"], env, logs / "reserialize.log") != 0:
                raise DemoError(f"airflow dags reserialize failed:\n{tail(logs / 'reserialize.log')}")
            server = processes.start(
                [airflow_bin(), "api-server", "--port", str(port)], env, logs / "api-server.log"
            )
            if not wait_http(f"http://localhost:{port}/api/v2/monitor/health", timeout=120):
                server_log = logs / "api-server.log"
                raise DemoError(f"the api-server did not answer (log {server_log}):\n{tail(server_log)}")
        print(f"\nAirflow is up:   http://localhost:{port}/")
        print(f"Lineage view:    http://localhost:{port}/plugin/lineage  (the Lineage button in the menu)")
        node = urllib.parse.quote(f"dataset:{namespace}:{name}", safe="")
        print(f"The mart:        http://localhost:{port}/lineage-plus/?node={node}")
        print("                 (its upstream graph, with the failed upstream job marked)")
        print(f"Login:           {ADMIN_USER} / {password}")
        print(f"Event log:       {home.event_log}")
        print("Press Ctrl-C to stop (it stops the api-server and the S3 endpoint).", flush=True)
        while server.poll() is None:
            time.sleep(1)
        raise DemoError(f"the api-server stopped (log {logs / 'api-server.log'})")
    except DemoError as error:
        fail(str(error))
        return 1
    except KeyboardInterrupt:
        print("\nstopping ...", flush=True)
        return 130
    except Stopped as stopped:
        print(f"\nstopping ({signal.Signals(stopped.signum).name}) ...", flush=True)
        return 128 + stopped.signum
    finally:
        processes.stop_all()
        s3.stop()


if __name__ == "__main__":
    sys.exit(main())
