"""An upstream failure: one task cannot meet all_success, one all_failed task is skipped, cleanup runs."""

from __future__ import annotations

from datetime import datetime

from airflow.sdk import DAG, Asset, task

with DAG(dag_id="skip_trigger_rule", start_date=datetime(2024, 1, 1), schedule=None, catchup=False):

    @task(outlets=[Asset("s3://lineage-bucket/staged/payments.parquet")])
    def boom() -> None:
        raise RuntimeError("source unavailable")

    @task
    def ok() -> None:
        pass

    @task(inlets=[Asset("s3://lineage-bucket/staged/payments.parquet")])
    def after_boom() -> None:
        pass

    @task(trigger_rule="all_failed")
    def alert_if_all_failed() -> None:
        pass

    @task(trigger_rule="all_done")
    def cleanup() -> None:
        pass

    b, o = boom(), ok()
    b >> after_boom()
    [b, o] >> alert_if_all_failed()
    [b, o] >> cleanup()
