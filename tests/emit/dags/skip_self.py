"""Tasks that skip themselves (one after a deferral), a task downstream of one, and tasks that ran."""

from __future__ import annotations

from datetime import datetime, timedelta
from typing import Any

from airflow.exceptions import AirflowSkipException
from airflow.providers.standard.triggers.temporal import TimeDeltaTrigger
from airflow.sdk import DAG, Asset, BaseOperator, task

from airflow_lineage_plus import runtime


class WaitThenSkip(BaseOperator):
    """Defers once, then finds nothing to do and skips itself."""

    def execute(self, context: Any) -> None:
        self.defer(trigger=TimeDeltaTrigger(timedelta(seconds=1)), method_name="execute_complete")

    def execute_complete(self, context: Any, event: Any = None) -> None:
        raise AirflowSkipException("nothing arrived while waiting")


with DAG(dag_id="skip_self", start_date=datetime(2024, 1, 1), schedule=None, catchup=False):

    @task(
        inlets=[Asset("s3://lineage-bucket/incoming/orders.csv")],
        outlets=[Asset("s3://lineage-bucket/staged/orders.parquet")],
    )
    def quiet() -> None:
        raise AirflowSkipException("no new files in s3://lineage-bucket/incoming")

    @task(inlets=[Asset("s3://lineage-bucket/staged/orders.parquet")])
    def after_quiet() -> None:
        pass

    @task
    def cached() -> int:
        runtime.set_execution_mode("CACHED", "output already up to date")
        return 1

    @task
    def ran() -> int:
        return 2

    quiet() >> after_quiet()
    cached()
    ran()
    WaitThenSkip(task_id="wait_then_skip")
