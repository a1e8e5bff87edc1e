"""The load of benchmarks/scheduler_bench.py: a 30-task DAG whose runs end with 10 scheduler-skipped tasks.

Per run: ``gate`` (a short circuit that closes) runs on the executor and skips the five ``publish_<i>``
below it (``SHORT_CIRCUIT``); ``prepare`` runs on the executor too; 18 ``step_<i>`` EmptyOperators the
scheduler marks successful without running them, five of which have an ``all_failed`` ``cleanup_<i>``
below them that the scheduler skips (``TRIGGER_RULE``). 30 tasks, 2 on the executor, 10 never run.

One DAG per benchmark segment (``load_skips_<segment>``, from ``LOAD_SKIPS_SEGMENTS``), each with
``LOAD_SKIPS_RUNS`` daily runs by catch-up, paused until the benchmark unpauses it.
"""

from __future__ import annotations

import os
from datetime import datetime, timedelta

from airflow.providers.standard.operators.empty import EmptyOperator
from airflow.providers.standard.operators.python import PythonOperator, ShortCircuitOperator
from airflow.sdk import DAG, Asset, chain

START = datetime(2024, 1, 1)


def _closed() -> bool:
    return False


def _prepare() -> None:
    return None


def load_dag(dag_id: str, runs: int) -> DAG:
    with DAG(
        dag_id=dag_id,
        schedule="@daily",
        start_date=START,
        end_date=START + timedelta(days=runs - 1),
        catchup=True,
        is_paused_upon_creation=True,
        max_active_runs=16,
    ) as dag:
        prepare = PythonOperator(task_id="prepare", python_callable=_prepare)
        gate = ShortCircuitOperator(task_id="gate", python_callable=_closed)
        short_circuited = [
            EmptyOperator(
                task_id=f"publish_{i}", inlets=[Asset(f"s3://lineage-bucket/staged/part_{i}.parquet")]
            )
            for i in range(1, 6)
        ]
        prepare >> gate
        chain(gate, *short_circuited)
        steps = [EmptyOperator(task_id=f"step_{i}") for i in range(1, 19)]
        chain(prepare, *steps)
        for i in range(1, 6):
            steps[i * 3] >> EmptyOperator(task_id=f"cleanup_{i}", trigger_rule="all_failed")
    return dag


for _segment in os.environ.get("LOAD_SKIPS_SEGMENTS", "").split(","):
    if _segment:
        load_dag(f"load_skips_{_segment}", int(os.environ.get("LOAD_SKIPS_RUNS", "50")))
