"""Production-shaped Airflow for tests and benchmarks: PostgreSQL, real api-server, dag-processor, schedulers.

:class:`PostgresServer` runs a throwaway PostgreSQL cluster from Debian's ``postgresql`` package (installed
by ``scripts/system-deps.sh``): ``initdb`` into a temporary directory, ``pg_ctl start`` on a free port of
127.0.0.1 (trust authentication, nothing durable: ``fsync=off``), ``pg_ctl stop`` at the end. As root it
runs the server as the package's ``postgres`` user (PostgreSQL refuses to run as root).

:class:`AirflowDeployment` puts Airflow's metadata database on it (a real ``airflow db migrate``) and starts
real components, each its own process group and log file: ``api-server``, ``dag-processor`` and any number of
``scheduler`` processes (LocalExecutor), with the OpenLineage provider writing through the recommended
event-log transport. Nothing here imports Airflow, so the test process keeps its own (SQLite) harness
configuration; the driver talks to the database with psycopg.
"""

from __future__ import annotations

import contextlib
import json
import os
import pwd
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

from tests.support.processes import stop_gracefully

AIRFLOW = str(Path(sys.executable).parent / "airflow")
MISSING = (
    "PostgreSQL's server programs (Debian package `postgresql`) are not installed: run "
    "`bash scripts/system-deps.sh` (it installs them with apt-get), or set LINEAGE_PLUS_PG_BINDIR to the "
    "directory holding initdb and pg_ctl."
)


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def postgres_bindir() -> Path:
    """The directory of ``initdb``/``pg_ctl``: Debian keeps them in /usr/lib/postgresql/<major>/bin."""
    configured = os.environ.get("LINEAGE_PLUS_PG_BINDIR")
    if configured:
        return Path(configured)
    found = sorted(
        Path("/usr/lib/postgresql").glob("*/bin/initdb"), key=lambda p: int(p.parts[-3]), reverse=True
    )
    if found:
        return found[0].parent
    on_path = shutil.which("initdb")
    if on_path:
        return Path(on_path).resolve().parent
    raise RuntimeError(MISSING)


def wait_until(condition: Callable[[], Any], timeout: float, what: str, poll: float = 0.5) -> Any:
    """Poll ``condition`` until it returns something truthy; fail naming ``what`` after ``timeout`` s."""
    deadline = time.monotonic() + timeout
    while True:
        value = condition()
        if value:
            return value
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out after {timeout:g} s waiting for {what}")
        time.sleep(poll)


class PostgresServer:
    """A PostgreSQL cluster in ``root/pg``, listening on 127.0.0.1:``port``, database ``airflow``."""

    def __init__(self, root: Path) -> None:
        self.bindir = postgres_bindir()
        self.data = root / "pg"
        self.port = free_port()
        self.user = None if os.geteuid() != 0 else _server_user()
        self.started = False

    def _run(self, *args: str, timeout: float = 120) -> None:
        proc = subprocess.run(
            [str(self.bindir / args[0]), *args[1:]],
            capture_output=True,
            text=True,
            timeout=timeout,
            user=self.user,
            cwd="/",
        )
        if proc.returncode != 0:
            raise RuntimeError(f"{args[0]} failed: {proc.stdout}{proc.stderr}")

    def __enter__(self) -> PostgresServer:
        """The cluster started (:meth:`start`); stopped when the block ends."""
        self.start()
        return self

    def __exit__(self, *_: object) -> None:
        self.stop()

    def start(self) -> None:
        self.data.mkdir(mode=0o700)
        if self.user is not None:
            os.chmod(self.data.parent, 0o755)
            shutil.chown(self.data, self.user)
        self._run("initdb", "-D", str(self.data), "-U", "postgres", "--auth=trust", "-E", "UTF8", "--no-sync")
        self.resume()
        connection = self.connect("postgres")
        try:
            connection.autocommit = True
            connection.cursor().execute("CREATE DATABASE airflow")
        finally:
            connection.close()

    def resume(self) -> None:
        """Start the cluster made by :meth:`start` again after :meth:`stop`, with its data, on the same port
        (:meth:`stop` is ``-m fast``: open connections are cut, as in a restart)."""
        options = (
            f"-c listen_addresses=127.0.0.1 -c port={self.port} -c unix_socket_directories={self.data} "
            "-c fsync=off -c synchronous_commit=off -c full_page_writes=off -c max_connections=300 "
            "-c shared_buffers=64MB"
        )
        self._run(
            "pg_ctl", "-D", str(self.data), "-o", options, "-l", str(self.data / "server.log"), "-w", "start"
        )
        self.started = True

    def stop(self) -> None:
        if self.started:
            self.started = False
            self._run("pg_ctl", "-D", str(self.data), "-m", "fast", "-w", "stop")

    def url(self, database: str = "airflow") -> str:
        return f"postgresql+psycopg://postgres@127.0.0.1:{self.port}/{database}"

    def connect(self, database: str = "airflow") -> Any:
        import psycopg

        return psycopg.connect(host="127.0.0.1", port=self.port, user="postgres", dbname=database)

    def query(self, sql: str, *params: Any) -> list[tuple[Any, ...]]:
        """Run one statement in a transaction of its own and return its rows."""
        with self.connect() as connection, connection.cursor() as cursor:
            cursor.execute(sql, params)
            return list(cursor.fetchall()) if cursor.description else []

    def server_log(self) -> str:
        path = self.data / "server.log"
        return path.read_text(errors="replace") if path.exists() else ""


