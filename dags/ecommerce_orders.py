"""E-commerce orders: raw orders to the data lake, staged in the warehouse, rolled up into a daily mart.

Hops (each declares its lineage with airflow-lineage-plus):

* ``ingest_orders_to_s3``: the order service's orders of the day as JSON lines in
  ``s3://raw-data-lake/orders/date=YYYY-MM-DD/`` (``S3Hook``).
* ``has_orders``: a gate that short-circuits when the partition holds no orders, so the scheduler skips
  the downstream tasks for real.
* ``load_stg_orders``: the partition into ``analytics.staging.stg_orders``, adding ``_loaded_at``.
* ``fct_daily_orders``: ``dbt build`` of the dbt project ``dags/dbt/shop``: the model
  ``analytics.marts.fct_daily_orders`` (staged orders joined to staged CRM contacts) and its tests. dbt
  reports the model's lineage itself, each dbt run a child of this task's run
  (:func:`airflow_lineage_plus.dbt.run_dbt`); a failed model or test fails the task.

Params: ``order_count`` (orders the simulated source returns; 0 gives an empty partition) and
``fail_stage`` (a stage that fails, to show failed-upstream detection; ``none`` by default;
``fct_daily_orders`` makes the dbt model fail).
"""

from __future__ import annotations

from datetime import date, datetime, timezone
from decimal import Decimal
from typing import Any

import pendulum
from airflow.providers.openlineage.api.emission_policy import extend_global_openlineage_emission_policy
from airflow.sdk import Param, dag, get_current_context, task
from lineage_samples import catalog, lake, marts, sources, warehouse

from airflow_lineage_plus import ColumnFrom, Input, Output, SloTier, lineage, runtime

STAGES = ["ingest_orders_to_s3", "load_stg_orders", "fct_daily_orders"]
OWNERS = ["team:commerce-data"]
#: A daily pipeline's tables may be a day old, plus two hours of slack (``lineage-plus freshness``).
DAILY_SLO_MINUTES = 26 * 60


class SimulatedStageError(RuntimeError):
    """Raised by the stage the ``fail_stage`` DAG param names."""


def _context() -> tuple[date, dict[str, Any]]:
    context = get_current_context()
    return date.fromisoformat(str(context["ds"])), dict(context["params"])


def _maybe_fail(stage: str, params: dict[str, Any]) -> None:
    if params.get("fail_stage") == stage:
        raise SimulatedStageError(
            f"{stage} failed on purpose: the DAG run was triggered with fail_stage={stage!r} "
            f"(trigger it with fail_stage='none' to run normally)"
        )


