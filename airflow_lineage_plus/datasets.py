"""Dataset identity: one stable OpenLineage name per dataset, however an author spells it.

A lineage graph is only as good as its node identities. ``s3://lake/orders/``, ``s3a://lake//orders``,
``s3://lake/orders/date=2024-01-15/part-0000.json`` and ``S3://lake/orders/2024/01/15`` are one dataset,
and this module gives them one :class:`DatasetRef`: ``namespace="s3://lake"``, ``name="orders"``. The
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
  ``2024-01``/``202401``) are applied to a fixed point. Beyond them, this module also drops a *file name that
  sits inside a partition* (``orders/date=2024-01-15/part-0000.json`` -> ``orders``) and treats a file whose
  stem is a date (``reports/2024-01-15.csv``) as a daily partition of its folder. A file directly under an
  ordinary prefix (``orders/orders.json``) is its own dataset: the author pointed at a file, and we do not
  guess that a folder was meant.
* SQL tables reached through an Airflow connection (:func:`sql_table`) are lazy: the namespace is derived from
  the connection when the task runs, the way the provider's SQL hooks derive it.

Bad input raises :class:`DatasetNameError` (a ``ValueError``) naming the field and the fix. Importing this
module imports neither Airflow nor the OpenLineage client; both are imported when first needed.
"""

from __future__ import annotations

import ipaddress
import logging
import os
import posixpath
import re
import urllib.parse
from collections.abc import Iterable, Mapping
from functools import cache
from typing import TYPE_CHECKING, Any, Literal, Union

import attrs

if TYPE_CHECKING:
    from airflow.sdk import Asset
    from openlineage.client.dataset.trimmers import DatasetNameTrimmer
    from openlineage.client.event_v2 import InputDataset, OutputDataset
    from openlineage.client.facet_v2 import base_subset_dataset

    SubsetFacet = Union[  # noqa: UP007
        base_subset_dataset.InputSubsetInputDatasetFacet, base_subset_dataset.OutputSubsetOutputDatasetFacet
    ]

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

log = logging.getLogger(__name__)

#: Asset URI scheme of a table reached through an Airflow connection: ``x-sql-conn://<conn_id>/<table>``.
#: Airflow leaves ``x-`` schemes as written (no provider normaliser), which keeps the URI deterministic at
#: parse time, before the connection (and so the real host) is known.
CONNECTION_TABLE_SCHEME = "x-sql-conn"
#: Asset URI scheme for a DatasetRef whose namespace is not a URI (``x-openlineage://<namespace>/<name>``).
OPAQUE_SCHEME = "x-openlineage"

_S3_SCHEMES = frozenset({"s3", "s3a", "s3n"})
_GCS_SCHEMES = frozenset({"gs", "gcs"})
_POSTGRES_SCHEMES = frozenset({"postgres", "postgresql"})
_EMBEDDED_SCHEMES = frozenset({"sqlite", "duckdb"})
_FILE_NAMESPACE = "file"
_BIGQUERY_NAMESPACE = "bigquery"


class DatasetNameError(ValueError):
    """A dataset reference that cannot name a dataset; the message names the field and the fix."""


# ----------------------------------------------------------------------------------------------------
# Value types
# ----------------------------------------------------------------------------------------------------


def _check_part(field: str) -> Any:
    def check(_instance: object, _attribute: attrs.Attribute[str], value: str) -> None:
        if not isinstance(value, str):
            raise DatasetNameError(f"{field} must be a string, got {type(value).__name__}")
        if not value.strip():
            raise DatasetNameError(f"{field} is empty: give the dataset's {field}")
        if value != value.strip():
            raise DatasetNameError(f"{field} {value!r} has surrounding whitespace: write {value.strip()!r}")

    return check


def _partition_converter(value: Mapping[str, Any] | None) -> dict[str, str] | None:
    if value is None:
        return None
    if not isinstance(value, Mapping):
        raise DatasetNameError(
            f"partition must be a mapping of dimension to value, got {type(value).__name__}"
        )
    out: dict[str, str] = {}
    for key, val in value.items():
        if not str(key).strip():
            raise DatasetNameError("partition has an empty dimension name: name every dimension")
        out[str(key)] = str(val)
    return out or None


