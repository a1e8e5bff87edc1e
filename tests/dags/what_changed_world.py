"""Two small chains whose runs change on purpose, for the what-changed tests
(tests/cli/test_what_changed_command.py).

* contacts: ``extract_contacts`` (S3 raw contacts: row count, bytes) -> ``stage_contacts`` (staging table);
* orders: ``load_orders`` (orders table: rows, nulls, schema, an assertion) -> ``mart_revenue`` (SQL).

What a run does comes from its conf: ``contacts`` and ``orders`` (how many rows), ``null_emails``,
``stage_fails``, ``cached``, ``coupon_column``, ``negative_amounts``; the mart's SQL version from the
environment variable ``WC_MART_SQL`` (read when the DAG file is parsed, as a deploy would change it).
"""

from __future__ import annotations

import os
from typing import Any

import pendulum
from airflow.sdk import dag, get_current_context, task

from airflow_lineage_plus import Field, Input, Output, lineage, runtime
from airflow_lineage_plus import datasets as ds

RAW_CONTACTS = ds.s3("s3://wc-lake/crm/contacts/")
STG_CONTACTS = ds.postgres("warehouse", "analytics", "staging", "stg_contacts")
ORDERS = ds.postgres("warehouse", "analytics", "staging", "orders")
REVENUE = ds.postgres("warehouse", "analytics", "marts", "revenue_daily")
ORDER_FIELDS = [Field("order_id", "BIGINT"), Field("customer_email", "VARCHAR"), Field("amount", "NUMERIC")]
MART_SQL = {
    "v1": "INSERT INTO marts.revenue_daily SELECT day, SUM(amount) FROM staging.orders GROUP BY day",
    "v2": "INSERT INTO marts.revenue_daily SELECT day, SUM(amount) FROM staging.orders WHERE amount > 0 "
    "GROUP BY day",
}[os.environ.get("WC_MART_SQL", "v1")]


def _conf(key: str, default: Any) -> Any:
    return (get_current_context()["dag_run"].conf or {}).get(key, default)


@dag(schedule=None, start_date=pendulum.datetime(2024, 3, 1, tz="UTC"), catchup=False, tags=["test"])
def what_changed_world() -> None:
    @lineage(
        outputs=[Output(RAW_CONTACTS, schema=[Field("contact_id", "BIGINT"), Field("email", "VARCHAR")])]
    )
    @task
    def extract_contacts() -> int:
        count = int(_conf("contacts", 1000))
        runtime.record(RAW_CONTACTS, row_count=count, bytes=count * 120, null_counts={"email": 0})
        return count

    @lineage(inputs=[Input(RAW_CONTACTS)], outputs=[Output(STG_CONTACTS)])
    @task
    def stage_contacts(count: int) -> None:
        if _conf("stage_fails", False):
            raise RuntimeError("the staging database refused the load")
        runtime.record(STG_CONTACTS, row_count=count)

    @lineage(outputs=[Output(ORDERS, schema=ORDER_FIELDS)])
    @task
    def load_orders() -> int:
        count = int(_conf("orders", 500))
        rows = [
            {"order_id": i, "customer_email": None if i < int(_conf("null_emails", 0)) else f"c{i}@x.test"}
            for i in range(count)
        ]
        if _conf("coupon_column", False):
            runtime.set_schema(ORDERS, [*ORDER_FIELDS, Field("coupon", "VARCHAR")])
        if _conf("cached", False):
            runtime.set_execution_mode("CACHED", reason="orders unchanged since the last load")
        runtime.record(ORDERS, rows, bytes=count * 64)
        runtime.assertion(
            ORDERS, "amount_positive", success=not _conf("negative_amounts", False), column="amount"
        )
        return count

    @lineage(inputs=[Input(ORDERS)], outputs=[Output(REVENUE)], sql=MART_SQL)
    @task
    def mart_revenue(count: int) -> None:
        runtime.record(REVENUE, row_count=30)

    stage_contacts(extract_contacts())
    mart_revenue(load_orders())


what_changed_world()
