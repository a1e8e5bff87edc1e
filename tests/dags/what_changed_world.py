"""Two small chains whose runs change on purpose, for the what-changed tests
(tests/cli/test_what_changed_command.py).

* contacts: ``extract_contacts`` (S3 raw contacts, a date partition a run: row count, bytes, null count of
  email; one retry allowed) -> ``stage_contacts`` (staging table: row count);
* orders: ``load_orders`` (orders table: rows, nulls, schema, an assertion) -> ``mart_revenue`` (SQL;
  the count of days whose revenue is null, without a row count; a two-minute freshness SLO).

What a run does comes from its conf: ``contacts`` and ``orders`` (how many rows), ``crm_flaky`` (the
extract's first try fails), ``crm_skip`` (the extract skips itself), ``null_emails``, ``stage_fails``,
``orders_fail``, ``cached``, ``partial``, ``schema`` (``coupon``: a new column; ``narrowed``: that, and
``customer_email`` dropped and ``amount`` a VARCHAR), ``negative_amounts``, ``null_revenue_days``,
``slow_mart`` (seconds the mart sleeps); the mart's SQL version from the environment variable
``WC_MART_SQL`` (read when the DAG file is parsed, as a deploy would change it).
"""

from __future__ import annotations

import os
import time
from datetime import timedelta
from typing import Any

import pendulum
from airflow.exceptions import AirflowSkipException
from airflow.sdk import dag, get_current_context, task

from airflow_lineage_plus import Field, Input, Output, SloTier, lineage, runtime
from airflow_lineage_plus import datasets as ds

RAW_CONTACTS = ds.s3("s3://wc-lake/crm/contacts/")
STG_CONTACTS = ds.postgres("warehouse", "analytics", "staging", "stg_contacts")
ORDERS = ds.postgres("warehouse", "analytics", "staging", "orders")
REVENUE = ds.postgres("warehouse", "analytics", "marts", "revenue_daily")
ORDER_FIELDS = [Field("order_id", "BIGINT"), Field("customer_email", "VARCHAR"), Field("amount", "NUMERIC")]
ORDER_SCHEMAS = {
    "coupon": [*ORDER_FIELDS, Field("coupon", "VARCHAR")],
    "narrowed": [Field("order_id", "BIGINT"), Field("amount", "VARCHAR"), Field("coupon", "VARCHAR")],
}
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
    @task(retries=1, retry_delay=timedelta(seconds=0))
    def extract_contacts() -> int:
        context = get_current_context()
        if _conf("crm_skip", False):
            raise AirflowSkipException("the CRM exported nothing today")
        if _conf("crm_flaky", False) and context["ti"].try_number == 1:
            raise RuntimeError("the CRM API timed out")
        count = int(_conf("contacts", 1000))
        partition = RAW_CONTACTS.with_partition(date=context["ds"])
        runtime.record(partition, row_count=count, bytes=count * 120, null_counts={"email": 0})
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
        if _conf("orders_fail", False):
            raise RuntimeError("the orders database is down")
        count = int(_conf("orders", 500))
        schema = _conf("schema", None)
        nulls = int(_conf("null_emails", 0))
        rows: list[dict[str, Any]] = [{"order_id": i} for i in range(count)]
        if schema != "narrowed":
            rows = [
                {**row, "customer_email": None if i < nulls else f"c{i}@x.test"} for i, row in enumerate(rows)
            ]
        if schema is not None:
            runtime.set_schema(ORDERS, ORDER_SCHEMAS[schema])
        if _conf("cached", False):
            runtime.set_execution_mode("CACHED", reason="orders unchanged since the last load")
        if _conf("partial", False):
            runtime.set_execution_mode("PARTIAL", reason="two of the three order files arrived")
        runtime.record(ORDERS, rows, bytes=count * 64)
        runtime.assertion(
            ORDERS, "amount_positive", success=not _conf("negative_amounts", False), column="amount"
        )
        return count

    @lineage(
        inputs=[Input(ORDERS)],
        outputs=[Output(REVENUE)],
        sql=MART_SQL,
        facets=[SloTier(tier="gold", freshnessMinutes=2)],
    )
    @task
    def mart_revenue(count: int) -> None:
        time.sleep(float(_conf("slow_mart", 0)))
        runtime.record(REVENUE, null_counts={"revenue": int(_conf("null_revenue_days", 3))})

    stage_contacts(extract_contacts())
    mart_revenue(load_orders())


what_changed_world()
