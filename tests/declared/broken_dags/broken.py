"""A DAG file with an authoring mistake: publish-static must name it and fail, as the DAG processor does."""

from __future__ import annotations

import pendulum
from airflow.sdk import dag, task

from airflow_lineage_plus import ColumnFrom, Output, lineage
from airflow_lineage_plus import datasets as ds


@dag(schedule=None, start_date=pendulum.datetime(2024, 1, 1, tz="UTC"), catchup=False)
def broken_static() -> None:
    @lineage(
        outputs=[
            Output(
                ds.s3("s3://static-lake/out/"),
                column_lineage={"x": [ColumnFrom(ds.s3("s3://other-lake/b/"), "y")]},
            )
        ]
    )
    @task
    def wrong() -> None:
        pass

    wrong()


broken_static()
