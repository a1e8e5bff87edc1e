"""Dataset identity: one stable OpenLineage name per dataset, however an author spells it.

A lineage graph is only as good as its node identities. ``s3://lake/orders/``, ``s3a://lake//orders``,
``s3://lake/orders/date=2024-01-15/part-0000.json`` and ``S3://lake/orders/2024/01/15`` are one dataset,
and this package gives them one :class:`DatasetRef`: ``namespace="s3://lake"``, ``name="orders"``. The
partition a run touched is kept on the ref (outside equality and hashing) and is emitted as the spec's
subset facet, so the node stays the same while the partition is still recorded.

Naming follows the OpenLineage naming spec (https://openlineage.io/docs/spec/naming) through the client's
``openlineage.client.naming.dataset`` classes, and Airflow's own asset conventions, so the names match what
the OpenLineage provider emits for the same data (the Amazon provider's S3 and Redshift asset converters, the
common-io file converter, the SQL hooks' ``get_openlineage_database_info``).

Rules (``docs/datasets.md`` has the full table):

* Object stores (``s3``, ``gs``): namespace ``<scheme>://<bucket>``, name the object key without leading,
  trailing or doubled slashes (the bucket root is ``/``, as the Amazon provider names it). ``s3a``/``s3n``
  fold into ``s3``, ``gcs`` into ``gs``, schemes are case-insensitive, bucket names follow the S3/GCS rules.
* Local files: namespace ``file``, name the absolute, normalised path (``file://host`` for remote hosts).
* Tables: ``postgres://host:5432`` + ``database.schema.table``, ``redshift://cluster.region:5439`` +
  ``database.schema.table``, ``snowflake://<org>-<account>`` (or the legacy ``<locator>.<region>.<cloud>``) +
  ``DATABASE.SCHEMA.TABLE``, ``bigquery`` + ``project.dataset.table``. Unquoted identifiers fold the way the
  engine folds them (Postgres, Redshift, MySQL, SQLite: lower case; Snowflake: upper case); ``"quoted"``
  identifiers keep their case; BigQuery names are case-sensitive and kept as written. Embedded database
  files (SQLite, DuckDB), which the spec does not cover, are ``<scheme>://<absolute file path>`` + the table
  as written (every dotted part kept).
* Partitions are reduced to the dataset root. The client's own trimmers
  (``openlineage.client.dataset.trimmers``: ``key=value``, ``2024-01-15``/``20240115``, ``2024/01[/15]``,
  ``2024-01``/``202401``) are applied to a fixed point. Beyond them, this package also drops a *file name that
  sits inside a partition* (``orders/date=2024-01-15/part-0000.json`` -> ``orders``) and treats a file whose
  stem is a date (``reports/2024-01-15.csv``) as a daily partition of its folder. A file directly under an
  ordinary prefix (``orders/orders.json``) is its own dataset: the author pointed at a file, and we do not
  guess that a folder was meant.
* SQL tables reached through an Airflow connection (:func:`sql_table`) are lazy: the namespace is derived from
  the connection when the task runs, the way the provider's SQL hooks derive it.

Bad input raises :class:`DatasetNameError` (a ``ValueError``) naming the field and the fix. Importing this
package imports neither Airflow nor the OpenLineage client; both are imported when first needed.

The package is laid out by concept, in layers (:mod:`.identity` lists them): identifiers, platforms, paths,
tables, URIs and connections compute identities; :mod:`.refs` holds the ref types; :mod:`.helpers` the
public helpers.
"""

from __future__ import annotations

from airflow_lineage_plus.datasets.helpers import (
    bigquery,
    dataset,
    from_asset,
    gcs,
    local_file,
    normalize_uri,
    postgres,
    redshift,
    resolve,
    s3,
    snowflake,
    sql_table,
)
from airflow_lineage_plus.datasets.identity import CONNECTION_TABLE_SCHEME
from airflow_lineage_plus.datasets.identity import OPAQUE_SCHEME as OPAQUE_SCHEME
from airflow_lineage_plus.datasets.refs import (
    AnyRef,
    ConnectionTableRef,
    DatasetRef,
    from_connection,
    parse_ref,
)
from airflow_lineage_plus.exceptions import DatasetNameError

__all__ = [
    "CONNECTION_TABLE_SCHEME",
    "AnyRef",
    "ConnectionTableRef",
    "DatasetNameError",
    "DatasetRef",
    "bigquery",
    "dataset",
    "from_asset",
    "from_connection",
    "gcs",
    "local_file",
    "normalize_uri",
    "parse_ref",
    "postgres",
    "redshift",
    "resolve",
    "s3",
    "snowflake",
    "sql_table",
]
