"""The Cosmos recipe of docs/dbt.md (tests/samples/test_dbt_cosmos_recipe.py).

``load_staging`` writes the staging tables the sample dbt project (``dags/dbt/shop``) reads, declared through
the ``warehouse`` connection; a Cosmos ``DbtTaskGroup`` (``ExecutionMode.LOCAL``) builds the project, one
Airflow task per model and per model's tests. The test passes the project and the profile file.
"""

from __future__ import annotations

import os

import duckdb
import pendulum
from airflow.sdk import BaseHook, dag, task
from cosmos import DbtTaskGroup, ExecutionConfig, ProfileConfig, ProjectConfig, RenderConfig
from cosmos.constants import ExecutionMode, LoadMode, TestBehavior

from airflow_lineage_plus import Output, lineage
from airflow_lineage_plus import datasets as ds

STG_ORDERS = ds.sql_table("warehouse", "analytics.staging.stg_orders")
STG_CONTACTS = ds.sql_table("warehouse", "analytics.staging.stg_contacts")
STAGING = [
    "CREATE SCHEMA IF NOT EXISTS analytics.staging",
    "CREATE OR REPLACE TABLE analytics.staging.stg_orders (order_id VARCHAR, customer_id VARCHAR, "
    "order_date DATE, status VARCHAR, total_amount_usd DECIMAL(12, 2))",
    "INSERT INTO analytics.staging.stg_orders VALUES ('o1', 'c1', DATE '2024-06-01', 'completed', 10), "
    "('o2', 'c2', DATE '2024-06-01', 'completed', 20)",
    "CREATE OR REPLACE TABLE analytics.staging.stg_contacts (contact_id VARCHAR, account_id VARCHAR)",
    "INSERT INTO analytics.staging.stg_contacts VALUES ('c1', 'a1')",
]


@dag(dag_id="dbt_cosmos", schedule=None, start_date=pendulum.datetime(2024, 6, 1, tz="UTC"), catchup=False)
def dbt_cosmos() -> None:
    @lineage(outputs=[Output(STG_ORDERS), Output(STG_CONTACTS)])
    @task
    def load_staging() -> None:
        # duckdb itself, not the SQL hook: under `airflow dags test` (one process) the provider would
        # report the hook's queries as query jobs of the next task that has no lineage at its START
        database = BaseHook.get_connection("warehouse").extra_dejson["database"]
        with duckdb.connect(database) as db:
            for statement in STAGING:
                db.execute(statement)

    marts = DbtTaskGroup(
        group_id="marts",
        project_config=ProjectConfig(os.environ.get("COSMOS_TEST_PROJECT", "/nonexistent")),
        profile_config=ProfileConfig(
            profile_name="shop",
            target_name="warehouse",
            profiles_yml_filepath=os.environ.get("COSMOS_TEST_PROFILES", "/nonexistent/profiles.yml"),
        ),
        execution_config=ExecutionConfig(execution_mode=ExecutionMode.LOCAL),
        # CUSTOM: Cosmos reads the project's files itself (no `dbt ls` while parsing); BUILD: each model's
        # task runs `dbt build` of it, its tests included
        render_config=RenderConfig(load_method=LoadMode.CUSTOM, test_behavior=TestBehavior.BUILD),
    )
    load_staging() >> marts


dbt_cosmos()
