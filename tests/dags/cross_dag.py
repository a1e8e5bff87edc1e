"""Two DAGs linked by an Asset: ``xdag_orders`` writes it, then fails its check; ``xdag_report`` is
scheduled on it, so the scheduler starts a run of it from the asset event (cross-DAG lineage)."""

from __future__ import annotations

from datetime import datetime

from airflow.sdk import DAG, Asset, task

ORDERS = Asset("s3://lineage-bucket/xdag/orders.parquet")
REPORT = Asset("s3://lineage-bucket/xdag/report.parquet")

with DAG(dag_id="xdag_orders", start_date=datetime(2024, 1, 1), schedule=None, catchup=False):

    @task(outlets=[ORDERS])
    def extract() -> None:
        pass

    @task
    def check(**context: object) -> None:
        dag_run = context["dag_run"]
        if (getattr(dag_run, "conf", None) or {}).get("fail"):
            raise ValueError("orders check failed after the asset was written")

    extract() >> check()

with DAG(dag_id="xdag_report", start_date=datetime(2024, 1, 1), schedule=[ORDERS], catchup=False):

    @task(inlets=[ORDERS], outlets=[REPORT])
    def summarize() -> None:
        pass

    summarize()
