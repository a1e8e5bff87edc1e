"""dbt run by a BashOperator through ``dbt-ol`` (tests/emit/test_dbt_child_runs.py).

``load_staging`` writes ``analytics.staging.stg_orders`` (declared through the ``warehouse`` connection);
``dbt_build`` runs ``dbt-ol build`` on ``tests/emit/dbt_project`` with the environment of
``dbt_lineage_env_templates()``: one model builds, one test of it fails, one model fails, and dbt skips
what depends on them. The test passes the project, the target folder and the warehouse in the environment.
"""

from __future__ import annotations

import os
import shlex

import pendulum
from airflow.providers.openlineage.api.emission_policy import extend_global_openlineage_emission_policy
from airflow.providers.standard.operators.bash import BashOperator
from airflow.sdk import BaseHook, dag, task

from airflow_lineage_plus import Field, LineageMixin, Output, SloTier, lineage
from airflow_lineage_plus import datasets as ds
from airflow_lineage_plus.dbt import dbt_lineage_env_templates

PROJECT = os.environ.get("LINEAGE_TEST_DBT_PROJECT", "/nonexistent")
TARGET = os.environ.get("LINEAGE_TEST_DBT_TARGET", "/nonexistent")
STG_ORDERS = ds.sql_table("warehouse", "analytics.staging.stg_orders")


class DbtBashOperator(LineageMixin, BashOperator):
    """A BashOperator with this package's declarations (the mixin of README "Declare lineage on a task")."""


@dag(
    dag_id="dbt_child_runs", schedule=None, start_date=pendulum.datetime(2024, 6, 1, tz="UTC"), catchup=False
)
def dbt_child_runs() -> None:
    @lineage(outputs=[Output(STG_ORDERS, schema=[Field("order_id", "VARCHAR"), Field("amount", "DECIMAL")])])
    @task
    def load_staging() -> None:
        hook = BaseHook.get_connection("warehouse").get_hook()
        hook.run(
            [
                "CREATE SCHEMA IF NOT EXISTS analytics.staging",
                "CREATE OR REPLACE TABLE analytics.staging.stg_orders "
                "(order_id VARCHAR, order_date DATE, amount DECIMAL(10, 2))",
                "INSERT INTO analytics.staging.stg_orders VALUES ('a', DATE '2024-06-01', 1), "
                "('b', DATE '2024-06-01', 2), ('c', DATE '2024-06-02', 3)",
            ]
        )

    dbt_build = DbtBashOperator(
        task_id="dbt_build",
        # the task's owners and service level: dbt's model jobs carry them too
        lineage_owners=["team:marts"],
        lineage_facets=[SloTier(tier="gold", freshnessMinutes=1560)],
        bash_command=(
            f"dbt-ol build --project-dir {shlex.quote(PROJECT)} --profiles-dir {shlex.quote(PROJECT)} "
            f"--target-path {shlex.quote(TARGET)} --log-path {shlex.quote(TARGET)}/logs"
        ),
        env=dbt_lineage_env_templates(target_path=TARGET),
        append_env=True,
        cwd=PROJECT,
    )
    # dbt reports this task's lineage as child runs: no per-query hook lineage for the task itself
    extend_global_openlineage_emission_policy(dbt_build, hook_lineage=False)
    load_staging() >> dbt_build


dbt_child_runs()