def _server_user() -> str:
    try:
        return pwd.getpwnam("postgres").pw_name
    except KeyError:
        raise RuntimeError(
            "running as root, and there is no `postgres` user to run the server: " + MISSING
        ) from None


class AirflowDeployment:
    """Airflow components on a :class:`PostgresServer`, sharing one AIRFLOW_HOME-less configuration."""

    def __init__(
        self, root: Path, postgres: PostgresServer, dag_files: list[Path], env: dict[str, str]
    ) -> None:
        self.root = root
        self.postgres = postgres
        self.dags = root / "dags"
        self.logs = root / "logs"
        self.event_log = root / "events.jsonl"
        self.api_port = free_port()
        self.dags.mkdir()
        self.logs.mkdir()
        for dag_file in dag_files:
            shutil.copy(dag_file, self.dags / dag_file.name)
        self.env = {**_without_airflow_settings(os.environ), **self._settings(), **env}
        self._procs: dict[str, subprocess.Popen[bytes]] = {}

    def _settings(self) -> dict[str, str]:
        transport = {
            "type": "airflow_lineage_plus.transport.EventLogTransport",
            "log_file_path": str(self.event_log),  # the spool
        }
        return {
            "AIRFLOW_HOME": str(self.root / "home"),
            "AIRFLOW__DATABASE__SQL_ALCHEMY_CONN": self.postgres.url(),
            "AIRFLOW__CORE__EXECUTOR": "LocalExecutor",
            "AIRFLOW__CORE__PARALLELISM": "4",
            "AIRFLOW__CORE__LOAD_EXAMPLES": "False",
            "AIRFLOW__CORE__DAGS_FOLDER": str(self.dags),
            "AIRFLOW__CORE__DAGS_ARE_PAUSED_AT_CREATION": "True",
            "AIRFLOW__CORE__EXECUTION_API_SERVER_URL": f"http://127.0.0.1:{self.api_port}/execution/",
            "AIRFLOW__API_AUTH__JWT_SECRET": "postgres-environment-tests-only-" + "0" * 40,
            "AIRFLOW__SCHEDULER__SCHEDULER_HEARTBEAT_SEC": "1",
            "AIRFLOW__DAG_PROCESSOR__REFRESH_INTERVAL": "5",
            "AIRFLOW__LOGGING__LOGGING_LEVEL": "INFO",
            "AIRFLOW__OPENLINEAGE__NAMESPACE": "test-airflow",
            "AIRFLOW__OPENLINEAGE__TRANSPORT": json.dumps(transport),
            "AIRFLOW__OPENLINEAGE__CUSTOM_RUN_FACETS": "airflow_lineage_plus.skip.run_facets",
            "AIRFLOW__LINEAGE_PLUS__EVENT_LOG_PATH": str(self.event_log),
            # the lineage store in Airflow's own metadata database, as across machines
            "AIRFLOW__LINEAGE_PLUS__STORE_URL": self.postgres.url(),
            "OPENLINEAGE_CLIENT_LOGGING": "WARNING",
        }

    def airflow(self, *args: str, env: dict[str, str] | None = None, timeout: float = 600) -> str:
        """Run one ``airflow`` command to completion; fail with its output if it fails."""
        proc = subprocess.run(
            [AIRFLOW, *args],
            env={**self.env, **(env or {})},
            capture_output=True,
            text=True,
            timeout=timeout,
            cwd=self.root,
        )
        assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
        return proc.stdout

    def start(
        self, name: str, *args: str, env: dict[str, str] | None = None, prefix: list[str] | None = None
    ) -> None:
        """Start a long-running component (``scheduler``, ...); its output goes to ``logs/<name>.log``.
        ``prefix``: a command that runs it (``ip netns exec <namespace>``: on another "machine")."""
        with (self.logs / f"{name}.log").open("ab") as out:
            self._procs[name] = subprocess.Popen(
                [*(prefix or []), AIRFLOW, *args],
                env={**self.env, **(env or {})},
                stdout=out,
                stderr=subprocess.STDOUT,
                cwd=self.root,
                start_new_session=True,
            )

    def start_api_server(self, apps: str = "execution") -> None:
        """The api-server; by default only its execution API (what tasks talk to), the cheapest to start."""
        self.start("api-server", "api-server", "--apps", apps, "-H", "127.0.0.1", "-p", str(self.api_port))

    def wait_for_api_server(self, timeout: float = 180) -> None:
        def healthy() -> bool:
            self.assert_running("api-server")
            with contextlib.suppress(OSError):
                url = f"http://127.0.0.1:{self.api_port}/execution/health"
                with urllib.request.urlopen(url, timeout=5) as response:
                    return bool(response.status == 200)
            return False

        wait_until(healthy, timeout, "the api-server's execution API health endpoint")

    def wait_for_dags(self, dag_ids: list[str], timeout: float = 180) -> None:
        def parsed() -> bool:
            for name in self._procs:
                self.assert_running(name)
            rows = self.postgres.query("SELECT dag_id FROM dag WHERE dag_id = ANY(%s)", dag_ids)
            return {r[0] for r in rows} == set(dag_ids)

        wait_until(parsed, timeout, f"the dag-processor to parse {dag_ids}")

    def unpause(self, dag_id: str) -> None:
        """Unpause a DAG the way the API does it: the scheduler reads ``dag.is_paused``."""
        self.postgres.query("UPDATE dag SET is_paused = false WHERE dag_id = %s RETURNING dag_id", dag_id)

    def pid(self, name: str) -> int:
        return self._procs[name].pid

    def exited(self, name: str) -> int | None:
        """The exit code of a component that stopped, None while it runs."""
        return self._procs[name].poll()

    def assert_running(self, name: str) -> None:
        proc = self._procs[name]
        assert proc.poll() is None, f"{name} exited with {proc.returncode}:\n{self.log(name)[-5000:]}"

    def log(self, name: str) -> str:
        path = self.logs / f"{name}.log"
        return path.read_text(errors="replace") if path.exists() else ""

    def events(self) -> list[dict[str, Any]]:
        """The events in the lineage store (Airflow's metadata database), then any still in the spool."""
        from airflow_lineage_plus.exceptions import StoreUnavailable
        from airflow_lineage_plus.store import LineageStore

        stored: list[bytes] = []
        try:
            store = LineageStore(self.postgres.url(), create=False)
        except StoreUnavailable:  # no event stored yet: the tables are made by the first write
            store = None
        if store is not None:
            try:
                stored = store.all_payloads()
            finally:
                store.close()
        known = set(stored)
        spooled = self.event_log.read_bytes().splitlines() if self.event_log.exists() else []
        return [
            json.loads(raw)
            for raw in stored + [line for line in spooled if line.strip() and line not in known]
        ]

    def stop(self, *names: str) -> None:
        """Stop the named components (all if none) at once: SIGTERM, wait, then their process groups."""
        stop_gracefully(
            [self._procs.pop(name) for name in (names or list(self._procs)) if name in self._procs]
        )

    def kill(self, name: str) -> None:
        """SIGKILL a component's whole process group, as a machine that dies: nothing is drained."""
        proc = self._procs.pop(name)
        with contextlib.suppress(ProcessLookupError):
            os.killpg(proc.pid, signal.SIGKILL)
        proc.wait(timeout=30)

    def error_lines(self, name: str) -> list[str]:
        """Lines of a component's log at level error or critical, and each traceback with its lines."""
        found: list[str] = []
        in_traceback = False
        for line in self.log(name).splitlines():
            if "Traceback (most recent call last)" in line:
                in_traceback = True
            elif in_traceback and line[:4].isdigit():  # the next timestamped log line ends it
                in_traceback = False
            if in_traceback or "[error" in line or "[critical" in line:
                found.append(line)
        return found