@attrs.frozen
class DatasetRef:
    """One dataset's OpenLineage identity: ``namespace`` + ``name``.

    ``partition`` (dimension -> value) and ``partition_path`` (the path fragment it came from) describe the
    subset a run touched; they are *not* part of equality or hashing, so every partition of a dataset is the
    same graph node. Build refs with the helpers (:func:`s3`, :func:`postgres`, :func:`dataset`, ...) or
    :meth:`DatasetRef.of`, which normalise; the bare constructor only validates.
    """

    namespace: str = attrs.field(validator=_check_part("namespace"))
    name: str = attrs.field(validator=_check_part("name"))
    partition: dict[str, str] | None = attrs.field(
        default=None, eq=False, converter=_partition_converter, kw_only=True
    )
    partition_path: str | None = attrs.field(default=None, eq=False, kw_only=True)

    # -- construction ----------------------------------------------------------------------------------------

    @classmethod
    def of(cls, namespace: str, name: str, *, partition: Mapping[str, Any] | None = None) -> DatasetRef:
        """A normalised ref from an OpenLineage (namespace, name) pair as found in events."""
        ref = _from_namespace_and_name(_strip(namespace, "namespace"), _strip(name, "name"))
        return ref.with_partition(partition) if partition else ref

    @classmethod
    def from_uri(cls, uri: str) -> DatasetRef:
        """A normalised ref from a URI (``s3://b/k``, ``postgres://h:5432/db/schema/table``, ``/abs/p``)."""
        ref = parse_ref(uri)
        if isinstance(ref, ConnectionTableRef):
            raise DatasetNameError(
                f"uri {uri!r} names a table through connection {ref.conn_id!r}; its identity is only known "
                f"when the task runs: use parse_ref()/sql_table() and resolve() it"
            )
        return ref

    @classmethod
    def parse(cls, text: str) -> DatasetRef:
        """A ref from a URI or from a Marquez node id (``dataset:<namespace>:<name>``)."""
        text = _strip(text, "dataset")
        if text.startswith("dataset:"):
            namespace, name = _split_node_id(text)
            return cls.of(namespace, name)
        return cls.from_uri(text)

    def with_partition(self, partition: Mapping[str, Any] | None = None, /, **dimensions: Any) -> DatasetRef:
        """The same dataset with the partition a run touched: ``ref.with_partition(date="2024-01-15")``."""
        merged: dict[str, Any] = dict(partition or {})
        merged.update(dimensions)
        if not merged:
            return attrs.evolve(self, partition=None, partition_path=None)
        path = "/".join(f"{key}={value}" for key, value in merged.items())
        return attrs.evolve(self, partition=merged, partition_path=path)

    # -- views -----------------------------------------------------------------------------------------------

    @property
    def id(self) -> str:
        """Marquez's node id for the dataset: ``dataset:<namespace>:<name>``."""
        return f"dataset:{self.namespace}:{self.name}"

    @property
    def uri(self) -> str:
        """A URI Airflow's ``Asset`` accepts and that parses back to this ref (partition not included)."""
        return _uri_of(self.namespace, self.name)

    def to_asset(self, **kwargs: Any) -> Asset:
        """An ``airflow.sdk.Asset`` for this dataset; its name is the URI, so it is stable across DAGs."""
        from airflow.sdk import Asset

        return Asset(name=self.uri, uri=self.uri, **kwargs)

    def subset_facet(self, direction: Literal["input", "output"] = "input") -> SubsetFacet | None:
        """The spec's subset facet (a partition condition) for the partition, or None without one."""
        if not self.partition:
            return None
        from openlineage.client.facet_v2 import base_subset_dataset as subset

        condition = subset.PartitionSubsetCondition(
            partitions=[subset.Partition(dimensions=dict(self.partition), identifier=self.partition_path)]
        )
        if direction == "input":
            return subset.InputSubsetInputDatasetFacet(inputCondition=condition)
        if direction == "output":
            return subset.OutputSubsetOutputDatasetFacet(outputCondition=condition)
        raise DatasetNameError(f"direction must be 'input' or 'output', got {direction!r}")

    def as_input(self, facets: Mapping[str, Any] | None = None) -> InputDataset:
        """An OpenLineage ``InputDataset`` with the subset facet when a partition is set."""
        from openlineage.client.event_v2 import InputDataset

        subset = self.subset_facet("input")
        return InputDataset(
            namespace=self.namespace,
            name=self.name,
            facets=dict(facets or {}),
            inputFacets={"subset": subset} if subset is not None else {},  # type: ignore[dict-item]
        )

    def as_output(self, facets: Mapping[str, Any] | None = None) -> OutputDataset:
        """An OpenLineage ``OutputDataset`` with the subset facet when a partition is set."""
        from openlineage.client.event_v2 import OutputDataset

        subset = self.subset_facet("output")
        return OutputDataset(
            namespace=self.namespace,
            name=self.name,
            facets=dict(facets or {}),
            outputFacets={"subset": subset} if subset is not None else {},  # type: ignore[dict-item]
        )

    def __str__(self) -> str:
        return self.id


@attrs.frozen
class ConnectionTableRef:
    """A SQL table reached through an Airflow connection; its identity is resolved when the task runs.

    ``table`` is the table as written, with unquoted identifiers lower-cased (SQL folds unquoted identifiers,
    so ``Analytics.Staging.STG_ORDERS`` and ``analytics.staging.stg_orders`` are one table); :meth:`resolve`
    applies the engine's own folding (Snowflake: upper case). The Asset URI is
    ``x-sql-conn://<conn_id>/<table>``: a real URI needs the connection's host, which must not be looked up at
    DAG parse time.
    """

    conn_id: str = attrs.field(validator=_check_part("conn_id"))
    table: str = attrs.field(validator=_check_part("table"))
    partition: dict[str, str] | None = attrs.field(
        default=None, eq=False, converter=_partition_converter, kw_only=True
    )

    @property
    def parts(self) -> tuple[_Ident, ...]:
        return tuple(_split_identifier(self.table, "table"))

    @property
    def key(self) -> str:
        """A parse-time identity string: ``conn:<conn_id>:<table>``."""
        return f"conn:{self.conn_id}:{self.table}"

    @property
    def uri(self) -> str:
        return f"{CONNECTION_TABLE_SCHEME}://{self.conn_id}/{urllib.parse.quote(self.table, safe='.')}"

    def to_asset(self, **kwargs: Any) -> Asset:
        from airflow.sdk import Asset

        return Asset(name=self.uri, uri=self.uri, **kwargs)

    def with_partition(
        self, partition: Mapping[str, Any] | None = None, /, **dimensions: Any
    ) -> ConnectionTableRef:
        merged: dict[str, Any] = dict(partition or {})
        merged.update(dimensions)
        return attrs.evolve(self, partition=merged or None)

    def resolve(self, connection: Any | None = None) -> DatasetRef:
        """The table's DatasetRef, from ``connection`` or from ``BaseHook.get_connection(conn_id)``."""
        if connection is None:
            from airflow.sdk import BaseHook

            try:
                connection = BaseHook.get_connection(self.conn_id)
            except Exception as exc:
                raise DatasetNameError(
                    f"sql_table({self.conn_id!r}, {self.table!r}): connection {self.conn_id!r} could not be "
                    f"loaded ({exc}); define it (AIRFLOW_CONN_{self.conn_id.upper()} or the Connections UI)"
                ) from exc
        ref = from_connection(connection, self.table)
        return ref.with_partition(self.partition) if self.partition else ref

    def __str__(self) -> str:
        return self.key


AnyRef = Union[DatasetRef, ConnectionTableRef]  # noqa: UP007 - a runtime alias


