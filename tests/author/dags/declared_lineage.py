"""Tasks declaring lineage with @lineage and LineageMixin, recording runtime facts; some report their own.

Also every README path: ``SQLExecuteQueryOperator`` with the mixin, reporting its own lineage from its SQL
against a real DuckDB warehouse (``AIRFLOW_CONN_WAREHOUSE``); ``.override()``, ``.partial().expand()``;
``runtime.set_schema`` and ``runtime.record`` with a pandas DataFrame and a pyarrow Table.
"""

from __future__ import annotations

import os
from typing import Any

import pendulum
from airflow.providers.common.sql.operators.sql import SQLExecuteQueryOperator
from airflow.providers.duckdb.hooks.duckdb import DuckDBHook
from airflow.providers.openlineage.extractors import OperatorLineage
from airflow.providers.standard.operators.bash import BashOperator
from airflow.sdk import BaseOperator, dag, task
from openlineage.client.event_v2 import Dataset
from openlineage.client.facet_v2 import schema_dataset

from airflow_lineage_plus import (
    ColumnFrom,
    DataContract,
    Field,
    Input,
    LineageMixin,
    Output,
    OwningTeam,
    SloTier,
    datasets,
    lineage,
    runtime,
)

RAW = datasets.s3("s3://raw-data-lake/orders/date=2024-01-15/part-0000.json")
CUSTOMERS = datasets.postgres("db.internal", "analytics", "public", "customers")
STG = datasets.postgres("db.internal", "analytics", "staging", "stg_orders")
EXTRA = datasets.s3("s3://exports/orders_snapshot/")
DAILY_TOTALS = datasets.sql_table("warehouse", "analytics.staging.daily_totals")  # a DuckDB file
BY_REGION = datasets.s3("s3://exports/by_region/")
FRAME = datasets.s3("s3://exports/frame/")
ARROW = datasets.s3("s3://exports/arrow/")
DUMP = datasets.s3("s3://exports/dump/")

ROWS = [
    {"order_id": 1, "customer_id": 10, "total_amount_usd": 12.5},
    {"order_id": 2, "customer_id": None, "total_amount_usd": 7.0},
    {"order_id": 3, "customer_id": 11, "total_amount_usd": None},
]


class ReportsItsOwn(BaseOperator):
    """An operator implementing the provider's lineage contract itself, like the SQL operators do."""

    def execute(self, context: Any) -> None:
        self.rows_seen = 3

    def get_openlineage_facets_on_start(self) -> OperatorLineage:
        schema = schema_dataset.SchemaDatasetFacet(
            fields=[schema_dataset.SchemaDatasetFacetFields(name="order_id", type="BIGINT")]
        )
        return OperatorLineage(
            inputs=[
                Dataset(
                    namespace="postgres://db.internal:5432",
                    name="analytics.staging.stg_orders",
                    facets={"schema": schema},
                )
            ],
            job_facets={},
        )

    def get_openlineage_facets_on_complete(self, task_instance: Any) -> OperatorLineage:
        return self.get_openlineage_facets_on_start()


class DeclaredReportsItsOwn(LineageMixin, ReportsItsOwn):
    pass


class DeclaredBash(LineageMixin, BashOperator):
    pass


class OpenLineageDuckDBHook(DuckDBHook):
    """DuckDB with the OpenLineage methods the Postgres, Snowflake, ... hooks implement (DuckDB's has none),
    so ``SQLExecuteQueryOperator`` reports lineage parsed from its SQL, with schemas from the database."""

    def get_openlineage_database_info(self, connection: Any) -> Any:
        from airflow.providers.openlineage.sqlparser import DatabaseInfo

        return DatabaseInfo(
            scheme="duckdb",
            authority=os.path.abspath(connection.extra_dejson["database"]),
            database="analytics",
            information_schema_columns=[
                "table_schema",
                "table_name",
                "column_name",
                "ordinal_position",
                "data_type",
            ],
        )

    def get_openlineage_database_dialect(self, connection: Any) -> str:
        return "duckdb"

    def get_openlineage_default_schema(self) -> str:
        return "main"

    def get_sqlalchemy_engine(self, engine_kwargs: Any = None) -> Any:
        return None  # no SQLAlchemy dialect for DuckDB here; the parser does without


class DeclaredSql(LineageMixin, SQLExecuteQueryOperator):
    """The README's classic operator: ``class LoadOrders(LineageMixin, SQLExecuteQueryOperator)``."""

    def get_db_hook(self) -> Any:
        return OpenLineageDuckDBHook(duckdb_conn_id=self.conn_id)


