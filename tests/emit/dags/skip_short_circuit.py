"""A short circuit that closes: a chain of three tasks and a deferrable sensor below it never run."""

from __future__ import annotations

from datetime import datetime, timedelta

from airflow.providers.standard.operators.python import ShortCircuitOperator
from airflow.providers.standard.sensors.time_delta import TimeDeltaSensor
from airflow.sdk import DAG, Asset, task

with DAG(dag_id="skip_short_circuit", start_date=datetime(2024, 1, 1), schedule=None, catchup=False):

    @task
    def prepare() -> int:
        return 1

    @task(
        inlets=[Asset("s3://lineage-bucket/raw/orders.csv")],
        outlets=[Asset("s3://lineage-bucket/staged/orders.parquet")],
    )
    def extract() -> None:
        pass

    @task(
        inlets=[Asset("s3://lineage-bucket/staged/orders.parquet")],
        outlets=[Asset("s3://lineage-bucket/marts/orders.parquet")],
    )
    def transform() -> None:
        pass

    @task
    def load() -> None:
        pass

    @task
    def unrelated() -> None:
        pass

    gate = ShortCircuitOperator(task_id="gate", python_callable=lambda: False)
    wait = TimeDeltaSensor(task_id="wait", delta=timedelta(seconds=1), deferrable=True)
    prepare() >> gate >> extract() >> transform() >> load()
    gate >> wait
    unrelated()
