"""Declared lineage in three styles, for static lineage tests: ``@lineage``, ``LineageMixin``, plain inlets.

raw orders (S3) -> load_stg_orders -> stg_orders (warehouse connection) -> build_mart (+ fx rates) ->
orders_by_day (warehouse) and its S3 export -> export_report (Assets) -> reports/daily. ``notify``
declares nothing. Every task does
nothing: the lineage comes from the declarations alone, at parse time and at run time alike.
"""

from __future__ import annotations

import pendulum
from airflow.providers.standard.operators.python import PythonOperator
from airflow.sdk import Asset, dag, task

from airflow_lineage_plus import ColumnFrom, Field, LineageMixin, Output, lineage
from airflow_lineage_plus import datasets as ds

RAW = ds.s3("s3://static-lake/orders/")
FX = ds.s3("s3://static-lake/fx/")
STG = ds.sql_table("static_warehouse", "analytics.staging.stg_orders")
MART = ds.sql_table("static_warehouse", "analytics.marts.orders_by_day")
MART_EXPORT = ds.s3("s3://static-lake/marts/orders_by_day/")
REPORT = Asset("s3://static-lake/reports/daily")
SQL = "INSERT INTO analytics.staging.stg_orders SELECT * FROM raw -- via postgres://loader:s3cr3t-pw@db:5432/raw"


class BuildWithLineage(LineageMixin, PythonOperator):
    """A classic operator declaring its lineage through the mixin."""


def _nothing() -> None:
    pass


@dag(dag_id="static_orders", schedule=None, start_date=pendulum.datetime(2024, 1, 1, tz="UTC"), catchup=False)
def static_orders() -> None:
    @lineage(
        inputs=[RAW],
        outputs=[
            Output(
                STG,
                schema=[Field("order_id", "BIGINT"), Field("amount_usd", "DECIMAL(12,2)")],
                column_lineage={"order_id": [ColumnFrom(RAW, "order_id")]},
                owners=["team:orders"],
            )
        ],
        owners=["team:orders"],
        description="Loads raw orders into staging",
        sql=SQL,
    )
    @task
    def load_stg_orders() -> None:
        pass

    mart = BuildWithLineage(
        task_id="build_mart",
        python_callable=_nothing,
        lineage_inputs=[STG, FX],
        lineage_outputs=[
            Output(MART, schema=[Field("day", "DATE"), Field("revenue_usd", "DECIMAL(14,2)")]),
            MART_EXPORT,
        ],
        lineage_owners=["team:analytics"],
    )
    report = PythonOperator(
        task_id="export_report", python_callable=_nothing, inlets=[Asset(MART_EXPORT.uri)], outlets=[REPORT]
    )
    notify = PythonOperator(task_id="notify", python_callable=_nothing)

    load_stg_orders() >> mart >> report >> notify


static_orders()
