"""The marts' dbt project (``dags/dbt/shop``), run from Airflow tasks on the ``warehouse`` connection.

dbt's profile is written for each run from the same Airflow connection the other hops use, so dbt builds
in the warehouse they load, and the tables dbt reads are the datasets those hops wrote (one node each in
the lineage graph). Moving the pipelines stays a change of connection: DuckDB (the demo) and Postgres
(the docker-compose stack) are mapped here.
"""

from __future__ import annotations

import json
import os
import tempfile
from pathlib import Path
from typing import Any

from airflow.sdk import BaseHook

from airflow_lineage_plus.dbt import run_dbt
from lineage_samples.warehouse import WAREHOUSE_CONN_ID

PROJECT_DIR = Path(__file__).resolve().parents[1] / "dbt" / "shop"
PROFILE = "shop"  # profile: in dbt_project.yml
PASSWORD_VARIABLE = "DBT_ENV_SECRET_WAREHOUSE_PASSWORD"  # DBT_ENV_SECRET_*: dbt keeps it out of its logs


def profile_target(connection: Any) -> tuple[dict[str, Any], dict[str, str]]:
    """dbt's target for the warehouse connection, and the environment variables it reads."""
    if connection.conn_type == "duckdb":
        database = connection.extra_dejson.get("database") or connection.host
        return {"type": "duckdb", "path": os.path.abspath(database), "threads": 1}, {}
    if connection.conn_type in {"postgres", "postgresql"}:
        target = {
            "type": "postgres",
            "host": connection.host,
            "port": connection.port or 5432,
            "user": connection.login,
            "password": "{{ env_var('" + PASSWORD_VARIABLE + "') }}",
            "dbname": connection.schema,
            "schema": "public",
            "threads": 1,
        }
        return target, {PASSWORD_VARIABLE: connection.password or ""}
    raise ValueError(
        f"connection {WAREHOUSE_CONN_ID!r} is a {connection.conn_type!r} connection: the sample's dbt profile"
        f" maps duckdb and postgres; add yours in lineage_samples/marts.py (profile_target)"
    )


def build(*, fail_on_purpose: bool = False) -> dict[str, str]:
    """``dbt build`` of the marts (models and tests); dbt's status of each node. Fails the task on error."""
    target, env = profile_target(BaseHook.get_connection(WAREHOUSE_CONN_ID))
    with tempfile.TemporaryDirectory(prefix="shop-dbt-profile-") as profiles_dir:
        # JSON is YAML: the profile needs no YAML library
        profile = {PROFILE: {"target": "warehouse", "outputs": {"warehouse": target}}}
        Path(profiles_dir, "profiles.yml").write_text(json.dumps(profile, indent=2))
        dbt_vars = json.dumps({"fail_on_purpose": fail_on_purpose})
        return run_dbt(
            "build", "--vars", dbt_vars, project_dir=PROJECT_DIR, profiles_dir=profiles_dir, env=env
        )