# ----------------------------------------------------------------------------------------------------
# Public helpers
# ----------------------------------------------------------------------------------------------------


def _object_store(
    helper: str, schemes: Iterable[str], scheme: str, bucket_or_uri: str, key: str | None
) -> DatasetRef:
    """The shared body of :func:`s3` and :func:`gcs`: a bucket URI, ``bucket/key`` or bucket plus key."""
    text = _strip(bucket_or_uri, "bucket")
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
    return _object_store_ref(scheme, text, key or "")


def s3(bucket_or_uri: str, key: str | None = None) -> DatasetRef:
    """An S3 dataset: ``s3("s3://bucket/prefix/")`` or ``s3("bucket", "prefix")``."""
    return _object_store("s3", _S3_SCHEMES, "s3", bucket_or_uri, key)


def gcs(bucket_or_uri: str, key: str | None = None) -> DatasetRef:
    """A Google Cloud Storage dataset: ``gcs("gs://bucket/prefix")`` or ``gcs("bucket", "prefix")``."""
    return _object_store("gcs", _GCS_SCHEMES, "gs", bucket_or_uri, key)


def local_file(path: str | os.PathLike[str]) -> DatasetRef:
    """A file or folder on the local file system, by absolute path (``file:///abs/path`` also accepted)."""
    text = _strip(os.fspath(path), "path")
    if text.lower().startswith("file:"):
        return DatasetRef.from_uri(text)
    return _file_ref("", text)


def postgres(host: str, database: str, schema: str, table: str, port: int = 5432) -> DatasetRef:
    """A Postgres table; unquoted identifiers are lower-cased as Postgres folds them."""
    return _sql_ref(
        "postgres",
        _host(host, "host"),
        _port(port),
        [("database", database), ("schema", schema), ("table", table)],
        fold="lower",
    )


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
    authority = _redshift_identifier(cluster_identifier_or_host, region)
    return _sql_ref(
        "redshift",
        authority,
        _port(port),
        [("database", database), ("schema", schema), ("table", table)],
        fold="lower",
    )


def snowflake(account: str, database: str, schema: str, table: str) -> DatasetRef:
    """A Snowflake table: namespace ``snowflake://<org>-<account>``, name ``DATABASE.SCHEMA.TABLE``.

    ``account`` may be ``myorg-myaccount``, a legacy locator (``xy12345``, ``xy12345.us-east-1``) or the
    account URL (``https://myorg-myaccount.snowflakecomputing.com``).
    """
    parts = [("database", database), ("schema", schema), ("table", table)]
    return DatasetRef(f"snowflake://{_snowflake_account(account)}", _join_parts(parts, fold="upper"))


def bigquery(project: str, dataset: str, table: str) -> DatasetRef:
    """A BigQuery table: namespace ``bigquery``, name ``project.dataset.table`` (case-sensitive)."""
    project = _strip(project, "project")
    if project != project.lower():
        raise DatasetNameError(
            f"BigQuery project {project!r} has upper-case letters; project ids are lower-case: "
            f"write {project.lower()!r}"
        )
    name = _join_parts([("project", project), ("dataset", dataset), ("table", table)], fold="keep")
    naming = _ol_naming().BigQuery(project_id=project, dataset_name=dataset, table_name=table)
    return DatasetRef(naming.get_namespace(), name)


def sql_table(conn_id: str, table: str) -> ConnectionTableRef:
    """A table in the SQL database behind Airflow connection ``conn_id`` (``schema.table`` or 3 parts).

    Nothing is looked up now; :func:`resolve` reads the connection when the task runs.
    """
    conn_id = _strip(conn_id, "conn_id")
    if not re.fullmatch(r"[A-Za-z0-9_.\-]+", conn_id):
        raise DatasetNameError(
            f"conn_id {conn_id!r} is not an Airflow connection id: use letters, digits, '_', '-' and '.'"
        )
    parts = _split_identifier(_strip(table, "table"), "table")
    if len(parts) > 3:
        raise DatasetNameError(
            f"table {table!r} has {len(parts)} parts; write table, schema.table or database.schema.table"
        )
    return ConnectionTableRef(conn_id, ".".join(p.canonical() for p in parts))


def dataset(uri: str) -> AnyRef:
    """Any dataset by URI, normalised: ``dataset("s3a://lake//orders/")``; also ``x-sql-conn://`` URIs."""
    return parse_ref(uri)


def parse_ref(value: str | Asset | AnyRef) -> AnyRef:
    """A ref from a URI, a Marquez node id, an Airflow Asset or a ref; raises DatasetNameError."""
    if isinstance(value, DatasetRef | ConnectionTableRef):
        return value
    uri = getattr(value, "uri", value)
    if not isinstance(uri, str):
        raise DatasetNameError(f"expected a dataset URI string or an Asset, got {type(value).__name__}")
    text = _strip(uri, "uri")
    if text.startswith("dataset:"):
        namespace, name = _split_node_id(text)
        return DatasetRef.of(namespace, name)
    return _parse_uri(text)


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


def from_connection(connection: Any, table: str) -> DatasetRef:
    """The DatasetRef of ``table`` in the database behind an Airflow ``Connection``.

    The namespace is built the way the provider's SQL hooks build it: when the connection's hook (from an
    installed provider) implements ``get_openlineage_database_info``, its ``DatabaseInfo`` decides (scheme,
    authority, database, name normalisation). Otherwise the same rules are applied from this module's table
    of engines (postgres, redshift, snowflake, mysql, sqlite, duckdb; ``<conn_type>://host:port`` for others).
    """
    parts = _split_identifier(_strip(table, "table"), "table")
    if len(parts) > 3:
        raise DatasetNameError(
            f"table {table!r} has {len(parts)} parts; write table, schema.table or database.schema.table"
        )
    conn_type = (getattr(connection, "conn_type", None) or "").lower()
    if not conn_type:
        raise DatasetNameError(
            f"connection {getattr(connection, 'conn_id', '?')!r} has no conn_type: set it (postgres, sqlite)"
        )
    info = _provider_database_info(connection)
    if info is not None:
        return _ref_from_database_info(info, parts, conn_type)
    return _ref_from_connection_fields(connection, conn_type, parts)


