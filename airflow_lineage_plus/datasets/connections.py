"""Tables behind Airflow connections: the identity the provider's SQL hooks would give them.

When the connection's hook (from an installed provider) implements ``get_openlineage_database_info``, its
``DatabaseInfo`` decides (scheme, authority, database, name normalisation), the way ``SQLParser`` names
tables. Otherwise the same rules are applied from :data:`_ENGINES` and the connection's fields (postgres,
redshift, snowflake, mysql, sqlite, duckdb; ``<conn_type>://host:port`` for any other engine).
"""

from __future__ import annotations

import logging
import os
from collections.abc import Callable
from typing import Any

from airflow_lineage_plus.datasets.identifiers import Fold, Ident
from airflow_lineage_plus.datasets.identity import EMBEDDED_SCHEMES, Identity
from airflow_lineage_plus.datasets.platforms import host, port, redshift_identifier, snowflake_account
from airflow_lineage_plus.datasets.tables import embedded_identity, table_parts
from airflow_lineage_plus.exceptions import DatasetNameError

# The package's logger, as before the package was split into modules.
log = logging.getLogger("airflow_lineage_plus.datasets")

#: Per engine: (OpenLineage scheme, default port, name levels, default schema, identifier folding).
_ENGINES: dict[str, tuple[str, int | None, int, str | None, Fold]] = {
    "postgres": ("postgres", 5432, 3, "public", "lower"),
    "postgresql": ("postgres", 5432, 3, "public", "lower"),
    "redshift": ("redshift", 5439, 3, "public", "lower"),
    "snowflake": ("snowflake", None, 3, None, "upper"),
    "mysql": ("mysql", 3306, 2, None, "lower"),
    "sqlite": ("sqlite", None, 3, None, "lower"),
}


def _provider_database_info(connection: Any) -> Any | None:
    """The connection hook's own ``DatabaseInfo`` when a provider implements it, else None."""
    try:
        hook = connection.get_hook()
    except Exception as exc:  # provider not installed, or hook needs a driver that is missing
        log.debug("No hook for connection %r (%s); using built-in naming rules", connection.conn_id, exc)
        return None
    getter = getattr(hook, "get_openlineage_database_info", None)
    if getter is None:
        return None
    try:
        return getter(connection)
    except Exception as exc:
        log.debug(
            "%s.get_openlineage_database_info failed (%s); using built-in rules", type(hook).__name__, exc
        )
        return None


def _assemble(
    parts: list[Ident],
    database: str | None,
    default_schema: str | None,
    levels: int,
    fold_unquoted: Callable[[str], str],
    field_hint: str,
) -> str:
    names = [p.value if p.quoted else fold_unquoted(p.value) for p in parts]
    if len(names) > levels:
        raise DatasetNameError(
            f"table {'.'.join(names)!r} has {len(names)} parts; {field_hint} takes at most {levels}"
        )
    if levels == 3 and len(names) == 1:
        if default_schema is None:
            raise DatasetNameError(
                f"table {names[0]!r} has no schema and {field_hint} sets no default: write schema.table"
            )
        names.insert(0, fold_unquoted(default_schema))
    if len(names) < levels:
        if not database:
            raise DatasetNameError(
                f"table {'.'.join(names)!r} has no database and {field_hint} sets none: "
                f"write the database into the table name or set it on the connection"
            )
        names.insert(0, fold_unquoted(database))
    return ".".join(names)


def _from_database_info(info: Any, parts: list[Ident], conn_type: str) -> Identity:
    """Name a table the way ``SQLParser`` names it from the hook's ``DatabaseInfo``."""
    scheme = info.scheme
    namespace = f"{scheme}://{info.authority}" if info.authority else scheme
    engine = _ENGINES.get(scheme) or _ENGINES.get(conn_type)
    levels = engine[2] if engine else 3
    default_schema = engine[3] if engine else None
    normalize = info.normalize_name_method

    def fold(value: str) -> str:
        value = normalize(value)
        return value.upper() if info.is_uppercase_names else value

    if scheme in EMBEDDED_SCHEMES:
        return Identity(namespace, ".".join(p.value if p.quoted else fold(p.value) for p in parts))
    hint = f"the {conn_type} connection"
    return Identity(namespace, _assemble(parts, info.database, default_schema, levels, fold, hint))


