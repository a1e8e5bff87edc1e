"""Declarations static lineage reads without running them: a mapped task, a connection that is not
defined where DAGs are parsed, and an OpenLineage dataset (with its schema) as a plain outlet."""

from __future__ import annotations

import pendulum
from airflow.providers.standard.operators.python import PythonOperator
from airflow.sdk import dag, task
from openlineage.client.event_v2 import Dataset
from openlineage.client.facet_v2 import schema_dataset

from airflow_lineage_plus import datasets as ds
from airflow_lineage_plus import lineage

ELSEWHERE = ds.sql_table("nowhere_wh", "Sales.Public.Accounts")
PARTS = ds.s3("s3://static-lake/parts/")
SNAPSHOT = Dataset(
    namespace="file",
    name="/exports/accounts.csv",
    facets={
        "schema": schema_dataset.SchemaDatasetFacet(
            fields=[schema_dataset.SchemaDatasetFacetFields(name="account_id", type="VARCHAR")]
        )
    },
)


@dag(schedule=None, start_date=pendulum.datetime(2024, 1, 1, tz="UTC"), catchup=False)
def static_unresolved() -> None:
    @lineage(inputs=[PARTS], outputs=[ELSEWHERE])
    @task
    def load_part(part: int) -> None:
        pass

    load_part.expand(part=[1, 2, 3])
    PythonOperator(task_id="snapshot", python_callable=lambda: None, outlets=[SNAPSHOT])


static_unresolved()
