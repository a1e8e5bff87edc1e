"""DAGs for the PostgreSQL / two-scheduler tests: each run has one task on the executor and three skips.

``gate`` (a short circuit that closes) runs on the executor and skips ``extract`` and ``load``;
``work`` is an EmptyOperator the scheduler marks successful without running it, and ``cleanup``
(``all_failed``) is then skipped by the scheduler's trigger-rule check. So each DAG run ends with three
task instances that never ran: two ``SHORT_CIRCUIT``, one ``TRIGGER_RULE``.

- ``ha_skips_locked``: one run, while the test holds a lock on the claims table (statement timeout);
- ``ha_skips``: two daily runs (catch-up) after that, for the exactly-once check.
"""

from __future__ import annotations

from datetime import datetime

from airflow.providers.standard.operators.empty import EmptyOperator
from airflow.providers.standard.operators.python import ShortCircuitOperator
from airflow.sdk import DAG, Asset


def _closed() -> bool:
    return False


def ha_dag(dag_id: str, schedule: str, end_date: datetime | None) -> DAG:
    with DAG(
        dag_id=dag_id,
        schedule=schedule,
        start_date=datetime(2024, 1, 1),
        end_date=end_date,
        catchup=True,
        is_paused_upon_creation=True,
    ) as dag:
        gate = ShortCircuitOperator(task_id="gate", python_callable=_closed)
        extract = EmptyOperator(task_id="extract", inlets=[Asset("s3://lineage-bucket/raw/orders.csv")])
        load = EmptyOperator(task_id="load")
        gate >> extract >> load
        work = EmptyOperator(task_id="work")
        cleanup = EmptyOperator(task_id="cleanup", trigger_rule="all_failed")
        work >> cleanup
    return dag


ha_dag("ha_skips", "@daily", datetime(2024, 1, 2))
ha_dag("ha_skips_locked", "@once", None)