@dag(
    dag_id="ecommerce_orders",
    schedule="@daily",
    start_date=pendulum.datetime(2024, 6, 1, tz="UTC"),
    catchup=False,
    tags=["lineage-plus-sample", "orders"],
    doc_md=__doc__,
    params={
        "order_count": Param(40, type="integer", minimum=0, description="Orders the source returns"),
        "fail_stage": Param(
            "none", enum=["none", *STAGES], description="Make this stage fail (failed-upstream demo)"
        ),
    },
)
def ecommerce_orders() -> None:
    @lineage(
        outputs=[
            Output(
                catalog.RAW_ORDERS,
                schema=catalog.RAW_ORDERS_SCHEMA,
                description="Orders from the order service, one JSON object a line, partitioned by date",
                owners=OWNERS,
                tags=["raw"],
            )
        ],
        owners=OWNERS,
        description="Extracts the day's orders and lands them in the raw data lake",
    )
    @task
    def ingest_orders_to_s3() -> int:
        day, params = _context()
        _maybe_fail("ingest_orders_to_s3", params)
        placed = sources.orders(day, int(params["order_count"]))
        written = lake.write_partition(catalog.RAW_ORDERS_ROOT, day, placed, "orders.jsonl")
        partition = catalog.RAW_ORDERS.with_partition(date=day.isoformat())
        runtime.record(partition, placed, bytes=written.size, file_count=1)
        return len(placed)

    @lineage(
        inputs=[catalog.RAW_ORDERS],
        owners=OWNERS,
        description="Lets the run go on only when the day's partition holds orders",
    )
    @task.short_circuit
    def has_orders() -> bool:
        day, _params = _context()
        count = len(lake.read_partition(catalog.RAW_ORDERS_ROOT, day))
        print(f"partition date={day.isoformat()} holds {count} orders")
        return count > 0

    @lineage(
        inputs=[Input(catalog.RAW_ORDERS, schema=catalog.RAW_ORDERS_SCHEMA)],
        outputs=[
            Output(
                catalog.STG_ORDERS,
                schema=catalog.schema_of(catalog.STG_ORDERS_COLUMNS),
                column_lineage={
                    "order_id": [ColumnFrom(catalog.RAW_ORDERS, "order_id")],
                    "customer_id": [ColumnFrom(catalog.RAW_ORDERS, "customer_id")],
                    "ordered_at": [ColumnFrom(catalog.RAW_ORDERS, "ordered_at")],
                    "order_date": [ColumnFrom(catalog.RAW_ORDERS, "ordered_at", subtype="TRANSFORMATION")],
                    "status": [ColumnFrom(catalog.RAW_ORDERS, "status")],
                    "total_amount_usd": [ColumnFrom(catalog.RAW_ORDERS, "total_amount_usd")],
                    "coupon_code": [ColumnFrom(catalog.RAW_ORDERS, "coupon_code")],
                },
                description="Orders, typed, one row per order",
                owners=OWNERS,
            )
        ],
        owners=OWNERS,
        description="Loads the day's orders from the data lake into staging, adding _loaded_at",
        facets=[SloTier(tier="silver", freshnessMinutes=DAILY_SLO_MINUTES)],
    )
    @task
    def load_stg_orders() -> int:
        day, params = _context()
        _maybe_fail("load_stg_orders", params)
        placed = lake.read_partition(catalog.RAW_ORDERS_ROOT, day)
        loaded_at = datetime.now(timezone.utc).replace(tzinfo=None)
        rows = [_order_row(order, loaded_at) for order in placed]
        warehouse.ensure_table(catalog.STG_ORDERS_TABLE, catalog.STG_ORDERS_COLUMNS)
        columns = [name for name, _type in catalog.STG_ORDERS_COLUMNS]
        where = f"order_date = {warehouse.date_literal(day)}"
        warehouse.replace_rows(catalog.STG_ORDERS_TABLE, where, columns, rows)
        written = warehouse.select(f"SELECT * FROM {catalog.STG_ORDERS_TABLE} WHERE {where}")
        runtime.record(catalog.STG_ORDERS, written)
        return len(written)

    @lineage(
        owners=["team:analytics"],
        description="Builds the marts with dbt (dags/dbt/shop): fct_daily_orders and its tests",
        # dbt's model jobs run by this task carry its owners and service level (docs/dbt.md)
        facets=[SloTier(tier="gold", freshnessMinutes=DAILY_SLO_MINUTES)],
    )
    @task
    def fct_daily_orders() -> dict[str, str]:
        _day, params = _context()
        # the sources the model reads exist even before the CRM DAG first ran
        warehouse.ensure_table(catalog.STG_ORDERS_TABLE, catalog.STG_ORDERS_COLUMNS)
        warehouse.ensure_table(catalog.STG_CONTACTS_TABLE, catalog.STG_CONTACTS_COLUMNS)
        # dbt reports its own lineage: each model and test run is a child of this task's run, and the
        # mart's lineage (staging tables in, mart out, column lineage, test assertions) comes from dbt.
        return marts.build(fail_on_purpose=params.get("fail_stage") == "fct_daily_orders")

    marts_built = fct_daily_orders()
    # dbt reports this task's lineage as child runs: the provider must not fall back to per-query hook
    # lineage for it (its own SQL only makes sure the staging tables exist)
    extend_global_openlineage_emission_policy(marts_built, hook_lineage=False)
    ingest_orders_to_s3() >> has_orders() >> load_stg_orders() >> marts_built


def _order_row(order: dict[str, Any], loaded_at: datetime) -> tuple[Any, ...]:
    ordered_at = datetime.fromisoformat(order["ordered_at"]).astimezone(timezone.utc).replace(tzinfo=None)
    return (
        order["order_id"],
        order["customer_id"],
        ordered_at,
        ordered_at.date(),
        order["status"],
        Decimal(order["total_amount_usd"]),
        order["coupon_code"],
        loaded_at,
    )


ecommerce_orders()
