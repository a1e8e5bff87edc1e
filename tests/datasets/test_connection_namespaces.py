"""Tables behind Airflow connections get the namespace the provider's SQL hooks would give them."""

from __future__ import annotations

from pathlib import Path

import pytest

from airflow_lineage_plus import datasets as ds
from airflow_lineage_plus.datasets import ConnectionTableRef, DatasetNameError
from tests.datasets.dataset_support import CONNECTIONS, WAREHOUSE_DB, identity


def test_sql_table_is_lazy_and_only_reads_the_connection_when_resolved(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    ref = ds.sql_table("late_bound", "staging.orders")  # no such connection yet: parse time must not care
    assert isinstance(ref, ConnectionTableRef)
    assert ref.uri == "x-sql-conn://late_bound/staging.orders"
    with pytest.raises(DatasetNameError, match="AIRFLOW_CONN_LATE_BOUND"):
        ds.resolve(ref)
    monkeypatch.setenv("AIRFLOW_CONN_LATE_BOUND", "postgres://u:p@warehouse.internal:6432/analytics")
    assert identity(ref) == ("postgres://warehouse.internal:6432", "analytics.staging.orders")


def test_postgres_namespace_matches_the_sql_hooks_authority(connections: None) -> None:
    from airflow.providers.common.sql.hooks.sql import DbApiHook
    from airflow.sdk import BaseHook

    for conn_id in ("shop_pg", "shop_pg_port"):
        conn = BaseHook.get_connection(conn_id)
        authority = DbApiHook.get_openlineage_authority_part(conn, default_port=5432)
        assert ds.resolve(ds.sql_table(conn_id, "public.orders")).namespace == f"postgres://{authority}"


def test_redshift_connection_uses_the_providers_hook_and_agrees_with_the_helper(connections: None) -> None:
    from airflow.providers.amazon.aws.hooks.redshift_sql import RedshiftSQLHook
    from airflow.providers.openlineage.sqlparser import SQLParser
    from airflow.sdk import BaseHook

    conn = BaseHook.get_connection("rs")
    info = RedshiftSQLHook(redshift_conn_id="rs").get_openlineage_database_info(conn)
    resolved = ds.resolve(ds.sql_table("rs", "public.orders"))
    assert resolved.namespace == SQLParser.create_namespace(info)
    assert resolved.name == f"{info.database}.public.orders"
    assert resolved == ds.redshift(conn.host or "", "dev", "public", "orders")


def test_sqlite_warehouse_keeps_every_table_part(connections: None) -> None:
    three = identity(ds.sql_table("warehouse", "analytics.staging.stg_orders"))
    two = identity(ds.sql_table("warehouse", "staging.stg_orders"))
    one = identity(ds.sql_table("warehouse", "stg_orders"))
    assert three == (f"sqlite://{WAREHOUSE_DB}", "analytics.staging.stg_orders")
    assert two == (f"sqlite://{WAREHOUSE_DB}", "staging.stg_orders")
    assert one == (f"sqlite://{WAREHOUSE_DB}", "stg_orders")


def test_sqlite_relative_path_is_made_absolute_at_resolution(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("AIRFLOW_CONN_REL_DB", '{"conn_type": "sqlite", "host": "demo/warehouse.db"}')
    assert ds.resolve(ds.sql_table("rel_db", "orders")).namespace == f"sqlite://{tmp_path}/demo/warehouse.db"


def test_duckdb_connection_follows_the_hooks_database_precedence(monkeypatch: pytest.MonkeyPatch) -> None:
    from airflow.providers.duckdb.hooks.duckdb import DuckDBHook
    from airflow.sdk import BaseHook

    monkeypatch.setenv("AIRFLOW_CONN_DUCK", CONNECTIONS["AIRFLOW_CONN_DUCK"])
    hook = BaseHook.get_connection("duck").get_hook()
    assert isinstance(hook, DuckDBHook)
    assert hook.get_openlineage_database_info(BaseHook.get_connection("duck")) is None  # so our rules decide
    assert ds.resolve(ds.sql_table("duck", "stg_orders")).namespace == f"duckdb://{hook.get_database()}"
    monkeypatch.setenv("AIRFLOW_CONN_DUCK_HOST", '{"conn_type": "duckdb", "host": "/srv/demo/other.duckdb"}')
    assert identity(ds.sql_table("duck_host", "main.t")) == ("duckdb:///srv/demo/other.duckdb", "main.t")


def test_snowflake_connection_uses_account_database_and_schema(connections: None) -> None:
    assert identity(ds.sql_table("snow", "orders")) == (
        "snowflake://myorg-myaccount",
        "ANALYTICS.STAGING.ORDERS",
    )
    assert identity(ds.sql_table("snow", 'raw."events"')) == (
        "snowflake://myorg-myaccount",
        "ANALYTICS.RAW.events",
    )


def test_unknown_sql_engine_falls_back_to_conn_type_host_and_port(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("AIRFLOW_CONN_LAKEHOUSE", "trino://etl@Trino.Example.com:8443/hive")
    assert identity(ds.sql_table("lakehouse", "sales.orders")) == (
        "trino://trino.example.com:8443",
        "hive.sales.orders",
    )