# ----------------------------------------------------------------------------------------------------
# SQL identifiers
# ----------------------------------------------------------------------------------------------------


@attrs.frozen
class _Ident:
    value: str
    quoted: bool

    def canonical(self) -> str:
        """SQL text for the identifier: unquoted lower-cased, quoted kept in quotes (``""`` escaped)."""
        if self.quoted:
            return '"' + self.value.replace('"', '""') + '"'
        return self.value.lower()

    def folded(self, fold: Literal["lower", "upper", "keep"]) -> str:
        """The identifier as OpenLineage names it: quotes removed, unquoted parts folded."""
        if self.quoted or fold == "keep":
            return self.value
        return self.value.lower() if fold == "lower" else self.value.upper()


def _split_identifier(text: str, field: str) -> list[_Ident]:
    """Split ``a."B.c".d`` into identifiers, honouring double quotes (``""`` escapes a quote)."""
    parts: list[_Ident] = []
    i, n = 0, len(text)
    while True:
        if i < n and text[i] == '"':
            j, buf = i + 1, []
            while True:
                if j >= n:
                    raise DatasetNameError(
                        f"{field} {text!r} has an unterminated quote: close the quoted identifier"
                    )
                if text[j] == '"':
                    if j + 1 < n and text[j + 1] == '"':
                        buf.append('"')
                        j += 2
                        continue
                    break
                buf.append(text[j])
                j += 1
            value = "".join(buf)
            if not value:
                raise DatasetNameError(f"{field} {text!r} has an empty quoted identifier '\"\"'")
            parts.append(_Ident(value, True))
            i = j + 1
        else:
            j = text.find(".", i)
            end = n if j == -1 else j
            value = text[i:end].strip()
            if not value:
                raise DatasetNameError(
                    f"{field} {text!r} has an empty part: write parts separated by single dots (schema.table)"
                )
            if any(ch.isspace() for ch in value) or '"' in value:
                raise DatasetNameError(
                    f"{field} part {value!r} contains whitespace or a stray quote: "
                    f'quote it ("{value}") if the name really has them'
                )
            parts.append(_Ident(value, False))
            i = end
        if i >= n:
            return parts
        if text[i] != ".":
            raise DatasetNameError(f"{field} {text!r}: expected '.' after a quoted identifier")
        i += 1
        if i >= n:
            raise DatasetNameError(f"{field} {text!r} ends with '.': remove it")


def _single_ident(field: str, value: str) -> _Ident:
    parts = _split_identifier(_strip(value, field), field)
    if len(parts) != 1:
        raise DatasetNameError(
            f"{field} {value!r} has {len(parts)} dotted parts; pass one name per argument "
            f"(quote it if the dot is part of the name)"
        )
    return parts[0]


def _join_parts(fields: list[tuple[str, str]], fold: Literal["lower", "upper", "keep"]) -> str:
    return ".".join(_single_ident(field, value).folded(fold) for field, value in fields)


def _sql_ref(
    scheme: str, host: str, port: int, fields: list[tuple[str, str]], fold: Literal["lower", "upper", "keep"]
) -> DatasetRef:
    return DatasetRef(f"{scheme}://{host}:{port}", _join_parts(fields, fold))


# ----------------------------------------------------------------------------------------------------
# Hosts, buckets, accounts
# ----------------------------------------------------------------------------------------------------


def _strip(value: Any, field: str) -> str:
    if not isinstance(value, str):
        raise DatasetNameError(f"{field} must be a string, got {type(value).__name__}")
    text = value.strip()
    if not text:
        raise DatasetNameError(f"{field} is empty: give the dataset's {field}")
    return text


def _host(value: str, field: str) -> str:
    host = _strip(value, field).lower().rstrip(".")
    if not re.fullmatch(r"[a-z0-9]([a-z0-9\-_.]*[a-z0-9])?|\[[0-9a-f:.]+\]", host):
        raise DatasetNameError(
            f"{field} {value!r} is not a host name: give the host alone, without scheme or port"
        )
    return host


def _port(value: int | str | None) -> int:
    try:
        port = int(value)  # type: ignore[arg-type]
    except (TypeError, ValueError):
        raise DatasetNameError(f"port {value!r} is not a number: give the port as an int (5432)") from None
    if not 0 < port < 65536:
        raise DatasetNameError(f"port {port} is out of range: give a TCP port between 1 and 65535")
    return port


_S3_BUCKET_RE = re.compile(r"[a-z0-9][a-z0-9.\-]{1,61}[a-z0-9]")
_GCS_BUCKET_RE = re.compile(r"[a-z0-9][a-z0-9.\-_]{1,220}[a-z0-9]")


def _check_bucket(scheme: str, bucket: str) -> str:
    label = "S3" if scheme == "s3" else "GCS"
    if not bucket:
        raise DatasetNameError(f"{label} bucket is empty: write {scheme}://<bucket>/<key>")
    if bucket != bucket.lower():
        raise DatasetNameError(
            f"{label} bucket {bucket!r} has upper-case letters; bucket names are lower-case: "
            f"write {bucket.lower()!r}"
        )
    pattern = _S3_BUCKET_RE if scheme == "s3" else _GCS_BUCKET_RE
    problems = []
    if not pattern.fullmatch(bucket):
        problems.append(
            "use 3-63 characters: lower-case letters, digits, '.' and '-', a letter or digit at both ends"
        )
    if ".." in bucket or ".-" in bucket or "-." in bucket:
        problems.append("do not put '.' next to '.' or '-'")
    try:
        ipaddress.IPv4Address(bucket)
        problems.append("a bucket name must not look like an IP address")
    except ValueError:
        pass
    if scheme == "s3" and (
        bucket.startswith(("xn--", "sthree-", "amzn-s3-demo-"))
        or bucket.endswith(("-s3alias", "--ol-s3", "--x-s3", "--table-s3"))
    ):
        problems.append("reserved S3 prefix or suffix (xn--, sthree-, -s3alias, --ol-s3, --x-s3)")
    if problems:
        raise DatasetNameError(f"{label} bucket {bucket!r} is not a valid bucket name: {'; '.join(problems)}")
    return bucket


