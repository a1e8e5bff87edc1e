"""The ref types: :class:`DatasetRef` (a dataset's OpenLineage identity) and :class:`ConnectionTableRef` (a
table whose identity waits for its Airflow connection), their validators, and the two public functions the
types' own methods need: :func:`parse_ref` (text, Asset or ref -> ref) and :func:`from_connection`.

The builders below this module compute :class:`~.identity.Identity` tuples; :func:`dataset_ref` and
:func:`connection_table_ref` turn them into refs, so no lower module needs the ref types.
"""

from __future__ import annotations

import re
import urllib.parse
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, Literal, Union

import attrs

from airflow_lineage_plus import node_ids
from airflow_lineage_plus.datasets.connections import connection_identity
from airflow_lineage_plus.datasets.identifiers import Ident, split_identifier
from airflow_lineage_plus.datasets.identity import (
    CONNECTION_TABLE_SCHEME,
    ConnectionTable,
    Identity,
    require_text,
)
from airflow_lineage_plus.datasets.uri import Parsed, identity_of_pair, parse_uri, uri_of
from airflow_lineage_plus.exceptions import DatasetNameError

if TYPE_CHECKING:
    from airflow.sdk import Asset
    from openlineage.client.event_v2 import InputDataset, OutputDataset
    from openlineage.client.facet_v2 import base_subset_dataset

    SubsetFacet = Union[  # noqa: UP007
        base_subset_dataset.InputSubsetInputDatasetFacet, base_subset_dataset.OutputSubsetOutputDatasetFacet
    ]

#: A dataset namespace that is not a URI: a letter, then letters, digits, ``_``, ``+``, ``.`` or ``-``.
_PLAIN_NAMESPACE = re.compile(r"[A-Za-z][\w+.\-]*")


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


def _split_dataset_id(text: str) -> tuple[str, str]:
    """``dataset:<namespace>:<name>`` -> (namespace, name), by the project's one node-id parser."""
    malformed = DatasetNameError(f"node id {text!r} is malformed: write dataset:<namespace>:<name>")
    try:
        kind, namespace, name = node_ids.split_node_id(text)
    except ValueError:
        raise malformed from None
    if kind != node_ids.DATASET:
        raise DatasetNameError(
            f"node id {text!r} names a {kind.lower()}, not a dataset: write dataset:<namespace>:<name>"
        )
    # The parser ends a namespace that is not a URI at the first colon, whatever it holds; such a dataset
    # namespace is a plain name (file, bigquery, custom-namespace), so anything else is a malformed id.
    if "://" not in namespace and not _PLAIN_NAMESPACE.fullmatch(namespace):
        raise malformed
    return namespace, name


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
        ref = dataset_ref(identity_of_pair(namespace, name))
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
        text = require_text(text, "dataset")
        if text.startswith("dataset:"):
            namespace, name = _split_dataset_id(text)
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
        return node_ids.dataset_id(self.namespace, self.name)

    @property
    def uri(self) -> str:
        """A URI Airflow's ``Asset`` accepts and that parses back to this ref (partition not included)."""
        return uri_of(self.namespace, self.name)

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
    def parts(self) -> tuple[Ident, ...]:
        return tuple(split_identifier(self.table, "table"))

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


def dataset_ref(identity: Identity) -> DatasetRef:
    """The DatasetRef of an identity the builders computed (validated, not normalised again)."""
    return DatasetRef(
        identity.namespace,
        identity.name,
        partition=identity.partition,
        partition_path=identity.partition_path,
    )


def connection_table_ref(table: ConnectionTable) -> ConnectionTableRef:
    """The ConnectionTableRef of a table behind a connection (validated, not normalised again)."""
    return ConnectionTableRef(table.conn_id, table.table)


def _ref_of(parsed: Parsed) -> AnyRef:
    """The ref of what a URI names: a DatasetRef for an identity, a ConnectionTableRef for a table behind a
    connection."""
    if isinstance(parsed, Identity):
        return dataset_ref(parsed)
    return connection_table_ref(parsed)


def parse_ref(value: str | Asset | AnyRef) -> AnyRef:
    """A ref from a URI, a Marquez node id, an Airflow Asset or a ref; raises DatasetNameError."""
    if isinstance(value, DatasetRef | ConnectionTableRef):
        return value
    uri = getattr(value, "uri", value)
    if not isinstance(uri, str):
        raise DatasetNameError(f"expected a dataset URI string or an Asset, got {type(value).__name__}")
    text = require_text(uri, "uri")
    if text.startswith("dataset:"):
        namespace, name = _split_dataset_id(text)
        return DatasetRef.of(namespace, name)
    return _ref_of(parse_uri(text))


def from_connection(connection: Any, table: str) -> DatasetRef:
    """The DatasetRef of ``table`` in the database behind an Airflow ``Connection``.

    The namespace is built the way the provider's SQL hooks build it: when the connection's hook (from an
    installed provider) implements ``get_openlineage_database_info``, its ``DatabaseInfo`` decides (scheme,
    authority, database, name normalisation). Otherwise the same rules are applied from the table of
    engines in :mod:`.connections` (postgres, redshift, snowflake, mysql, sqlite, duckdb;
    ``<conn_type>://host:port`` for others).
    """
    return dataset_ref(connection_identity(connection, table))