@dag(schedule=None, start_date=pendulum.datetime(2024, 1, 1, tz="UTC"), catchup=False)
def declared_lineage() -> None:
    @lineage(
        inputs=[
            Input(
                RAW,
                schema=[
                    Field("order_id", "BIGINT"),
                    Field("customer_id", "BIGINT"),
                    Field("amount", "DOUBLE"),
                ],
            ),
            Input(CUSTOMERS, schema=[Field("customer_id", "BIGINT"), Field("segment", "TEXT")]),
        ],
        outputs=[
            Output(
                STG,
                schema=[
                    Field("order_id", "BIGINT", "Order key"),
                    Field("customer_id", "BIGINT"),
                    Field("total_amount_usd", "NUMERIC(12,2)", "Order total in USD"),
                ],
                column_lineage={
                    "order_id": [ColumnFrom(RAW, "order_id")],
                    "customer_id": [
                        ColumnFrom(RAW, "customer_id"),
                        ColumnFrom(CUSTOMERS, "customer_id", subtype="JOIN"),
                    ],
                    "total_amount_usd": [
                        ColumnFrom(RAW, "amount", subtype="TRANSFORMATION", description="cents to dollars")
                    ],
                },
                description="Staged orders",
                owners=["team:analytics"],
                tags=["orders"],
                facets=[DataContract(version="2.1.0", status="ACTIVE")],
            )
        ],
        owners=["team:data-eng"],
        description="Loads raw orders into staging",
        sql="INSERT INTO staging.stg_orders SELECT * FROM raw_orders",
        tags=["orders", "staging"],
        facets=[OwningTeam(name="data-eng", contact="#data-eng"), SloTier(tier="gold", freshnessMinutes=60)],
    )
    @task
    def load_stg_orders() -> int:
        runtime.record(STG, ROWS)
        runtime.assertion(
            STG, "order_id_not_null", success=all(r["order_id"] is not None for r in ROWS), column="order_id"
        )
        runtime.assertion(STG, "every_order_has_customer", success=False, column="customer_id")
        runtime.record(RAW, row_count=3, bytes=512)
        runtime.add_output(EXTRA, schema=[("order_id", "BIGINT")])
        return len(ROWS)

    merged = DeclaredReportsItsOwn(
        task_id="merged",
        lineage_inputs=[
            Input(STG, schema=[Field("order_id", "INTEGER"), Field("note", "TEXT")], description="declared")
        ],
        lineage_outputs=[datasets.s3("s3://exports/merged/")],
    )
    bash = DeclaredBash(
        task_id="bash_export",
        bash_command="echo exported",
        lineage_inputs=[STG],
        lineage_outputs=[EXTRA],
        lineage_owners=["team:exports"],
    )

    @lineage(
        inputs=[STG], outputs=[Output(datasets.s3("s3://exports/by_shard/"), schema=[Field("shard", "INT")])]
    )
    @task
    def export_shard(shard: int) -> None:
        by_shard = datasets.s3("s3://exports/by_shard/").with_partition(shard=shard)
        runtime.record(by_shard, [{"shard": shard}] * (shard + 1))

    load_stg_orders() >> [merged, bash] >> export_shard.expand(shard=[0, 1, 2])

    @task
    def prepare_warehouse() -> None:
        import duckdb
        from airflow.sdk import BaseHook

        # straight through duckdb: a hook's run() would add the provider's per-query lineage events
        with duckdb.connect(BaseHook.get_connection("warehouse").extra_dejson["database"]) as db:
            db.execute("CREATE SCHEMA analytics.raw")
            db.execute("CREATE SCHEMA analytics.staging")
            db.execute("CREATE TABLE analytics.raw.orders (order_day DATE, amount DOUBLE)")
            db.execute("INSERT INTO analytics.raw.orders VALUES ('2024-01-15', 2.5), ('2024-01-15', 4.0)")
            db.execute("CREATE TABLE analytics.staging.daily_totals (order_day DATE, total DOUBLE)")

    rollup = DeclaredSql(
        task_id="sql_rollup",
        conn_id="warehouse",
        sql=(
            "INSERT INTO analytics.staging.daily_totals "
            "SELECT order_day, sum(amount) AS total FROM analytics.raw.orders GROUP BY order_day"
        ),
        lineage_outputs=[
            Output(
                DAILY_TOTALS,
                schema=[Field("order_day", "DATE"), Field("total", "DOUBLE"), Field("declared_only", "TEXT")],
                description="Order totals per day",
                owners=["team:finance"],
            )
        ],
    )
    prepare_warehouse() >> rollup

    @lineage(inputs=[STG], outputs=[Output(BY_REGION, schema=[Field("region", "TEXT")])])
    @task
    def export_region(region: str, file_format: str) -> None:
        runtime.record(BY_REGION, [{"region": region, "format": file_format}])

    export_region.override(task_id="export_eu")(region="eu", file_format="csv")
    export_region.partial(file_format="parquet").expand(region=["us", "apac"])

    # a credential in a declared string: the event-log transport redacts it before the event is written
    @lineage(
        inputs=[STG, Input(DUMP, description="copied from postgres://loader:s3cret@db.internal/raw")],
        outputs=[FRAME, ARROW],
    )
    @task
    def profile_frames() -> None:
        import pandas as pd
        import pyarrow as pa

        runtime.record(FRAME, pd.DataFrame({"order_id": [1, 2, 3], "note": ["a", None, "c"]}))
        runtime.set_schema(FRAME, [Field("order_id", "BIGINT"), Field("note", "TEXT")])
        runtime.record(ARROW, pa.table({"shard": [1, None, 3, 4]}))

    profile_frames()


declared_lineage()