def _from_connection_fields(connection: Any, conn_type: str, parts: list[Ident]) -> Identity:
    extra = getattr(connection, "extra_dejson", None) or {}
    conn_id = getattr(connection, "conn_id", "?")
    hint = f"connection {conn_id!r} ({conn_type})"
    if conn_type == "sqlite":
        path = connection.host or connection.schema or ""
        if not path:
            raise DatasetNameError(f"{hint} has no database file: set host to the SQLite file path")
        return embedded_identity("sqlite", path if path == ":memory:" else os.path.abspath(path), parts)
    if conn_type == "duckdb":
        # The DuckDB hook's precedence: extra.database, then the host; neither means in-memory.
        path = extra.get("database") or connection.host or ":memory:"
        if path.startswith("md:"):
            return Identity(f"duckdb://{path.split('?', 1)[0]}", ".".join(p.folded("lower") for p in parts))
        return embedded_identity("duckdb", path if path == ":memory:" else os.path.abspath(path), parts)
    if conn_type == "snowflake":
        account = extra.get("account") or extra.get("extra__snowflake__account") or connection.host
        if not account:
            raise DatasetNameError(f"{hint} has no account: set extra.account (myorg-myaccount)")
        region = extra.get("region") or extra.get("extra__snowflake__region")
        if region and "." not in account and "-" not in account:
            account = f"{account}.{region}"
        database = extra.get("database") or extra.get("extra__snowflake__database")
        name = _assemble(parts, database, connection.schema or None, 3, str.upper, hint)
        return Identity(f"snowflake://{snowflake_account(account)}", name)
    engine = _ENGINES.get(conn_type)
    if not connection.host:
        raise DatasetNameError(f"{hint} has no host: set the connection's host")
    if conn_type == "redshift":
        authority = redshift_identifier(connection.host, extra.get("region_name") or extra.get("region"))
        port_number = port(connection.port or 5439)
        name = _assemble(parts, connection.schema or None, "public", 3, str.lower, hint)
        return Identity(f"redshift://{authority}:{port_number}", name)
    if engine is not None:
        scheme, default_port, levels, default_schema, _fold = engine
        engine_port: int | None = connection.port or default_port
        host_name = host(connection.host, "host")
        namespace = f"{scheme}://{host_name}:{engine_port}" if engine_port else f"{scheme}://{host_name}"
        name = _assemble(parts, connection.schema or None, default_schema, levels, str.lower, hint)
        return Identity(namespace, name)
    # Any other SQL engine: <conn_type>://host:port, as DbApiHook.get_openlineage_authority_part builds it.
    host_name = host(connection.host, "host")
    namespace = (
        f"{conn_type}://{host_name}:{connection.port}" if connection.port else f"{conn_type}://{host_name}"
    )
    names = [p.value if p.quoted else p.value.lower() for p in parts]
    if len(names) < 3 and connection.schema:
        names.insert(0, connection.schema.lower())
    return Identity(namespace, ".".join(names))


def connection_identity(connection: Any, table: str) -> Identity:
    """The identity of ``table`` in the database behind an Airflow ``Connection``: the hook's
    ``DatabaseInfo`` when its provider implements one, else the built-in rules."""
    parts = table_parts(table)
    conn_type = (getattr(connection, "conn_type", None) or "").lower()
    if not conn_type:
        raise DatasetNameError(
            f"connection {getattr(connection, 'conn_id', '?')!r} has no conn_type: set it (postgres, sqlite)"
        )
    info = _provider_database_info(connection)
    if info is not None:
        return _from_database_info(info, parts, conn_type)
    return _from_connection_fields(connection, conn_type, parts)