def _snowflake_account(value: str) -> str:
    """The account as OpenLineage names it: ``org-account`` or ``locator.region.cloud``, lower-case."""
    account = _strip(value, "account").lower()
    if "://" in account:
        account = urllib.parse.urlsplit(account).hostname or ""
    for suffix in (".snowflakecomputing.com", ".privatelink"):
        if account.endswith(suffix):
            account = account[: -len(suffix)]
    if not re.fullmatch(r"[a-z0-9][a-z0-9_\-.]*", account or ""):
        raise DatasetNameError(
            f"Snowflake account {value!r} is not an account identifier: write <org>-<account> (myorg-myacct) "
            f"or a locator (xy12345.us-east-1)"
        )
    parts = account.split(".")
    if "-" in parts[0]:  # <organization>-<account>: the region is implied.
        org, _, acct = parts[0].partition("-")
        naming = _ol_naming().Snowflake(
            organization_name=org, account_name=acct, database="_", schema="_", table="_"
        )
        return naming.get_namespace().removeprefix("snowflake://")
    if len(parts) == 1:  # bare legacy locator: AWS us-west-1.
        return f"{parts[0]}.us-west-1.aws"
    if len(parts) == 2:
        return f"{parts[0]}.{parts[1]}.aws"
    return ".".join(parts[:3])


def _redshift_identifier(value: str, region: str | None) -> str:
    host = _host(value, "cluster_identifier_or_host")
    parts = host.split(".")
    if (host.endswith(".amazonaws.com") and len(parts) == 6) or (
        host.endswith(".amazonaws.com.cn") and len(parts) == 7
    ):
        return f"{parts[0]}.{parts[2]}"
    if region:
        return f"{host}.{_host(region, 'region')}"
    if len(parts) == 2:  # already <cluster>.<region>
        return host
    raise DatasetNameError(
        f"cluster_identifier_or_host {value!r}: a Redshift cluster identifier needs region= "
        f"(redshift('{host}', ..., region='us-east-1')) or pass the endpoint host"
    )


# ----------------------------------------------------------------------------------------------------
# Paths and partitions
# ----------------------------------------------------------------------------------------------------


@cache
def _trimmers() -> tuple[DatasetNameTrimmer, ...]:
    from openlineage.client.dataset.trimmers import (
        DateTrimmer,
        KeyValueTrimmer,
        MultiDirDateTrimmer,
        YearMonthTrimmer,
    )

    return (KeyValueTrimmer(), DateTrimmer(), MultiDirDateTrimmer(), YearMonthTrimmer())


def _ol_naming() -> Any:
    from openlineage.client.naming import dataset as naming

    return naming


def _trim_partitions(path: str) -> tuple[str, str]:
    """Apply the client's built-in trimmers to a fixed point: (root, removed partition suffix)."""
    current = path
    for _ in range(64):
        trimmed = current
        for trimmer in _trimmers():
            trimmed = trimmer.trim(trimmed)
        if trimmed == current or len(trimmed) >= len(current):
            break
        current = trimmed
    removed = path[len(current) :].strip("/")
    return current, removed


_FILE_RE = re.compile(r"(?:[^=/]*\.[A-Za-z][A-Za-z0-9]{0,9}|part-\d+[^=/]*)")
_YEAR_MONTH_RE = re.compile(r"\d{4}-?\d{2}")


def _is_file_name(segment: str) -> bool:
    return bool(_FILE_RE.fullmatch(segment))


def _looks_like_date(segment: str) -> bool:
    from openlineage.client.dataset.trimmers import DateTrimmer

    return DateTrimmer().trim(f"_/{segment}") == "_"


def _reduce_once(path: str) -> tuple[str, str]:
    """One reduction step: (shorter path, partition fragment removed), or the path unchanged."""
    lead = "/" if path.startswith("/") else ""
    segments = path.strip("/").split("/")
    if len(segments) >= 2 and _is_file_name(segments[-1]):
        parent = lead + "/".join(segments[:-1])
        # Is the file inside a partition? Test under a stand-in root, so a partition at the top counts too.
        _, parent_partition = _trim_partitions(f"{lead}_/{parent.lstrip('/')}")
        if parent_partition:
            return parent, ""  # one object of a partition: the partition's root is the dataset
        stem = segments[-1].split(".", 1)[0]
        if _looks_like_date(stem) or _YEAR_MONTH_RE.fullmatch(stem):
            return parent, stem  # a daily (or monthly) file: a partition of its folder
        return path, ""  # a file under an ordinary prefix is its own dataset
    return _trim_partitions(path)


def _reduce_path(path: str) -> tuple[str, str]:
    """Reduce a cleaned path (no empty segments) to (dataset root, partition path), to a fixed point."""
    removed: list[str] = []
    for _ in range(64):
        shorter, partition = _reduce_once(path)
        if shorter == path:
            break
        if partition:
            removed.insert(0, partition)
        path = shorter
    return path, "/".join(removed)


def _partition_dimensions(partition_path: str) -> dict[str, str]:
    dims: dict[str, str] = {}
    plain: list[str] = []

    def flush() -> None:
        if not plain:
            return
        if len(plain) in (2, 3) and all(p.isdigit() for p in plain):
            dims.update(zip(("year", "month", "day"), plain, strict=False))
        elif len(plain) == 1 and _YEAR_MONTH_RE.fullmatch(plain[0]) and not _looks_like_date(plain[0]):
            dims["year_month"] = plain[0]
        elif len(plain) == 1:
            dims["date"] = plain[0]
        else:
            for i, value in enumerate(plain):
                dims[f"level_{i}"] = value
        plain.clear()

    for segment in partition_path.split("/"):
        if not segment:
            continue
        if segment.count("=") == 1:
            flush()
            key, value = segment.split("=")
            dims[key] = value
        else:
            plain.append(segment)
    flush()
    return dims


