"""Two tasks writing outputs under a DataContract: one breaks it, one changes its schema compatibly."""

from __future__ import annotations

import pendulum
from airflow.sdk import dag, task

from airflow_lineage_plus import DataContract, Field, Output, datasets, lineage, runtime

ORDERS = datasets.s3("s3://curated/orders/")
CUSTOMERS = datasets.s3("s3://curated/customers/")

ORDERS_SCHEMA = [
    Field("order_id", "BIGINT", nullable=False),
    Field("amount_usd", "DECIMAL(12,2)"),
    Field("coupon_code", "VARCHAR"),
]
CUSTOMERS_SCHEMA = [Field("customer_id", "INTEGER", nullable=False), Field("email", "VARCHAR(128)")]


@dag(schedule=None, start_date=pendulum.datetime(2024, 1, 1, tz="UTC"), catchup=False)
def contract_outputs() -> None:
    @lineage(outputs=[Output(ORDERS, schema=ORDERS_SCHEMA, facets=[DataContract(version="2.1.0")])])
    @task
    def write_orders() -> None:
        # the order service dropped coupon_code, narrowed the id and sends an order without one
        runtime.set_schema(ORDERS, [("order_id", "INTEGER"), ("amount_usd", "DECIMAL(12,2)")])
        runtime.record(ORDERS, [{"order_id": 1, "amount_usd": 9.5}, {"order_id": None, "amount_usd": 3}])

    @lineage(outputs=[Output(CUSTOMERS, schema=CUSTOMERS_SCHEMA, facets=[DataContract(version="1.0.0")])])
    @task
    def write_customers() -> None:
        # compatible: a wider id, an unbounded e-mail, one column added
        runtime.set_schema(
            CUSTOMERS, [("customer_id", "BIGINT"), ("email", "VARCHAR"), ("signed_up_at", "TIMESTAMP")]
        )
        runtime.record(CUSTOMERS, [{"customer_id": 7, "email": None, "signed_up_at": "2024-01-01"}])

    write_orders()
    write_customers()


contract_outputs()
