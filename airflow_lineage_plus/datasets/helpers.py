"""The public helpers: one per platform (:func:`s3`, :func:`postgres`, ...), :func:`sql_table` for a table
behind an Airflow connection, and the generic ones (:func:`dataset`, :func:`resolve`, :func:`from_asset`,
:func:`normalize_uri`)."""

from __future__ import annotations

import logging
import os
from collections.abc import Iterable
from typing import Any

from airflow_lineage_plus.datasets.identity import GCS_SCHEMES, S3_SCHEMES, require_text
from airflow_lineage_plus.datasets.paths import file_identity, object_store_identity
from airflow_lineage_plus.datasets.refs import (
    AnyRef,
    ConnectionTableRef,
    DatasetRef,
    connection_table_ref,
    dataset_ref,
    parse_ref,
)
from airflow_lineage_plus.datasets.tables import (
    bigquery_table,
    connection_table,
    postgres_table,
    redshift_table,
    snowflake_table,
)
from airflow_lineage_plus.exceptions import DatasetNameError

# The package's logger, as before the package was split into modules.
log = logging.getLogger("airflow_lineage_plus.datasets")


def _object_store(
    helper: str, schemes: Iterable[str], scheme: str, bucket_or_uri: str, key: str | None
) -> DatasetRef:
    """The shared body of :func:`s3` and :func:`gcs`: a bucket URI, ``bucket/key`` or bucket plus key."""
    text = require_text(bucket_or_uri, "bucket")
    if "://" in text:
        given = text.split("://", 1)[0].lower()
        if key is not None:  # a bucket URI plus a key
            text = text.rstrip("/") + "/" + key.lstrip("/")
        if given not in schemes:
            raise DatasetNameError(
                f"{helper}() got a {given}:// URI {text!r}: use dataset() or the matching helper"
            )
        return DatasetRef.from_uri(text)
    if "/" in text:
        if key is not None:
            raise DatasetNameError(
                f"bucket {text!r} contains '/': pass the bucket alone and the key separately"
            )
        text, _, key = text.partition("/")
    return dataset_ref(object_store_identity(scheme, text, key or ""))


def s3(bucket_or_uri: str, key: str | None = None) -> DatasetRef:
    """An S3 dataset: ``s3("s3://bucket/prefix/")`` or ``s3("bucket", "prefix")``."""
    return _object_store("s3", S3_SCHEMES, "s3", bucket_or_uri, key)


def gcs(bucket_or_uri: str, key: str | None = None) -> DatasetRef:
    """A Google Cloud Storage dataset: ``gcs("gs://bucket/prefix")`` or ``gcs("bucket", "prefix")``."""
    return _object_store("gcs", GCS_SCHEMES, "gs", bucket_or_uri, key)


def local_file(path: str | os.PathLike[str]) -> DatasetRef:
    """A file or folder on the local file system, by absolute path (``file:///abs/path`` also accepted)."""
    text = require_text(os.fspath(path), "path")
    if text.lower().startswith("file:"):
        return DatasetRef.from_uri(text)
    return dataset_ref(file_identity("", text))


def postgres(host: str, database: str, schema: str, table: str, port: int = 5432) -> DatasetRef:
    """A Postgres table; unquoted identifiers are lower-cased as Postgres folds them."""
    return dataset_ref(postgres_table(host, database, schema, table, port))


def redshift(
    cluster_identifier_or_host: str,
    database: str,
    schema: str,
    table: str,
    region: str | None = None,
    port: int = 5439,
) -> DatasetRef:
    """A Redshift table: namespace ``redshift://<cluster>.<region>:<port>`` as the Amazon provider builds it.

    Give the endpoint host (``cluster.abc123.us-east-1.redshift.amazonaws.com``), or the cluster identifier
    and ``region``.
    """
    return dataset_ref(redshift_table(cluster_identifier_or_host, database, schema, table, region, port))


def snowflake(account: str, database: str, schema: str, table: str) -> DatasetRef:
    """A Snowflake table: namespace ``snowflake://<org>-<account>``, name ``DATABASE.SCHEMA.TABLE``.

    ``account`` may be ``myorg-myaccount``, a legacy locator (``xy12345``, ``xy12345.us-east-1``) or the
    account URL (``https://myorg-myaccount.snowflakecomputing.com``).
    """
    return dataset_ref(snowflake_table(account, database, schema, table))


def bigquery(project: str, dataset: str, table: str) -> DatasetRef:
    """A BigQuery table: namespace ``bigquery``, name ``project.dataset.table`` (case-sensitive)."""
    return dataset_ref(bigquery_table(project, dataset, table))


def sql_table(conn_id: str, table: str) -> ConnectionTableRef:
    """A table in the SQL database behind Airflow connection ``conn_id`` (``schema.table`` or 3 parts).

    Nothing is looked up now; :func:`resolve` reads the connection when the task runs.
    """
    return connection_table_ref(connection_table(conn_id, table))


def dataset(uri: str) -> AnyRef:
    """Any dataset by URI, normalised: ``dataset("s3a://lake//orders/")``; also ``x-sql-conn://`` URIs."""
    return parse_ref(uri)


def from_asset(asset_or_uri: Any) -> DatasetRef | None:
    """The DatasetRef an Airflow Asset (or its URI) stands for, or None when it names no known dataset.

    Connection-table assets (``x-sql-conn://``) are resolved through the connection; when that fails, the
    result is None and the reason is logged at debug level. Never raises.
    """
    try:
        ref = parse_ref(asset_or_uri)
        return resolve(ref)
    except Exception as exc:
        log.debug("No dataset identity for %r: %s", asset_or_uri, exc)
        return None


def resolve(ref: AnyRef | str) -> DatasetRef:
    """A DatasetRef for any ref: lazy connection tables are resolved, DatasetRefs pass through."""
    if isinstance(ref, str):
        ref = parse_ref(ref)
    if isinstance(ref, ConnectionTableRef):
        return ref.resolve()
    if isinstance(ref, DatasetRef):
        return ref
    raise DatasetNameError(f"expected a DatasetRef, ConnectionTableRef or URI, got {type(ref).__name__}")


def normalize_uri(uri: str) -> str:
    """The canonical URI of a dataset URI, partition reduced; applying it twice changes nothing."""
    return parse_ref(uri).uri
