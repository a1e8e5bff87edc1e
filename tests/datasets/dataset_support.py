"""Shared by tests/datasets: the connections the tests define, the SQLite warehouse path, ``identity()``.

The dataset-identity tests use the real pieces: Airflow's ``Asset`` (with the providers' URI normalisers), the
Amazon and common-io providers' asset-to-OpenLineage converters, the provider's ``translate_airflow_asset``,
real Airflow connections defined through ``AIRFLOW_CONN_<ID>`` environment variables, the Amazon provider's
``RedshiftSQLHook``, and the official OpenLineage JSON Schemas for the subset facet.
"""

from __future__ import annotations

from typing import Any

from airflow_lineage_plus import datasets as ds

WAREHOUSE_DB = "/srv/demo/warehouse.db"

# The connections the table of spellings and the connection tests use, exactly as an operator would define
# them for Airflow: one environment variable per connection, URI or JSON form.
CONNECTIONS = {
    "AIRFLOW_CONN_WAREHOUSE": f"sqlite:///{WAREHOUSE_DB}",
    "AIRFLOW_CONN_WAREHOUSE_JSON": '{"conn_type": "sqlite", "host": "/srv/demo/./warehouse.db"}',
    "AIRFLOW_CONN_SHOP_PG": "postgresql://etl:secret@DB.Example.com/shop",
    "AIRFLOW_CONN_SHOP_PG_PORT": "postgres://etl:secret@db.example.com:5432/shop",
    "AIRFLOW_CONN_SNOW": (
        '{"conn_type": "snowflake", "login": "etl", "schema": "staging",'
        ' "extra": {"account": "MyOrg-MyAccount", "database": "analytics"}}'
    ),
    "AIRFLOW_CONN_RS": (
        '{"conn_type": "redshift", "host": "examplecluster.abc123xyz789.us-west-2.redshift.amazonaws.com",'
        ' "schema": "dev", "login": "etl", "password": "x"}'
    ),
    "AIRFLOW_CONN_SHOP_MYSQL": "mysql://etl:secret@mysql.example.com/shop",
    # The demo warehouse's form: a DuckDB file named for the database, through the DuckDB provider's hook.
    "AIRFLOW_CONN_DUCK": (
        '{"conn_type": "duckdb", "host": "localhost", "extra": {"database": "/srv/demo/analytics.duckdb"}}'
    ),
}


def identity(ref: Any) -> tuple[str, str]:
    resolved = ds.resolve(ref)
    return resolved.namespace, resolved.name
