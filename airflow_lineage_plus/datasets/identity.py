"""The bottom layer of dataset identity: the values every builder returns, and the scheme names.

The builders below :mod:`.refs` (paths, tables, URIs, connections) return an :class:`Identity` (or a
:class:`ConnectionTable`), plain tuples that :mod:`.refs` turns into ``DatasetRef``/``ConnectionTableRef``.
That keeps the modules in layers: the ref types use the builders, the builders never use the ref types.

Layers, bottom to top (a module imports only modules listed before it)::

    identity      Identity, ConnectionTable, scheme names, require_text
    identifiers   SQL identifier splitting, quoting and folding
    platforms     hosts, ports, bucket rules, Snowflake accounts, Redshift identifiers
    paths         path cleaning, partition reduction, object-store and local-file identities
    tables        SQL table identities per engine, connection-table text
    uri           URI -> identity, identity -> URI, OpenLineage (namespace, name) -> identity: tables
    connections   the identity of a table behind an Airflow connection
    refs          DatasetRef, ConnectionTableRef, parse_ref, from_connection
    helpers       the public helpers (s3, gcs, postgres, ..., dataset, resolve, from_asset)
"""

from __future__ import annotations

from typing import Any, NamedTuple

from airflow_lineage_plus.exceptions import DatasetNameError

#: Asset URI scheme of a table reached through an Airflow connection: ``x-sql-conn://<conn_id>/<table>``.
#: Airflow leaves ``x-`` schemes as written (no provider normaliser), which keeps the URI deterministic at
#: parse time, before the connection (and so the real host) is known.
CONNECTION_TABLE_SCHEME = "x-sql-conn"
#: Asset URI scheme for a DatasetRef whose namespace is not a URI (``x-openlineage://<namespace>/<name>``).
OPAQUE_SCHEME = "x-openlineage"

S3_SCHEMES = frozenset({"s3", "s3a", "s3n"})
GCS_SCHEMES = frozenset({"gs", "gcs"})
POSTGRES_SCHEMES = frozenset({"postgres", "postgresql"})
EMBEDDED_SCHEMES = frozenset({"sqlite", "duckdb"})
FILE_NAMESPACE = "file"
BIGQUERY_NAMESPACE = "bigquery"


class Identity(NamedTuple):
    """A dataset's normalised OpenLineage identity, and the partition the spelling named (if any)."""

    namespace: str
    name: str
    partition: dict[str, str] | None = None
    partition_path: str | None = None


class ConnectionTable(NamedTuple):
    """A table behind an Airflow connection, as written (unquoted identifiers lower-cased)."""

    conn_id: str
    table: str


def require_text(value: Any, field: str) -> str:
    """``value`` stripped; DatasetNameError when it is not a string or is blank."""
    if not isinstance(value, str):
        raise DatasetNameError(f"{field} must be a string, got {type(value).__name__}")
    text = value.strip()
    if not text:
        raise DatasetNameError(f"{field} is empty: give the dataset's {field}")
    return text
