"""A mapped task group: two of three files skip their check, so their load never runs."""

from __future__ import annotations

from datetime import datetime

from airflow.exceptions import AirflowSkipException
from airflow.sdk import DAG, Asset, task, task_group

with DAG(dag_id="skip_mapped", start_date=datetime(2024, 1, 1), schedule=None, catchup=False):

    @task
    def check(name: str) -> str:
        if name != "a.csv":
            raise AirflowSkipException(f"{name} is empty")
        return name

    @task(inlets=[Asset("s3://lineage-bucket/incoming/files")])
    def load(name: str) -> None:
        pass

    @task_group
    def per_file(name: str) -> None:
        load(check(name))

    per_file.expand(name=["a.csv", "b.csv", "c.csv"])
