"""Helpers for the skip-state tests: the configuration line, reading skip records, a real scheduler.

``LiveAirflow`` runs a real ``airflow api-server --apps execution`` and ``airflow scheduler`` (LocalExecutor,
the harness's SQLite database) against the DAG folder and event log of an ``airflow_runner`` run, so a
DAG run that ``airflow dags test`` created can be cleared with the real CLI and run again by the real
scheduler. Both processes are stopped (by their own process group) when the fixture ends.
"""

from __future__ import annotations

import itertools
import os
import socket
import subprocess
import sys
import time
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import Any

import pytest

from demo.dag_batch import DagBatch
from tests.support.harness import event_log_transport, read_events
from tests.support.processes import stop_gracefully

SKIP_ENV = {"AIRFLOW__OPENLINEAGE__CUSTOM_RUN_FACETS": "airflow_lineage_plus.skip.run_facets"}
SKIP_KEY = "lineagePlus_skipState"
MODE_KEY = "lineagePlus_executionMode"
DAGS = Path(__file__).resolve().parent / "dags"
AIRFLOW = str(Path(sys.executable).parent / "airflow")


def skip_facet(event: dict[str, Any]) -> dict[str, Any] | None:
    facet: dict[str, Any] | None = event["run"].get("facets", {}).get(SKIP_KEY)
    return facet


def skip_records(events: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The scheduler-side records: ABORT events carrying the skip facet."""
    return [e for e in events if e["eventType"] == "ABORT" and skip_facet(e) is not None]


def task_name(event: dict[str, Any], dag_id: str) -> str:
    return str(event["job"]["name"]).removeprefix(f"{dag_id}.")


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


class LiveAirflow:
    """A real execution API server and scheduler for the DAG folder and event log of one runner DAG."""

    def __init__(self, workdir: Path) -> None:
        self.workdir = workdir
        self._procs: list[subprocess.Popen[bytes]] = []
        self._logs: list[Any] = []
        self._cli_runs = itertools.count()

    def env(self, dag_id: str, extra: dict[str, str] | None = None) -> dict[str, str]:
        log = self.workdir / f"events-{dag_id}.jsonl"
        return {
            **os.environ,
            "AIRFLOW__CORE__DAGS_FOLDER": str(self.workdir / f"dags-{dag_id}"),
            "AIRFLOW__OPENLINEAGE__TRANSPORT": event_log_transport(log),
            "AIRFLOW__LINEAGE_PLUS__EVENT_LOG_PATH": str(log),
            **(extra or {}),
        }

    def cli(self, dag_id: str, *commands: Sequence[str], extra: dict[str, str] | None = None) -> None:
        """Run each ``airflow`` command in turn with this DAG's environment, all in one process (Airflow
        imported once: :class:`demo.dag_batch.DagBatch`); each must succeed. Their output goes to
        ``live-logs/cli-<dag_id>-<n>.log``."""
        logs = self.workdir / "live-logs"
        logs.mkdir(exist_ok=True)
        batch = DagBatch.start(self.env(dag_id, extra), self.workdir)
        try:
            for argv in commands:
                log = logs / f"cli-{dag_id}-{next(self._cli_runs)}.log"
                status = batch.run(argv, {}, log, timeout=300)
                assert status == 0, (
                    f"airflow {' '.join(argv)} ended with {status}:\n{log.read_text()[-3000:]}"
                )
        finally:
            batch.close()

    def events(self, dag_id: str) -> list[dict[str, Any]]:
        return read_events(self.workdir / f"events-{dag_id}.jsonl")

    def run_scheduler_until(
        self,
        dag_id: str,
        done: Callable[[list[dict[str, Any]]], bool],
        extra: dict[str, str] | None = None,
        timeout: float = 300.0,
    ) -> list[dict[str, Any]]:
        """Run api-server + scheduler until ``done(events)``; stop them gracefully; return the events."""
        port = _free_port()
        env = self.env(
            dag_id,
            {
                "AIRFLOW__CORE__EXECUTION_API_SERVER_URL": f"http://127.0.0.1:{port}/execution/",
                "AIRFLOW__API_AUTH__JWT_SECRET": "skip-state-tests-only",
                "AIRFLOW__CORE__EXECUTOR": "LocalExecutor",
                "AIRFLOW__CORE__PARALLELISM": "2",
                "AIRFLOW__SCHEDULER__SCHEDULER_HEARTBEAT_SEC": "1",
                **(extra or {}),
            },
        )
        logs = self.workdir / "live-logs"
        logs.mkdir(exist_ok=True)
        api = self._start(
            ["api-server", "--apps", "execution", "-H", "127.0.0.1", "-p", str(port)], env, logs
        )
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            with socket.socket() as sock:
                if sock.connect_ex(("127.0.0.1", port)) == 0:
                    break
            assert api.poll() is None, (logs / "api-server.log").read_text()
            time.sleep(0.5)
        scheduler = self._start(["scheduler"], env, logs)
        try:
            while time.monotonic() < deadline and not done(self.events(dag_id)):
                assert scheduler.poll() is None, (logs / "scheduler.log").read_text()[-5000:]
                time.sleep(1)
            assert done(self.events(dag_id)), (logs / "scheduler.log").read_text()[-5000:]
        finally:
            self.stop()
        return self.events(dag_id)

    def _start(self, args: list[str], env: dict[str, str], logs: Path) -> subprocess.Popen[bytes]:
        out = (logs / f"{args[0]}.log").open("ab")
        self._logs.append(out)
        proc = subprocess.Popen(
            [AIRFLOW, *args],
            env=env,
            stdout=out,
            stderr=subprocess.STDOUT,
            cwd=self.workdir,
            start_new_session=True,
        )
        self._procs.append(proc)
        return proc

    def stop(self) -> None:
        """SIGTERM each process we started (the scheduler drains its OpenLineage pool), then its group."""
        for proc in reversed(self._procs):  # one by one: the api-server outlives the scheduler
            stop_gracefully([proc])
        self._procs.clear()
        for out in self._logs:
            out.close()
        self._logs.clear()


@pytest.fixture
def live_airflow(airflow_runner: Any) -> Iterator[LiveAirflow]:
    live = LiveAirflow(airflow_runner.workdir)
    try:
        yield live
    finally:
        live.stop()