def _clean_path(path: str, field: str, uri: str) -> str:
    """Collapse doubled slashes and drop the trailing one; reject whitespace and control characters."""
    if any(ch.isspace() for ch in path):
        raise DatasetNameError(
            f"{field} in {uri!r} contains whitespace: percent-encode it (%20) or remove it"
        )
    return re.sub(r"/{2,}", "/", path).rstrip("/") if path.strip("/") else path[:1]


def _with_reduction(namespace: str, path: str) -> DatasetRef:
    root, partition_path = _reduce_path(path)
    if not partition_path:
        return DatasetRef(namespace, root)
    return DatasetRef(
        namespace,
        root,
        partition=_partition_dimensions(partition_path),
        partition_path=partition_path,
    )


def _object_store_ref(scheme: str, bucket: str, key: str, uri: str | None = None) -> DatasetRef:
    bucket = _check_bucket(scheme, bucket.strip())
    shown = uri or f"{scheme}://{bucket}/{key}"
    key = _clean_path(key.strip(), "object key", shown).strip("/")
    if not key:
        return DatasetRef(f"{scheme}://{bucket}", "/")
    return _with_reduction(f"{scheme}://{bucket}", key)


def _file_ref(host: str, path: str) -> DatasetRef:
    if not path.startswith("/"):
        raise DatasetNameError(
            f"path {path!r} is relative; a local file dataset needs an absolute path: "
            f"build it from a known root (Path(__file__).parent / ...) or os.path.abspath()"
        )
    path = _clean_path(path, "path", path)
    path = posixpath.normpath(path)
    if path.startswith("//"):
        path = "/" + path.lstrip("/")
    host = host.lower()
    namespace = f"file://{host}" if host and host != "localhost" else _FILE_NAMESPACE
    if path == "/":
        return DatasetRef(namespace, "/")
    return _with_reduction(namespace, path)


# ----------------------------------------------------------------------------------------------------
# URIs
# ----------------------------------------------------------------------------------------------------


_SCHEME_RE = re.compile(r"[A-Za-z][A-Za-z0-9+.\-]*")


def _parse_uri(text: str) -> AnyRef:
    if text.startswith("/"):
        return _file_ref("", text)
    if ":" not in text or not _SCHEME_RE.fullmatch(text.split(":", 1)[0]):
        raise DatasetNameError(
            f"uri {text!r} is not a URI: write <scheme>://<authority>/<path> (s3://bucket/key) "
            f"or an absolute path"
        )
    scheme = text.split(":", 1)[0].lower()
    if scheme == "file":
        rest = text[5:]
        if rest.startswith("//"):
            parts = urllib.parse.urlsplit(text)
            return _file_ref(parts.netloc, parts.path or "/")
        return _file_ref("", "/" + rest.lstrip("/"))
    if scheme in _EMBEDDED_SCHEMES:
        # Airflow normalises sqlite:///abs/db/table to sqlite:/abs/db/table (no authority): accept both.
        segments = [s for s in text[len(scheme) + 1 :].split("/") if s]
        if len(segments) < 2 or any(ch.isspace() for ch in text):
            raise DatasetNameError(f"uri {text!r} must be {scheme}:///<absolute db path>/<table>")
        return _embedded_ref(scheme, "/" + "/".join(segments[:-1]), urllib.parse.unquote(segments[-1]))
    if "://" not in text:
        raise DatasetNameError(f"uri {text!r} is malformed: write {scheme}://<authority>/<path>")
    if any(ch.isspace() for ch in text):
        raise DatasetNameError(f"uri {text!r} contains whitespace: percent-encode it (%20) or remove it")
    try:
        parts = urllib.parse.urlsplit(text)
        port = parts.port
    except ValueError as exc:
        raise DatasetNameError(f"uri {text!r} is malformed ({exc}): check the host and port") from None
    netloc = parts.netloc.rpartition("@")[2]  # user info never belongs to a dataset's identity
    path = parts.path
    segments = [urllib.parse.unquote(s) for s in path.strip("/").split("/") if s]

    if scheme in _S3_SCHEMES or scheme in _GCS_SCHEMES:
        return _object_store_ref("s3" if scheme in _S3_SCHEMES else "gs", netloc, path, text)
    if scheme == CONNECTION_TABLE_SCHEME:
        if not netloc or len(segments) != 1:
            raise DatasetNameError(f"uri {text!r}: write {CONNECTION_TABLE_SCHEME}://<conn_id>/<table>")
        return sql_table(netloc, segments[0])
    if scheme == OPAQUE_SCHEME:
        if not netloc or not path.strip("/"):
            raise DatasetNameError(f"uri {text!r}: write {OPAQUE_SCHEME}://<namespace>/<name>")
        return DatasetRef.of(urllib.parse.unquote(netloc), urllib.parse.unquote(path[1:]))
    if scheme in _POSTGRES_SCHEMES or scheme == "redshift":
        if len(segments) != 3:
            raise DatasetNameError(
                f"uri {text!r} must name /<database>/<schema>/<table>, found {len(segments)} path parts"
            )
        if not parts.hostname:
            raise DatasetNameError(
                f"uri {text!r} has no host: write {scheme}://<host>:<port>/<db>/<schema>/<table>"
            )
        database, schema, table = segments
        if scheme == "redshift":
            return redshift(parts.hostname, database, schema, table, port=port or 5439)
        return postgres(parts.hostname, database, schema, table, port=port or 5432)
    if scheme == "snowflake":
        if len(segments) != 3 or not netloc:
            raise DatasetNameError(f"uri {text!r} must be snowflake://<account>/<database>/<schema>/<table>")
        return snowflake(netloc, *segments)
    if scheme == "bigquery":
        if len(segments) != 2 or not netloc:
            raise DatasetNameError(f"uri {text!r} must be bigquery://<project>/<dataset>/<table>")
        return bigquery(netloc, segments[0], segments[1])
    if scheme == "mysql":
        if len(segments) != 2 or not parts.hostname:
            raise DatasetNameError(f"uri {text!r} must be mysql://<host>:<port>/<database>/<table>")
        return DatasetRef(
            f"mysql://{_host(parts.hostname, 'host')}:{port or 3306}",
            _join_parts([("database", segments[0]), ("table", segments[1])], fold="lower"),
        )
    if scheme == "kafka":
        if not netloc or len(segments) != 1:
            raise DatasetNameError(f"uri {text!r} must be kafka://<host>:<port>/<topic>")
        return DatasetRef(f"kafka://{netloc.lower()}", segments[0])
    if scheme == "airflow":
        raise DatasetNameError(f"uri {text!r}: the airflow:// scheme is reserved by Airflow")
    # Any other scheme: namespace <scheme>://<authority>, name the path (leading slash kept, as the spec's
    # HDFS/DBFS/ABFSS examples do).
    if not netloc:
        raise DatasetNameError(f"uri {text!r} has no authority: write {scheme}://<authority>/<path>")
    if not path.strip("/"):
        raise DatasetNameError(
            f"uri {text!r} names no dataset: {scheme}:// is not a known scheme, so the path must name it "
            f"({scheme}://{netloc}/<name>)"
        )
    cleaned = _clean_path(path, "path", text)
    return _with_reduction(f"{scheme}://{netloc.lower()}", cleaned)


