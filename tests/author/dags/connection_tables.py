"""A task whose datasets are named through an Airflow connection stored in the metadata database."""

from __future__ import annotations

import pendulum
from airflow.sdk import dag, task

from airflow_lineage_plus import ColumnFrom, Field, Input, Output, datasets, lineage

ORDERS = datasets.sql_table("metadata_db_warehouse", "analytics.staging.stg_orders")
DAILY = datasets.sql_table("metadata_db_warehouse", "analytics.marts.fct_daily_orders")


@dag(schedule=None, start_date=pendulum.datetime(2024, 1, 1, tz="UTC"), catchup=False)
def connection_tables() -> None:
    @lineage(
        inputs=[Input(ORDERS, schema=[Field("total_amount_usd", "NUMERIC")])],
        outputs=[
            Output(
                DAILY,
                schema=[Field("total_revenue_usd", "NUMERIC")],
                column_lineage={
                    "total_revenue_usd": [ColumnFrom(ORDERS, "total_amount_usd", subtype="AGGREGATION")]
                },
            )
        ],
    )
    @task
    def fct_daily_orders() -> None:
        pass

    fct_daily_orders()


connection_tables()
