"""DAGs of the production-shaped test (tests/deploy/test_production_topology.py), run by Celery workers.

- ``topology_slow``: two chains of two tasks, one chain on each worker (Celery queues ``w1`` and ``w2``),
  each task sleeping ``TOPOLOGY_SLEEP`` seconds and writing an asset the next one reads: long enough for
  the test to kill an API server, or restart PostgreSQL, while they run;
- ``topology_dbt``: ``dbt-ol build`` of ``tests/deploy/dbt_project`` on worker 2, sending through the
  OpenLineage client's ``http`` transport to the API server the worker is configured with, exactly as
  docs/collector.md tells a producer outside Airflow (``url`` ending in ``/lineage-plus/``, ``endpoint``,
  gzip, the ingest key as ``api_key``); the ingest key comes from the worker's connection, the URL from
  its ``[lineage_plus] collector_url`` (its environment), and dbt's runs are children of the task's run
  (the provider's macros).
"""

from __future__ import annotations

import os
import time

import pendulum
from airflow.providers.standard.operators.bash import BashOperator
from airflow.sdk import DAG, Asset, task

SLEEP = float(os.environ.get("TOPOLOGY_SLEEP", "6"))
PROJECT = os.environ.get("TOPOLOGY_DBT_PROJECT", "/nonexistent")
START = pendulum.datetime(2024, 6, 1, tz="UTC")


def _asset(name: str) -> Asset:
    return Asset(f"s3://topology-bucket/{name}.parquet")


with DAG(dag_id="topology_slow", schedule=None, start_date=START, catchup=False):
    for queue in ("w1", "w2"):

        @task(task_id=f"{queue}_first", queue=queue, outlets=[_asset(f"{queue}_first")])
        def first() -> None:
            time.sleep(SLEEP)

        @task(
            task_id=f"{queue}_second",
            queue=queue,
            inlets=[_asset(f"{queue}_first")],
            outlets=[_asset(f"{queue}_second")],
        )
        def second() -> None:
            time.sleep(SLEEP)

        first() >> second()


OPENLINEAGE = "macros.OpenLineageProviderPlugin"
DBT_ENV = {
    "OPENLINEAGE__TRANSPORT__TYPE": "http",
    "OPENLINEAGE__TRANSPORT__ENDPOINT": "api/v1/lineage",
    "OPENLINEAGE__TRANSPORT__COMPRESSION": "gzip",
    "OPENLINEAGE__TRANSPORT__AUTH__TYPE": "api_key",
    "OPENLINEAGE__TRANSPORT__AUTH__APIKEY": "{{ conn.lineage_plus_collector.password }}",
    "OPENLINEAGE_NAMESPACE": "{{ " + OPENLINEAGE + ".lineage_job_namespace() }}",
    "OPENLINEAGE_PARENT_ID": "{{ " + OPENLINEAGE + ".lineage_parent_id(task_instance) }}",
    "OPENLINEAGE_ROOT_PARENT_ID": "{{ " + OPENLINEAGE + ".lineage_root_parent_id(task_instance) }}",
}

with DAG(dag_id="topology_dbt", schedule=None, start_date=START, catchup=False):
    BashOperator(
        task_id="dbt_build",
        queue="w2",
        bash_command=(
            'OPENLINEAGE__TRANSPORT__URL="$AIRFLOW__LINEAGE_PLUS__COLLECTOR_URL/lineage-plus/" '
            f"dbt-ol build --project-dir {PROJECT} --profiles-dir {PROJECT} "
            "--target-path $TOPOLOGY_DBT_TARGET --log-path $TOPOLOGY_DBT_TARGET/logs"
        ),
        env=DBT_ENV,
        append_env=True,
        cwd=PROJECT,
    )
