"""A gate read from an Airflow Variable: closed on the first run, open after the DAG run is cleared."""

from __future__ import annotations

from datetime import datetime

from airflow.providers.standard.operators.python import ShortCircuitOperator
from airflow.sdk import DAG, Variable, task


def _gate_open() -> bool:
    return Variable.get("skip_clear_gate", default="closed") == "open"


with DAG(dag_id="skip_clear", start_date=datetime(2024, 1, 1), schedule=None, catchup=False):

    @task
    def publish() -> None:
        pass

    @task.branch
    def route() -> str:
        return "usual"

    @task
    def usual() -> None:
        pass

    @task
    def rare() -> None:
        pass

    ShortCircuitOperator(task_id="gate", python_callable=_gate_open) >> publish()
    route() >> [usual(), rare()]
