"""A declared task that skips itself (so the scheduler skips its declared downstream task), and one that
reports it did no real work."""

from __future__ import annotations

import pendulum
from airflow.exceptions import AirflowSkipException
from airflow.sdk import dag, task

from airflow_lineage_plus import Output, datasets, lineage, runtime

SOURCE = datasets.s3("s3://landing/events/")
TARGET = datasets.s3("s3://curated/events/")
DAILY = datasets.s3("s3://marts/events_daily/")


@dag(schedule=None, start_date=pendulum.datetime(2024, 1, 1, tz="UTC"), catchup=False)
def declared_skip() -> None:
    @lineage(inputs=[SOURCE], outputs=[Output(TARGET, schema=[("event_id", "BIGINT")])])
    @task
    def copy_events() -> None:
        raise AirflowSkipException("no new files under s3://landing/events/")

    @lineage(inputs=[SOURCE], outputs=[TARGET])
    @task
    def refresh_cache() -> None:
        runtime.set_execution_mode("CACHED", "inputs unchanged since the last run")

    @lineage(inputs=[TARGET], outputs=[DAILY])
    @task
    def publish_events() -> None:
        pass  # never runs: copy_events skips itself, so the scheduler skips this task

    copy_events() >> publish_events()
    refresh_cache()


declared_skip()
