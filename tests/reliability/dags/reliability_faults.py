"""DAGs for fault injection and redaction: a declared task (baseline), tasks whose lineage code fails,
one misusing the runtime API, and one whose lineage mentions a connection's password."""

from __future__ import annotations

from typing import Any, ClassVar

import attr
import pendulum
from airflow.sdk import BaseHook, dag, task
from openlineage.client.facet_v2 import JobFacet

from airflow_lineage_plus import Field, Input, Output, datasets, lineage, runtime

RAW = datasets.s3("s3://raw-data-lake/orders/")
STG = datasets.postgres("db.internal", "analytics", "staging", "stg_orders")
WAREHOUSE = datasets.sql_table("warehouse", "analytics.public.orders")  # AIRFLOW_CONN_WAREHOUSE
MISSING = datasets.sql_table("no_such_connection", "analytics.staging.orders")
ROWS = [{"order_id": i, "amount": float(i)} for i in range(5)]
START = pendulum.datetime(2024, 1, 1, tz="UTC")
PASSWORD = "s3cr3t-Pa55word"  # the password of AIRFLOW_CONN_WAREHOUSE in the tests


@attr.define
class ExplodingFacet(JobFacet):
    """A custom facet whose serialisation raises (a bug in someone's facet code)."""

    key: ClassVar[str] = "lineagePlus_exploding"
    value: str = "x"

    def __getattribute__(self, name: str) -> Any:
        if name == "value":
            raise RuntimeError("facet code is broken")
        return object.__getattribute__(self, name)


@dag(schedule=None, start_date=START, catchup=False)
def reliability_baseline() -> None:
    @lineage(inputs=[RAW], outputs=[Output(STG, schema=[Field("order_id", "BIGINT")]), WAREHOUSE])
    @task
    def load() -> int:
        runtime.record(STG, ROWS)
        return len(ROWS)

    load()


@dag(schedule=None, start_date=START, catchup=False)
def reliability_missing_connection() -> None:
    @lineage(inputs=[RAW, MISSING], outputs=[STG])
    @task
    def load() -> int:
        return len(ROWS)

    load()


@dag(schedule=None, start_date=START, catchup=False)
def reliability_facet_raises() -> None:
    @lineage(inputs=[RAW], outputs=[STG], facets=[ExplodingFacet()])
    @task
    def load() -> int:
        return len(ROWS)

    load()


# Misuse outside a task, at parse time: contained and logged; the DAG file still imports.
runtime.assertion(STG, "outside_a_task", success=True)


@dag(schedule=None, start_date=START, catchup=False)
def reliability_misuse() -> None:
    @lineage(inputs=[RAW], outputs=[STG])
    @task
    def load() -> int:
        runtime.record(object())  # type: ignore[arg-type]  # not a dataset
        runtime.record(STG, object())  # data that cannot be profiled
        runtime.set_schema(STG, [42])  # type: ignore[list-item]  # not a field
        return len(ROWS)

    load()


@dag(schedule=None, start_date=START, catchup=False)
def reliability_secrets() -> None:
    @lineage(
        inputs=[Input(RAW, description=f"copied with password {PASSWORD}")],
        outputs=[WAREHOUSE],
        sql=f"COPY orders FROM 'postgres://etl_user:{PASSWORD}@warehouse.internal:5432/analytics'",
    )
    @task
    def load() -> int:
        connection = BaseHook.get_connection("warehouse")  # registers its password with the masker
        runtime.assertion(WAREHOUSE, "login_works", success=True, actual=f"{connection.login}:{PASSWORD}")
        return len(ROWS)

    load()


@dag(schedule=None, start_date=START, catchup=False)
def reliability_failing() -> None:
    @lineage(inputs=[RAW, MISSING], outputs=[STG], facets=[ExplodingFacet()])
    @task
    def load() -> int:
        runtime.record(object())  # type: ignore[arg-type]
        raise ValueError("the task's own failure")

    load()


reliability_baseline()
reliability_failing()
reliability_missing_connection()
reliability_facet_raises()
reliability_misuse()
reliability_secrets()
