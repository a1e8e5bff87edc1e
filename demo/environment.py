"""The demo's Airflow installation: where it lives and the environment every ``airflow`` command gets.

Everything sits under ``demo-home/`` in the repository (git-ignored). Connections are environment
variables (``AIRFLOW_CONN_*``), so the DAG code reads the same connection ids as in production.
"""

from __future__ import annotations

import json
import os
import secrets
from dataclasses import dataclass
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
DAGS = REPO / "dags"
OPENLINEAGE_NAMESPACE = "demo-airflow"
ADMIN_USER = "admin"


def warehouse_connection(database_file: Path) -> str:
    """``AIRFLOW_CONN_WAREHOUSE`` for the embedded warehouse: a DuckDB file named for the database."""
    return json.dumps({"conn_type": "duckdb", "host": "localhost", "extra": {"database": str(database_file)}})


def skip_facets_available() -> bool:
    """Whether the package's skip-state run facets (``airflow_lineage_plus.skip.run_facets``) exist."""
    try:
        from airflow_lineage_plus import skip
    except ImportError:
        return False
    return callable(getattr(skip, "run_facets", None))


@dataclass(frozen=True)
class DemoHome:
    """The demo's ``AIRFLOW_HOME`` and the files in it."""

    root: Path

    @property
    def airflow_home(self) -> Path:
        return self.root / "airflow"

    @property
    def event_log(self) -> Path:
        return self.root / "lineage" / "events.jsonl"

    @property
    def warehouse_file(self) -> Path:
        # DuckDB names the database after the file: analytics.staging.stg_orders resolves in it.
        return self.root / "warehouse" / "analytics.duckdb"

    @property
    def passwords_file(self) -> Path:
        return self.airflow_home / "simple_auth_manager_passwords.json"

    def reset(self) -> None:
        """Start from nothing: a fresh metadata database, event log and warehouse on every demo run."""
        import shutil

        for path in (self.airflow_home, self.event_log.parent, self.warehouse_file.parent):
            shutil.rmtree(path, ignore_errors=True)
            path.mkdir(parents=True)

    def admin_password(self) -> str:
        """The password of ``admin`` for the simple auth manager, made once and kept in its file."""
        if self.passwords_file.exists():
            return str(json.loads(self.passwords_file.read_text())[ADMIN_USER])
        password = secrets.token_urlsafe(12)
        self.passwords_file.parent.mkdir(parents=True, exist_ok=True)
        self.passwords_file.write_text(json.dumps({ADMIN_USER: password}) + "\n")
        return password

    def env(self, s3_connection: str, api_port: int = 8080) -> dict[str, str]:
        """The environment of every ``airflow`` command the demo runs."""
        home = self.airflow_home
        env = {
            **os.environ,
            "AIRFLOW_HOME": str(home),
            "AIRFLOW__CORE__DAGS_FOLDER": str(DAGS),
            "AIRFLOW__CORE__LOAD_EXAMPLES": "False",
            "AIRFLOW__DATABASE__SQL_ALCHEMY_CONN": f"sqlite:///{home / 'airflow.db'}",
            "AIRFLOW__CORE__EXECUTION_API_SERVER_URL": f"http://localhost:{api_port}/execution/",
            "AIRFLOW__API__PORT": str(api_port),
            "AIRFLOW__API__BASE_URL": f"http://localhost:{api_port}",
            "AIRFLOW__CORE__AUTH_MANAGER": (
                "airflow.api_fastapi.auth.managers.simple.simple_auth_manager.SimpleAuthManager"
            ),
            "AIRFLOW__CORE__SIMPLE_AUTH_MANAGER_USERS": f"{ADMIN_USER}:admin",
            "AIRFLOW__CORE__SIMPLE_AUTH_MANAGER_PASSWORDS_FILE": str(self.passwords_file),
            "AIRFLOW__LOGGING__LOGGING_LEVEL": "WARNING",
            "AIRFLOW__OPENLINEAGE__NAMESPACE": OPENLINEAGE_NAMESPACE,
            # the README's recommended transport: size limits and redaction, each event into the lineage
            # store beside the event log (events.db), the log its spool
            "AIRFLOW__OPENLINEAGE__TRANSPORT": json.dumps(
                {
                    "type": "airflow_lineage_plus.transport.EventLogTransport",
                    "log_file_path": str(self.event_log),
                }
            ),
            # the README's recommendation: each task event sent from a thread of the task's process
            "AIRFLOW__OPENLINEAGE__EXECUTE_IN_THREAD": "True",
            "AIRFLOW__LINEAGE_PLUS__EVENT_LOG_PATH": str(self.event_log),
            "AIRFLOW_CONN_AWS_DEFAULT": s3_connection,
            "AIRFLOW_CONN_WAREHOUSE": warehouse_connection(self.warehouse_file),
            "OPENLINEAGE_CLIENT_LOGGING": "WARNING",
            "PYTHONPATH": os.pathsep.join(p for p in (str(DAGS), os.environ.get("PYTHONPATH", "")) if p),
        }
        if skip_facets_available():
            env["AIRFLOW__OPENLINEAGE__CUSTOM_RUN_FACETS"] = "airflow_lineage_plus.skip.run_facets"
        return env
