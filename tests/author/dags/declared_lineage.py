"""Tasks declaring lineage with @lineage and LineageMixin, recording runtime facts; one reports its own."""

from __future__ import annotations

from typing import Any

import pendulum
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


declared_lineage()
