"""Marquez-style node ids split back into the namespace and name they were built from."""

from __future__ import annotations

import pytest

from airflow_lineage_plus.graph import dataset_id, job_id, split_node_id


@pytest.mark.parametrize(
    "namespace, name",
    [
        ("s3://raw-data-lake", "orders"),
        ("postgres://warehouse.internal:5432", "analytics.staging.stg_orders"),
        ("duckdb:///tmp/demo-home/warehouse/analytics.duckdb", "analytics.marts.fct_daily_orders"),
        ("sqlite:///var/lib/airflow/warehouse.db", "main.orders"),
        ("bigquery", "project.dataset.table"),
        ("snowflake://acme-xy123", "ANALYTICS.MARTS.FCT"),
    ],
)
def test_dataset_id_splits_back_into_its_namespace_and_name(namespace: str, name: str) -> None:
    assert split_node_id(dataset_id(namespace, name)) == ("DATASET", namespace, name)


def test_job_id_in_a_plain_namespace_splits_back() -> None:
    assert split_node_id(job_id("demo-airflow", "ecommerce_orders.load_stg_orders")) == (
        "JOB",
        "demo-airflow",
        "ecommerce_orders.load_stg_orders",
    )
