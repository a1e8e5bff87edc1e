"""A real ``airflow api-server`` with the FAB auth manager, real roles and users, over a recorded event log.

One process creates FAB's tables, roles and users (the FAB security manager's own API, as its CLI does,
in ~25 s instead of ~20 s per CLI command); then the API server starts (16-50 s here). Tests share one
server per session (``tests/ui/conftest.py``: ``fab_airflow``).

Users (password = user name):

* ``admin`` (FAB's Admin) and ``viewer`` (FAB's Viewer): read every DAG;
* ``alpha`` (role ``AlphaReader``): FAB's Viewer minus "DAGs", plus read on ``DAG:<alpha DAG>`` and on
  Plugins (the Lineage button comes from ``/api/v2/plugins``);
* ``nodags`` (role ``NoDags``): may sign in, reads no DAG;
* ``writer`` (role ``LineageWriter``): only ``can_create`` on ``Lineage Plus Ingest``, the permission that
  lets a user post to the OpenLineage endpoint (docs/collector.md).
"""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path

import httpx

from tests.support.servers import stop, wait_until_serving

FAB_AUTH_MANAGER = "airflow.providers.fab.auth_manager.fab_auth_manager.FabAuthManager"
USERS = ("admin", "viewer", "alpha", "nodags", "writer")

_SETUP = """
import sys
from airflow.providers.fab.auth_manager.cli_commands.utils import get_application_builder

readable_dag = sys.argv[1]
with get_application_builder() as appbuilder:  # creates FAB's tables and default roles when missing
    sm = appbuilder.sm
    viewer = {(p.action.name, p.resource.name) for p in sm.find_role("Viewer").permissions}
    one_dag = sorted(viewer - {("can_read", "DAGs")}) + [
        ("can_read", "DAG:" + readable_dag), ("can_read", "Plugins"), ("menu_access", "Plugins")]
    sm.bulk_sync_roles([{"role": "AlphaReader", "perms": one_dag},
                        {"role": "NoDags", "perms": [("can_read", "Website")]},
                        # docs/collector.md: the one permission that lets a user write lineage
                        {"role": "LineageWriter", "perms": [("can_create", "Lineage Plus Ingest")]}])
    for name, role in [("admin", "Admin"), ("viewer", "Viewer"), ("alpha", "AlphaReader"),
                       ("nodags", "NoDags"), ("writer", "LineageWriter")]:
        if not sm.find_user(username=name):
            sm.add_user(name, name, "Test", name + "@example.org", sm.find_role(role), name)
print("FAB users ready")
"""


@dataclass
class FabAirflow:
    """A running API server with FAB; ``get`` asks it as one of :data:`USERS` (Bearer JWT)."""

    base: str
    log: Path
    env: dict[str, str]
    tokens: dict[str, str] = field(default_factory=dict)

    def token(self, user: str) -> str:
        if user not in self.tokens:
            response = httpx.post(
                f"{self.base}/auth/token", json={"username": user, "password": user}, timeout=60
            )
            assert response.status_code == 201, response.text
            self.tokens[user] = response.json()["access_token"]
        return self.tokens[user]

    def get(self, path: str, user: str | None, **params: object) -> httpx.Response:
        headers = {"Authorization": f"Bearer {self.token(user)}"} if user else {}
        return httpx.get(f"{self.base}{path}", params=params, headers=headers, timeout=60)

    def post(self, path: str, user: str | None, body: bytes) -> httpx.Response:
        headers = {"Content-Type": "application/json"}
        if user:
            headers["Authorization"] = f"Bearer {self.token(user)}"
        return httpx.post(f"{self.base}{path}", content=body, headers=headers, timeout=60)


def fab_env(base_env: dict[str, str], event_log: Path, port: int) -> dict[str, str]:
    return {
        **base_env,
        "AIRFLOW__CORE__AUTH_MANAGER": FAB_AUTH_MANAGER,
        "AIRFLOW__API_AUTH__JWT_SECRET": "lineage-plus-fab-tests-" + "j" * 64,
        "AIRFLOW__API__SECRET_KEY": "lineage-plus-fab-tests-session-" + "s" * 32,
        "AIRFLOW__FAB__AUTH_RATE_LIMITED": "False",  # the login form allows 5 logins in 40 s per address
        "AIRFLOW__API__BASE_URL": f"http://127.0.0.1:{port}/",
        "AIRFLOW__LINEAGE_PLUS__EVENT_LOG_PATH": str(event_log),
    }


@contextmanager
def fab_airflow(workdir: Path, event_log: Path, readable_dag: str, port: int) -> Iterator[FabAirflow]:
    """Users and roles created, then an API server started with FAB; stopped on exit."""
    env = fab_env(dict(os.environ), event_log, port)
    airflow_bin = Path(sys.executable).parent
    setup = subprocess.run(
        [sys.executable, "-c", _SETUP, readable_dag], env=env, capture_output=True, text=True, timeout=600
    )
    assert setup.returncode == 0 and "FAB users ready" in setup.stdout, (
        setup.stdout[-3000:] + setup.stderr[-3000:]
    )
    log = workdir / "fab-api-server.log"
    with log.open("wb") as output:
        proc = subprocess.Popen(
            [
                str(airflow_bin / "airflow"),
                "api-server",
                "--host",
                "127.0.0.1",
                "--port",
                str(port),
                "--workers",
                "1",
            ],
            env=env,
            stdout=output,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
        try:
            wait_until_serving(f"http://127.0.0.1:{port}/api/v2/monitor/health", proc)
            yield FabAirflow(base=f"http://127.0.0.1:{port}", log=log, env=env)
        finally:
            stop(proc)
