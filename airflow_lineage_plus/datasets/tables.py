"""SQL tables: the identity of a table on each engine (Postgres, Redshift, Snowflake, BigQuery, MySQL,
the embedded SQLite and DuckDB files), and the text of a table reached through an Airflow connection."""

from __future__ import annotations

import posixpath
import re
import urllib.parse

from airflow_lineage_plus.datasets.identifiers import Fold, Ident, join_parts, split_identifier
from airflow_lineage_plus.datasets.identity import POSTGRES_SCHEMES, ConnectionTable, Identity, require_text
from airflow_lineage_plus.datasets.platforms import (
    host,
    ol_naming,
    port,
    redshift_identifier,
    snowflake_account,
)
from airflow_lineage_plus.exceptions import DatasetNameError


def rsplit_name(name: str, count: int) -> list[str]:
    """``name`` split into ``count`` dot-separated parts (the last part keeps any further dots)."""
    pieces = name.split(".", count - 1) if count > 1 else [name]
    if len(pieces) != count:
        raise DatasetNameError(f"name {name!r} must have {count} dot-separated parts for this platform")
    return pieces


def _sql_identity(
    scheme: str, authority: str, port_number: int, fields: list[tuple[str, str]], fold: Fold
) -> Identity:
    return Identity(f"{scheme}://{authority}:{port_number}", join_parts(fields, fold))


def postgres_table(host_name: str, database: str, schema: str, table: str, port_number: int) -> Identity:
    """``postgres://<host>:<port>`` + ``database.schema.table``, unquoted identifiers lower-cased."""
    fields = [("database", database), ("schema", schema), ("table", table)]
    return _sql_identity("postgres", host(host_name, "host"), port(port_number), fields, fold="lower")


def redshift_table(
    cluster_identifier_or_host: str,
    database: str,
    schema: str,
    table: str,
    region: str | None,
    port_number: int,
) -> Identity:
    """``redshift://<cluster>.<region>:<port>`` + ``database.schema.table``, as the Amazon provider
    names it."""
    authority = redshift_identifier(cluster_identifier_or_host, region)
    fields = [("database", database), ("schema", schema), ("table", table)]
    return _sql_identity("redshift", authority, port(port_number), fields, fold="lower")


def mysql_table(host_name: str, database: str, table: str, port_number: int) -> Identity:
    """``mysql://<host>:<port>`` + ``database.table``, unquoted identifiers lower-cased."""
    fields = [("database", database), ("table", table)]
    return Identity(f"mysql://{host(host_name, 'host')}:{port_number}", join_parts(fields, fold="lower"))


def snowflake_table(account: str, database: str, schema: str, table: str) -> Identity:
    """``snowflake://<org>-<account>`` + ``DATABASE.SCHEMA.TABLE``, unquoted identifiers upper-cased."""
    parts = [("database", database), ("schema", schema), ("table", table)]
    return Identity(f"snowflake://{snowflake_account(account)}", join_parts(parts, fold="upper"))


def bigquery_table(project: str, dataset: str, table: str) -> Identity:
    """``bigquery`` + ``project.dataset.table``, case-sensitive; project ids must be lower-case."""
    project = require_text(project, "project")
    if project != project.lower():
        raise DatasetNameError(
            f"BigQuery project {project!r} has upper-case letters; project ids are lower-case: "
            f"write {project.lower()!r}"
        )
    name = join_parts([("project", project), ("dataset", dataset), ("table", table)], fold="keep")
    naming = ol_naming().BigQuery(project_id=project, dataset_name=dataset, table_name=table)
    return Identity(naming.get_namespace(), name)


def embedded_identity(scheme: str, db_path: str, table: str | list[Ident]) -> Identity:
    """An embedded database file (SQLite, DuckDB): the OpenLineage naming spec has no rule for them, so the
    namespace is ``<scheme>://<absolute database file path>`` and the name is the table as written (every
    dotted part kept, unquoted parts lower-cased as both engines match identifiers case-insensitively)."""
    if db_path != ":memory:":
        if not db_path.startswith("/"):
            raise DatasetNameError(f"{scheme} database path {db_path!r} must be absolute")
        db_path = posixpath.normpath(db_path)
    parts = split_identifier(require_text(table, "table"), "table") if isinstance(table, str) else table
    if len(parts) > 3:
        raise DatasetNameError(f"table has {len(parts)} parts; write at most database.schema.table")
    return Identity(f"{scheme}://{db_path}", ".".join(p.folded("lower") for p in parts))


def sql_namespace(scheme: str, authority: str) -> str:
    """The normalised namespace of a SQL engine found in an event: scheme alias, host case, default port,
    Snowflake account form."""
    if scheme == "snowflake":
        return f"snowflake://{snowflake_account(authority)}"
    try:
        parts = urllib.parse.urlsplit(f"//{authority}")
        port_number = parts.port
    except ValueError:
        raise DatasetNameError(f"namespace authority {authority!r} is malformed: write host:port") from None
    if scheme == "redshift":
        default_port = 5439
        host_name = redshift_identifier(parts.hostname or "", None)
    else:
        default_port = 3306 if scheme == "mysql" else 5432
        host_name = host(parts.hostname or "", "host")
    return (
        f"{'postgres' if scheme in POSTGRES_SCHEMES else scheme}://{host_name}:{port_number or default_port}"
    )


def table_parts(table: str) -> list[Ident]:
    """The identifiers of a table written as ``table``, ``schema.table`` or ``database.schema.table``."""
    parts = split_identifier(require_text(table, "table"), "table")
    if len(parts) > 3:
        raise DatasetNameError(
            f"table {table!r} has {len(parts)} parts; write table, schema.table or database.schema.table"
        )
    return parts


def connection_table(conn_id: str, table: str) -> ConnectionTable:
    """A table behind Airflow connection ``conn_id``: the id checked, the table in canonical SQL text."""
    conn_id = require_text(conn_id, "conn_id")
    if not re.fullmatch(r"[A-Za-z0-9_.\-]+", conn_id):
        raise DatasetNameError(
            f"conn_id {conn_id!r} is not an Airflow connection id: use letters, digits, '_', '-' and '.'"
        )
    return ConnectionTable(conn_id, ".".join(p.canonical() for p in table_parts(table)))