def _uri_of(namespace: str, name: str) -> str:
    scheme, sep, _ = namespace.partition("://")
    if namespace == _FILE_NAMESPACE:
        return f"file://{name}" if name.startswith("/") else f"file:///{name}"
    if namespace == _BIGQUERY_NAMESPACE:
        project, dataset_name, table = _rsplit_name(name, 3)
        return f"bigquery://{project}/{dataset_name}/{table}"
    if not sep:
        return f"{OPAQUE_SCHEME}://{urllib.parse.quote(namespace, safe='')}/{name}"
    if scheme in ("s3", "gs"):
        return f"{namespace}/" if name == "/" else f"{namespace}/{name}"
    if scheme in ("postgres", "redshift", "snowflake", "mysql"):
        pieces = _rsplit_name(name, 2 if scheme == "mysql" else 3)
        fold = str.upper if scheme == "snowflake" else str.lower
        # A part that folding would change came from a quoted identifier: quote it so the URI parses back.
        quoted = [p if fold(p) == p and "." not in p else '"' + p.replace('"', '""') + '"' for p in pieces]
        return namespace + "".join("/" + urllib.parse.quote(p, safe="") for p in quoted)
    if scheme in _EMBEDDED_SCHEMES:
        # The form Airflow's Asset keeps (it drops the empty authority of sqlite:///...).
        pieces = name.split(".")
        quoted = [p if p.lower() == p else '"' + p.replace('"', '""') + '"' for p in pieces]
        db_path = namespace[len(scheme) + 3 :]
        return f"{scheme}:{db_path}/{urllib.parse.quote('.'.join(quoted), safe='.')}"
    return f"{namespace}{name}" if name.startswith("/") else f"{namespace}/{name}"


def _rsplit_name(name: str, count: int) -> list[str]:
    pieces = name.split(".", count - 1) if count > 1 else [name]
    if len(pieces) != count:
        raise DatasetNameError(f"name {name!r} must have {count} dot-separated parts for this platform")
    return pieces


def _split_node_id(text: str) -> tuple[str, str]:
    """``dataset:<namespace>:<name>`` -> (namespace, name); the namespace may hold ``://`` and a port."""
    body = text[len("dataset:") :]
    match = re.match(r"([A-Za-z][\w+.\-]*://[^:]*(?::\d+)?|[A-Za-z][\w+.\-]*):(.+)", body, re.DOTALL)
    if not match:
        raise DatasetNameError(f"node id {text!r} is malformed: write dataset:<namespace>:<name>")
    return match.group(1), match.group(2)


def _from_namespace_and_name(namespace: str, name: str) -> DatasetRef:
    """Normalise an OpenLineage (namespace, name) pair by routing it through the platform's rules."""
    scheme, sep, authority = namespace.partition("://")
    scheme = scheme.lower()
    if not sep:
        if namespace.lower() == _FILE_NAMESPACE:
            return _file_ref("", name if name.startswith("/") else "/" + name)
        if namespace.lower() == _BIGQUERY_NAMESPACE:
            project, dataset_name, table = _rsplit_name(name, 3)
            return bigquery(project, dataset_name, table)
        if any(ch.isspace() for ch in namespace + name):
            raise DatasetNameError(f"namespace/name {namespace!r}/{name!r} contains whitespace: remove it")
        return DatasetRef(namespace, name)
    if scheme in _S3_SCHEMES or scheme in _GCS_SCHEMES:
        return _object_store_ref("s3" if scheme in _S3_SCHEMES else "gs", authority.strip("/"), name)
    if scheme == "file":
        return _file_ref(authority, name if name.startswith("/") else "/" + name)
    if scheme in _POSTGRES_SCHEMES or scheme in ("redshift", "snowflake", "mysql"):
        # Names found in events are already in the engine's form (folded, quotes removed): keep them, and
        # normalise only the namespace (scheme alias, host case, default port, Snowflake account form).
        levels = 2 if scheme == "mysql" else 3
        if len(name.split(".", levels - 1)) != levels or any(ch.isspace() for ch in name):
            raise DatasetNameError(
                f"name {name!r} for {namespace} must be {levels} dot-separated parts without whitespace"
            )
        return DatasetRef(_sql_namespace(scheme, authority), name)
    if scheme in _EMBEDDED_SCHEMES:
        return _embedded_ref(scheme, "/" + authority.lstrip("/") if authority else "/", name)
    if scheme == "kafka":
        return DatasetRef(f"kafka://{authority.lower()}", name.strip("/"))
    return _with_reduction(f"{scheme}://{authority.lower()}", _clean_path(name, "name", namespace + name))


