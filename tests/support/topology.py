"""Airflow as production runs it, on one machine: the deployment of tests/deploy/test_production_topology.py.

* **PostgreSQL** (:class:`postgres_env.PostgresServer`, on the host's loopback) holds Airflow's metadata
  database and the lineage store (``[lineage_plus] store_url``);
* **Redis** (Debian's ``redis-server``, started here) is the Celery broker and result backend;
* **two API servers** (``api-1``, ``api-2``) with the FAB auth manager, both writing and reading the one
  store: the OpenLineage endpoint, the Lineage view, Airflow's REST API and the execution API;
* the **dag-processor** and the **scheduler** (CeleryExecutor), whose DAG-run events and skip records go
  to ``api-2``'s endpoint (``[lineage_plus] collector_url``);
* **two Celery workers**, each with its own ``AIRFLOW_HOME``, host name (``hostname_callable``), Celery
  queue (``w1``, ``w2``) and spool, each in a network namespace of its own (:mod:`netns`) where it
  reaches only Redis and the API servers: ``worker-1`` sends its lineage to ``api-1``, ``worker-2`` to
  ``api-2``; both use ``api-2``'s execution API, so a test can kill ``api-1`` without touching a task.

Every component's output is in ``<root>/logs/<name>.log``. Nothing here imports Airflow.
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx

from tests.support.fab_airflow import _SETUP, FAB_AUTH_MANAGER
from tests.support.netns import Network, make_network
from tests.support.postgres_env import AirflowDeployment, PostgresServer, free_port, wait_until
from tests.support.processes import retry_processes, stop_gracefully

DEPLOY = Path(__file__).resolve().parents[1] / "deploy"
SUPPORT = Path(__file__).resolve().parent
HOSTS = ("worker-1", "worker-2")
APIS = ("api-1", "api-2")
#: the API server each worker sends its lineage to
SENDS_TO = {"worker-1": "api-1", "worker-2": "api-2"}
INGEST_KEY = "topology-ingest-key-" + "t" * 32
TRANSPORT = "airflow_lineage_plus.transport.EventLogTransport"
#: the DAG of tests/emit whose runs skip three tasks each (the scheduler's skip records)
HA_SKIPS = Path(__file__).resolve().parents[1] / "emit" / "dags" / "ha_skips.py"


@dataclass
class ApiServer:
    name: str
    host: str
    port: int = field(default_factory=free_port)

    @property
    def base(self) -> str:
        return f"http://{self.host}:{self.port}"


class Topology:
    """The components of the module docstring, on ``deployment``'s PostgreSQL."""

    def __init__(self, deployment: AirflowDeployment, network: Network | None) -> None:
        self.deployment = deployment
        self.network = network
        self.gateway = network.gateway if network is not None else "127.0.0.1"
        self.apis = {name: ApiServer(name, self.gateway) for name in APIS}
        self.redis_port = free_port()
        self.redis: subprocess.Popen[bytes] | None = None
        self._tokens: dict[tuple[str, str], str] = {}
        self._specs: dict[str, tuple[tuple[str, ...], dict[str, str], list[str] | None]] = {}
        #: components that exited and were started again (:meth:`revive`), as a supervisor would
        self.revived: list[str] = []

    # -- configuration --------------------------------------------------------------------------
    def _transport(self, spool: Path, api: str) -> str:
        return json.dumps(
            {"type": TRANSPORT, "log_file_path": str(spool), "collector_url": self.api(api).base}
        )

    def common_env(self) -> dict[str, str]:
        broker = f"redis://{self.gateway}:{self.redis_port}/0"
        return {
            "AIRFLOW__CORE__EXECUTOR": "CeleryExecutor",
            "AIRFLOW__CELERY__BROKER_URL": broker,
            "AIRFLOW__CELERY__RESULT_BACKEND": broker.replace("/0", "/1"),
            "AIRFLOW__CELERY__WORKER_CONCURRENCY": "2",
            "AIRFLOW__CORE__AUTH_MANAGER": FAB_AUTH_MANAGER,
            "AIRFLOW__API__SECRET_KEY": "lineage-plus-topology-session-" + "s" * 32,
            "AIRFLOW__FAB__AUTH_RATE_LIMITED": "False",
            "AIRFLOW__CORE__EXECUTION_API_SERVER_URL": f"{self.api('api-2').base}/execution/",
            "AIRFLOW_CONN_LINEAGE_PLUS_COLLECTOR": json.dumps(
                {"conn_type": "generic", "password": INGEST_KEY}
            ),
            "PYTHONPATH": os.pathsep.join(filter(None, [os.environ.get("PYTHONPATH"), str(SUPPORT)])),
            "PATH": os.pathsep.join([str(Path(sys.executable).parent), os.environ.get("PATH", "")]),
            "TOPOLOGY_DBT_PROJECT": str(DEPLOY / "dbt_project"),
        }

    def server_env(self) -> dict[str, str]:
        """The scheduler and the dag-processor: their lineage goes to ``api-2``."""
        spool = self.deployment.root / "server" / "spool.jsonl"
        return {
            "AIRFLOW__OPENLINEAGE__TRANSPORT": self._transport(spool, "api-2"),
            "AIRFLOW__LINEAGE_PLUS__EVENT_LOG_PATH": str(spool),
            "AIRFLOW__LINEAGE_PLUS__COLLECTOR_URL": self.api("api-2").base,
            "AIRFLOW__LOGGING__WORKER_LOG_SERVER_PORT": str(free_port()),
        }

    def worker_env(self, host: str) -> dict[str, str]:
        home = self.home(host)
        return {
            "AIRFLOW_HOME": str(home),
            "AIRFLOW__CORE__HOSTNAME_CALLABLE": "fake_host.hostname",
            "LINEAGE_PLUS_FAKE_HOSTNAME": host,
            "AIRFLOW__OPENLINEAGE__TRANSPORT": self._transport(self.spool(host), SENDS_TO[host]),
            "AIRFLOW__LINEAGE_PLUS__EVENT_LOG_PATH": str(self.spool(host)),
            "AIRFLOW__LINEAGE_PLUS__COLLECTOR_URL": self.api(SENDS_TO[host]).base,
            "AIRFLOW__LINEAGE_PLUS__STORE_URL": "",  # a worker never writes the store itself
            "AIRFLOW__LOGGING__WORKER_LOG_SERVER_PORT": str(free_port()),
            "TOPOLOGY_DBT_TARGET": str(home / "dbt-target"),
            "TOPOLOGY_WAREHOUSE": str(home / "warehouse.duckdb"),
        }

    def api_env(self, name: str) -> dict[str, str]:
        return {"AIRFLOW__API__BASE_URL": self.api(name).base + "/"}

    # -- components -----------------------------------------------------------------------------
    def api(self, name: str) -> ApiServer:
        return self.apis[name]

    def home(self, host: str) -> Path:
        home = self.deployment.root / host
        home.mkdir(exist_ok=True)
        return home

    def spool(self, host: str) -> Path:
        return self.home(host) / "spool.jsonl"

    def start_redis(self) -> None:
        folder = self.deployment.root / "redis"
        folder.mkdir()
        command = [
            "redis-server",
            "--port",
            str(self.redis_port),
            "--bind",
            self.gateway,
            "--dir",
            str(folder),
        ]
        options = ["--save", "", "--appendonly", "no", "--protected-mode", "no"]
        with (self.deployment.logs / "redis.log").open("wb") as out:
            self.redis = subprocess.Popen(
                [*command, *options], stdout=out, stderr=subprocess.STDOUT, start_new_session=True
            )

    def setup_fab(self, readable_dag: str) -> None:
        """FAB's tables, roles and users (tests/support/fab_airflow.py): ``alpha`` reads ``readable_dag``."""
        env = {**self.deployment.env, **self.common_env()}
        proc = subprocess.run(
            [sys.executable, "-c", _SETUP, readable_dag], env=env, capture_output=True, text=True, timeout=600
        )
        assert proc.returncode == 0 and "FAB users ready" in proc.stdout, (
            proc.stdout[-3000:] + proc.stderr[-3000:]
        )

    def start_api(self, name: str) -> None:
        api = self.api(name)
        args = ("api-server", "-H", api.host, "-p", str(api.port), "--workers", "1")
        self._start(name, args, {**self.common_env(), **self.api_env(name)})

    def start_worker(self, host: str) -> None:
        queue = "w" + host.rsplit("-", 1)[1]
        prefix = self.network.prefix(host) if self.network is not None else None
        args = ("celery", "worker", "-H", f"{host}@topology", "-q", f"default,{queue}")
        self._start(host, args, {**self.common_env(), **self.worker_env(host)}, prefix)

    def start(self, readable_dag: str) -> None:
        """Everything, in parallel where it can be: FAB's setup while Redis, the scheduler, the
        dag-processor and the workers start; then the API servers, one after the other; back once all
        answer."""
        self.start_redis()
        setup = threading.Thread(target=self._setup_fab_into, args=(readable_dag,))
        setup.start()
        server = {**self.common_env(), **self.server_env()}
        self._start("dag-processor", ("dag-processor",), server)
        self._start("scheduler", ("scheduler",), server)
        for host in HOSTS:
            self.start_worker(host)
        setup.join()
        if self._setup_error is not None:
            raise self._setup_error
        for name in APIS:  # one after the other: on a database new to them, the FAB auth manager of each
            # adds its permissions to Admin at start, and two at once collide (a duplicate key on
            # ab_permission_view_role, and one exits); a rolling start, as a deployment does one
            self.start_api(name)
            self.wait_for_api(name)
        wait_until(
            lambda: all(self._running(host) and " ready." in self.deployment.log(host) for host in HOSTS),
            300,
            "both Celery workers",
        )

    _setup_error: BaseException | None = None

    def _start(
        self, name: str, args: tuple[str, ...], env: dict[str, str], prefix: list[str] | None = None
    ) -> None:
        self._specs[name] = (args, env, prefix)
        self.deployment.start(name, *args, env=env, prefix=prefix)

    def revive(self, name: str) -> bool:
        """Start ``name`` again if it exited (a scheduler exits when its database goes away; systemd or
        Kubernetes would start it again); whether it had to be."""
        if self.deployment.exited(name) is None:
            return False
        args, env, prefix = self._specs[name]
        self.deployment.start(name, *args, env=env, prefix=prefix)
        self.revived.append(name)
        return True

    def _setup_fab_into(self, readable_dag: str) -> None:
        try:
            self.setup_fab(readable_dag)
        except BaseException as error:  # raised by start()
            self._setup_error = error

    def _running(self, name: str) -> bool:
        self.deployment.assert_running(name)
        return True

    def wait_for_api(self, name: str, timeout: float = 300) -> None:
        url = f"{self.api(name).base}/api/v2/monitor/health"

        def healthy() -> bool:
            self.deployment.assert_running(name)
            with contextlib.suppress(httpx.HTTPError):
                return httpx.get(url, timeout=5).status_code == 200
            return False

        wait_until(healthy, timeout, f"{name} answering")

    def stop(self) -> None:
        self.deployment.stop()
        if self.redis is not None:
            stop_gracefully([self.redis])
        for pid in retry_processes(self.deployment.root):  # each its own session: not in a group above
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)

    def diagnosis(self, lines: int = 25) -> str:
        """What a failed run needs to be understood without its files: each spool's waiting bytes, the
        retry processes, and each component log's last lineage, warning and error lines."""
        from airflow_lineage_plus.store.spool import pending_bytes

        spools = {host: self.spool(host) for host in HOSTS}
        spools["server"] = self.deployment.root / "server" / "spool.jsonl"
        out = ["topology diagnosis:"]
        out += [f"  spool {name}: {pending_bytes(path)} bytes waiting" for name, path in spools.items()]
        out.append(f"  spool retry processes running: {len(retry_processes(self.deployment.root))}")
        marks = ("lineage", "WARNING", "ERROR", "Traceback", "Error")
        for log in sorted(self.deployment.logs.glob("*.log")):
            text = log.read_text(errors="replace").splitlines()
            picked = [line[:300] for line in text if any(mark in line for mark in marks)][-lines:]
            out.append(f"  -- {log.name} ({len(text)} lines, last {len(picked)} of note)")
            out += ["    " + line for line in picked]
        return "\n".join(out)

    # -- asking ---------------------------------------------------------------------------------
    def token(self, user: str, api: str = "api-2") -> str:
        if (user, api) not in self._tokens:
            response = httpx.post(
                f"{self.api(api).base}/auth/token", json={"username": user, "password": user}, timeout=60
            )
            assert response.status_code == 201, response.text
            self._tokens[(user, api)] = response.json()["access_token"]
        return self._tokens[(user, api)]

    def get(self, api: str, path: str, user: str, **params: Any) -> httpx.Response:
        headers = {"Authorization": f"Bearer {self.token(user, api)}"}
        return httpx.get(f"{self.api(api).base}{path}", params=params, headers=headers, timeout=120)

    def trigger(self, dag_id: str) -> str:
        """A new run of ``dag_id`` through Airflow's REST API (``api-2``); its run id."""
        self.deployment.unpause(dag_id)
        response = httpx.post(
            f"{self.api('api-2').base}/api/v2/dags/{dag_id}/dagRuns",
            json={"logical_date": None},
            headers={"Authorization": f"Bearer {self.token('admin')}"},
            timeout=60,
        )
        assert response.status_code == 200, response.text
        return str(response.json()["dag_run_id"])

    def run_state(self, dag_id: str, run_id: str) -> str:
        rows = self.deployment.postgres.query(
            "SELECT state FROM dag_run WHERE dag_id = %s AND run_id = %s", dag_id, run_id
        )
        return str(rows[0][0]) if rows else ""

    def task_states(self, dag_id: str) -> dict[tuple[str, str], str]:
        rows = self.deployment.postgres.query(
            "SELECT run_id, task_id, state FROM task_instance WHERE dag_id = %s", dag_id
        )
        return {(str(run), str(task)): str(state) for run, task, state in rows}

    def task_hosts(self, dag_id: str) -> dict[str, str]:
        rows = self.deployment.postgres.query(
            "SELECT task_id, hostname FROM task_instance WHERE dag_id = %s AND hostname <> ''", dag_id
        )
        return {str(task): str(host) for task, host in rows}

    def stored(self) -> list[bytes]:
        """Every event in the lineage store, as stored."""
        from airflow_lineage_plus.store import LineageStore

        store = LineageStore(self.deployment.postgres.url(), create=False)
        try:
            return store.all_payloads()
        finally:
            store.close()


@contextlib.contextmanager
def topology(dag_files: list[Path], env: dict[str, str]) -> Iterator[Topology]:
    """PostgreSQL, a migrated metadata database, the network; components not started yet."""
    root = Path(tempfile.mkdtemp(prefix="alp-topology-"))
    os.chmod(root, 0o755)
    postgres = PostgresServer(root)
    network = None
    deployment = None
    found = None
    try:
        postgres.start()
        deployment = AirflowDeployment(root, postgres, dag_files, env)
        deployment.airflow("db", "migrate")
        network = make_network(list(HOSTS))
        found = Topology(deployment, network)
        try:
            yield found
        except BaseException:
            print(found.diagnosis())  # shown with the failing test: CI keeps nothing else of the run
            raise
    finally:
        if found is not None:
            found.stop()
        elif deployment is not None:
            deployment.stop()
        if network is not None:
            network.remove()
        postgres.stop()
        if not os.environ.get("LINEAGE_PLUS_KEEP_POSTGRES_ENV"):
            shutil.rmtree(root, ignore_errors=True)
