"""The warehouse, through whatever SQL hook the ``warehouse`` Airflow connection names.

Only the generic ``DbApiHook`` API is used and the SQL is plain ANSI with three-part names
(``analytics.staging.stg_orders``), which DuckDB (the demo), Postgres (database ``analytics``) and
Snowflake all accept: moving the pipelines is a change of connection, not of code.
"""

from __future__ import annotations

from collections.abc import Sequence
from contextlib import closing
from datetime import date
from typing import Any

from airflow.providers.common.sql.hooks.sql import DbApiHook
from airflow.sdk import BaseHook

WAREHOUSE_CONN_ID = "warehouse"


def hook() -> DbApiHook:
    """The SQL hook of the ``warehouse`` connection (DuckDB, Postgres, Snowflake, ...)."""
    found = BaseHook.get_connection(WAREHOUSE_CONN_ID).get_hook()
    if not isinstance(found, DbApiHook):
        raise TypeError(
            f"connection {WAREHOUSE_CONN_ID!r} gives a {type(found).__name__}, not a SQL (DbApiHook) hook"
        )
    return found


def ensure_table(table: str, columns: Sequence[tuple[str, str]]) -> None:
    """Create ``database.schema.table`` (and its schema) if missing, with ``(name, SQL type)`` columns."""
    database_schema = table.rsplit(".", 1)[0]
    ddl = ", ".join(f"{name} {sql_type}" for name, sql_type in columns)
    hook().run(
        [f"CREATE SCHEMA IF NOT EXISTS {database_schema}", f"CREATE TABLE IF NOT EXISTS {table} ({ddl})"]
    )


def date_literal(day: date) -> str:
    """A SQL DATE literal; built from a ``date`` object, so it cannot carry anything else."""
    return f"DATE '{day.isoformat()}'"


def replace_rows(table: str, where: str, columns: Sequence[str], rows: Sequence[Sequence[Any]]) -> None:
    """Delete the rows matching ``where`` and insert ``rows``: a re-run replaces what it wrote before."""
    warehouse = hook()
    warehouse.run(f"DELETE FROM {table} WHERE {where}")
    if rows:
        warehouse.insert_rows(table, list(rows), target_fields=list(columns), commit_every=1000)


def run(sql: str | list[str]) -> None:
    hook().run(sql)


def select(sql: str) -> list[dict[str, Any]]:
    """Rows of a query as dictionaries keyed by column name."""
    warehouse = hook()
    with closing(warehouse.get_conn()) as conn:
        cursor = conn.cursor()
        try:
            cursor.execute(sql)
            names = [column[0] for column in cursor.description]
            return [dict(zip(names, row, strict=True)) for row in cursor.fetchall()]
        finally:
            cursor.close()
