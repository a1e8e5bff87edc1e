"""A branch that picks one task group; the other group never runs; a join after both runs."""

from __future__ import annotations

from datetime import datetime

from airflow.sdk import DAG, Asset, TaskGroup, task

with DAG(dag_id="skip_branch", start_date=datetime(2024, 1, 1), schedule=None, catchup=False):

    @task.branch
    def choose() -> str:
        return "fast.fast_load"

    @task
    def fast_load() -> None:
        pass

    @task
    def fast_check() -> None:
        pass

    @task(inlets=[Asset("s3://lineage-bucket/raw/full_dump.csv")])
    def full_load() -> None:
        pass

    @task
    def full_check() -> None:
        pass

    @task(trigger_rule="none_failed_min_one_success")
    def join() -> None:
        pass

    picked = choose()
    with TaskGroup("fast") as fast:
        fast_load() >> fast_check()
    with TaskGroup("full") as full:
        full_load() >> full_check()
    picked >> [fast, full]
    [fast, full] >> join()