def _sql_namespace(scheme: str, authority: str) -> str:
    if scheme == "snowflake":
        return f"snowflake://{_snowflake_account(authority)}"
    try:
        parts = urllib.parse.urlsplit(f"//{authority}")
        port = parts.port
    except ValueError:
        raise DatasetNameError(f"namespace authority {authority!r} is malformed: write host:port") from None
    if scheme == "redshift":
        default_port = 5439
        host = _redshift_identifier(parts.hostname or "", None)
    else:
        default_port = 3306 if scheme == "mysql" else 5432
        host = _host(parts.hostname or "", "host")
    return f"{'postgres' if scheme in _POSTGRES_SCHEMES else scheme}://{host}:{port or default_port}"


def _embedded_ref(scheme: str, db_path: str, table: str | list[_Ident]) -> DatasetRef:
    """An embedded database file (SQLite, DuckDB): the OpenLineage naming spec has no rule for them, so the
    namespace is ``<scheme>://<absolute database file path>`` and the name is the table as written (every
    dotted part kept, unquoted parts lower-cased as both engines match identifiers case-insensitively)."""
    if db_path != ":memory:":
        if not db_path.startswith("/"):
            raise DatasetNameError(f"{scheme} database path {db_path!r} must be absolute")
        db_path = posixpath.normpath(db_path)
    parts = _split_identifier(_strip(table, "table"), "table") if isinstance(table, str) else table
    if len(parts) > 3:
        raise DatasetNameError(f"table has {len(parts)} parts; write at most database.schema.table")
    return DatasetRef(f"{scheme}://{db_path}", ".".join(p.folded("lower") for p in parts))


# ----------------------------------------------------------------------------------------------------
# Connections
# ----------------------------------------------------------------------------------------------------

#: Per engine: (OpenLineage scheme, default port, name levels, default schema, identifier folding).
_ENGINES: dict[str, tuple[str, int | None, int, str | None, Literal["lower", "upper", "keep"]]] = {
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
    parts: list[_Ident],
    database: str | None,
    default_schema: str | None,
    levels: int,
    fold_unquoted: Any,
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


def _ref_from_database_info(info: Any, parts: list[_Ident], conn_type: str) -> DatasetRef:
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

    if scheme in _EMBEDDED_SCHEMES:
        return DatasetRef(namespace, ".".join(p.value if p.quoted else fold(p.value) for p in parts))
    hint = f"the {conn_type} connection"
    return DatasetRef(namespace, _assemble(parts, info.database, default_schema, levels, fold, hint))


def _ref_from_connection_fields(connection: Any, conn_type: str, parts: list[_Ident]) -> DatasetRef:
    extra = getattr(connection, "extra_dejson", None) or {}
    conn_id = getattr(connection, "conn_id", "?")
    hint = f"connection {conn_id!r} ({conn_type})"
    if conn_type == "sqlite":
        path = connection.host or connection.schema or ""
        if not path:
            raise DatasetNameError(f"{hint} has no database file: set host to the SQLite file path")
        return _embedded_ref("sqlite", path if path == ":memory:" else os.path.abspath(path), parts)
    if conn_type == "duckdb":
        # The DuckDB hook's precedence: extra.database, then the host; neither means in-memory.
        path = extra.get("database") or connection.host or ":memory:"
        if path.startswith("md:"):
            return DatasetRef(f"duckdb://{path.split('?', 1)[0]}", ".".join(p.folded("lower") for p in parts))
        return _embedded_ref("duckdb", path if path == ":memory:" else os.path.abspath(path), parts)
    if conn_type == "snowflake":
        account = extra.get("account") or extra.get("extra__snowflake__account") or connection.host
        if not account:
            raise DatasetNameError(f"{hint} has no account: set extra.account (myorg-myaccount)")
        region = extra.get("region") or extra.get("extra__snowflake__region")
        if region and "." not in account and "-" not in account:
            account = f"{account}.{region}"
        database = extra.get("database") or extra.get("extra__snowflake__database")
        name = _assemble(parts, database, connection.schema or None, 3, str.upper, hint)
        return DatasetRef(f"snowflake://{_snowflake_account(account)}", name)
    engine = _ENGINES.get(conn_type)
    if not connection.host:
        raise DatasetNameError(f"{hint} has no host: set the connection's host")
    if conn_type == "redshift":
        authority = _redshift_identifier(connection.host, extra.get("region_name") or extra.get("region"))
        port = _port(connection.port or 5439)
        name = _assemble(parts, connection.schema or None, "public", 3, str.lower, hint)
        return DatasetRef(f"redshift://{authority}:{port}", name)
    if engine is not None:
        scheme, default_port, levels, default_schema, _fold = engine
        engine_port: int | None = connection.port or default_port
        host = _host(connection.host, "host")
        namespace = f"{scheme}://{host}:{engine_port}" if engine_port else f"{scheme}://{host}"
        name = _assemble(parts, connection.schema or None, default_schema, levels, str.lower, hint)
        return DatasetRef(namespace, name)
    # Any other SQL engine: <conn_type>://host:port, as DbApiHook.get_openlineage_authority_part builds it.
    host = _host(connection.host, "host")
    namespace = f"{conn_type}://{host}:{connection.port}" if connection.port else f"{conn_type}://{host}"
    names = [p.value if p.quoted else p.value.lower() for p in parts]
    if len(names) < 3 and connection.schema:
        names.insert(0, connection.schema.lower())
    return DatasetRef(namespace, ".".join(names))
