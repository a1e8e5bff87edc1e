"""Two plain TaskFlow tasks and one classic operator, nothing declared: the provider's baseline."""

from __future__ import annotations

import pendulum
from airflow.providers.standard.operators.empty import EmptyOperator
from airflow.sdk import dag, task


@dag(schedule=None, start_date=pendulum.datetime(2024, 1, 1, tz="UTC"), catchup=False, tags=["test"])
def trivial() -> None:
    @task
    def extract() -> int:
        return 41

    @task
    def transform(value: int) -> int:
        return value + 1

    done = EmptyOperator(task_id="done")
    transform(extract()) >> done


trivial()
