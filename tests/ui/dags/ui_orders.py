"""Three hops to a mart table, with a stage that fails when asked to (``{"fail_stage": true}``).

raw orders in S3 -> load_stg_orders -> analytics.staging.stg_orders -> fct_daily_orders ->
analytics.marts.fct_daily_orders. A separate task writes a dataset whose name is an HTML payload, to check
the Lineage view shows hostile names as text. Datasets are declared as OpenLineage ``Dataset`` objects in
``inlets``/``outlets``; the provider passes them through as the task's inputs and outputs.
"""

from __future__ import annotations

import pendulum
from airflow.sdk import dag, get_current_context, task
from openlineage.client.event_v2 import Dataset
from openlineage.client.facet_v2 import schema_dataset

WAREHOUSE = "postgres://warehouse:5432"


def _schema(*columns: tuple[str, str]) -> dict[str, schema_dataset.SchemaDatasetFacet]:
    return {
        "schema": schema_dataset.SchemaDatasetFacet(
            fields=[schema_dataset.SchemaDatasetFacetFields(name=name, type=kind) for name, kind in columns]
        )
    }


RAW = Dataset(namespace="s3://acme-raw", name="orders/2024-01-01.json")
STG = Dataset(
    namespace=WAREHOUSE,
    name="analytics.staging.stg_orders",
    facets=_schema(("order_id", "BIGINT"), ("amount", "NUMERIC"), ("ordered_at", "TIMESTAMP")),
)
MART = Dataset(
    namespace=WAREHOUSE,
    name="analytics.marts.fct_daily_orders",
    facets=_schema(("order_date", "DATE"), ("orders", "BIGINT"), ("revenue", "NUMERIC")),
)
HOSTILE = Dataset(namespace=WAREHOUSE, name="<img src=x onerror=alert(1)>")


@dag(schedule=None, start_date=pendulum.datetime(2024, 1, 1, tz="UTC"), catchup=False, tags=["test"])
def ui_orders() -> None:
    @task(outlets=[RAW])
    def ingest_orders_to_s3() -> None:
        pass

    @task(inlets=[RAW], outlets=[STG])
    def load_stg_orders() -> None:
        if get_current_context()["dag_run"].conf.get("fail_stage"):
            raise RuntimeError("staging load failed: 3 malformed order rows")

    @task(inlets=[STG], outlets=[MART])
    def fct_daily_orders() -> None:
        pass

    @task(outlets=[HOSTILE])
    def export_audit() -> None:
        pass

    ingest_orders_to_s3() >> load_stg_orders() >> fct_daily_orders()
    export_audit()


ui_orders()