def add_log_history(connection: Any, dag_id: str) -> None:
    """A year of daily runs of a 30-task DAG in the ``log`` table (three rows per task instance), analyzed.

    The audit log of a long-lived deployment, for query plans: without it PostgreSQL plans for a tiny table.
    """
    connection.execute(
        "INSERT INTO log (dttm, dag_id, task_id, map_index, event, run_id, try_number, extra) "
        "SELECT now(), %s, 'task_' || t, -1, e, 'scheduled__history_' || r, 1, '{}' "
        "FROM generate_series(1, 365) r, generate_series(1, 30) t, "
        "unnest(ARRAY['running', 'success', 'cli_task_run']) e",
        (dag_id,),
    )
    connection.execute("ANALYZE log")


def _without_airflow_settings(environ: Any) -> dict[str, str]:
    """The environment minus Airflow and OpenLineage settings (the test process's own harness)."""
    return {k: v for k, v in environ.items() if not k.startswith(("AIRFLOW", "OPENLINEAGE"))}


@contextlib.contextmanager
def postgres_airflow(dag_files: list[Path], env: dict[str, str] | None = None) -> Iterator[AirflowDeployment]:
    """PostgreSQL + a migrated metadata database + the deployment object (components not started yet)."""
    root = Path(tempfile.mkdtemp(prefix="alp-postgres-"))
    postgres = PostgresServer(root)
    deployment = None
    try:
        postgres.start()
        deployment = AirflowDeployment(root, postgres, dag_files, env or {})
        deployment.airflow("db", "migrate")
        yield deployment
    finally:
        if deployment is not None:
            deployment.stop()
        postgres.stop()
        if not os.environ.get("LINEAGE_PLUS_KEEP_POSTGRES_ENV"):  # set it to look at the logs afterwards
            shutil.rmtree(root, ignore_errors=True)
