"""What a task declares about its lineage: the declaration types, checked at DAG parse time.

:class:`LineageSpec` is the whole declaration of one task: inputs and outputs (:class:`Input`,
:class:`Output`, or bare dataset references), per-dataset schema (:class:`Field`), column lineage
(:class:`ColumnFrom`), documentation, owners, tags and custom facets, plus job-level SQL, owners,
description, tags and custom facets. :func:`airflow_lineage_plus.author.validation.validate` checks a
declaration; :func:`airflow_lineage_plus.author.build.to_operator_lineage` builds the provider's
``OperatorLineage`` from it.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any, Union

import attr
from openlineage.client.facet_v2 import BaseFacet

from airflow_lineage_plus import datasets
from airflow_lineage_plus.exceptions import LineageDeclarationError

__all__ = [
    "DIRECT_SUBTYPES",
    "INDIRECT_SUBTYPES",
    "ColumnFrom",
    "DatasetLike",
    "Field",
    "FieldLike",
    "Input",
    "LineageDeclarationError",
    "LineageSpec",
    "Output",
    "as_field",
    "as_ref",
    "expected_type",
    "failing_field",
]

#: The column-lineage subtypes of each transformation type (the spec's ``ColumnLineageDatasetFacet``).
DIRECT_SUBTYPES = frozenset({"IDENTITY", "TRANSFORMATION", "AGGREGATION"})
INDIRECT_SUBTYPES = frozenset({"JOIN", "GROUP_BY", "FILTER", "SORT", "WINDOW", "CONDITIONAL"})

DatasetLike = Union["datasets.DatasetRef", "datasets.ConnectionTableRef", str]


def as_ref(value: DatasetLike) -> datasets.DatasetRef | datasets.ConnectionTableRef:
    """A dataset reference from a ref, or from a URI string (``"s3://bucket/key"``)."""
    if isinstance(value, str):
        return datasets.dataset(value)
    if isinstance(value, datasets.DatasetRef | datasets.ConnectionTableRef):
        return value
    raise TypeError(
        f"expected a dataset reference (airflow_lineage_plus.datasets.s3(...), sql_table(...), ...) "
        f"or a URI string, got {type(value).__name__}"
    )


def expected_type(subtype: str) -> str:
    """The transformation type a subtype belongs to: ``INDIRECT`` or ``DIRECT``."""
    return "INDIRECT" if subtype.upper() in INDIRECT_SUBTYPES else "DIRECT"


def _strings(value: Iterable[str]) -> tuple[str, ...]:
    return tuple(value)


def _nested_fields(value: Iterable[Field]) -> tuple[Field, ...]:
    return tuple(value)


@attr.frozen
class Field:
    """A column of a dataset schema: name, type and description (nested ``fields`` for structs).

    ``nullable=False`` makes "no nulls" part of a :class:`~airflow_lineage_plus.custom_facets.DataContract`
    on the dataset (checked when the task ends, docs/alerts.md); it is not part of the schema facet.
    """

    name: str
    type: str | None = None
    description: str | None = None
    fields: tuple[Field, ...] = attr.field(default=(), converter=_nested_fields)
    nullable: bool | None = attr.field(default=None, kw_only=True)

    def to_facet_field(self, position: int | None = None) -> dict[str, Any]:
        """The schema facet's field entry, as the JSON-ready dict the client serialises.

        Plain dicts rather than ``SchemaDatasetFacetFields`` objects: wide schemas are built for every
        event, and dicts are the cheaper to build (docs/reliability.md, "What a user pays per event").
        """
        entry: dict[str, Any] = {"name": self.name}
        if self.type is not None:
            entry["type"] = self.type
        if self.description is not None:
            entry["description"] = self.description
        if position is not None:
            entry["ordinal_position"] = position
        if self.fields:
            entry["fields"] = [f.to_facet_field() for f in self.fields]
        return entry


FieldLike = Field | tuple[str, ...] | str


def as_field(value: FieldLike) -> Field:
    """A :class:`Field` from a Field, a ``(name, type[, description])`` tuple or a bare name."""
    if isinstance(value, Field):
        return value
    if isinstance(value, str):
        return Field(value)
    if isinstance(value, tuple) and 1 <= len(value) <= 3 and all(isinstance(v, str) for v in value):
        return Field(value[0], *(value[1:] if len(value) > 1 else ()))  # type: ignore[arg-type]
    raise TypeError(f"a schema field must be Field(name, type, description) or a tuple, got {value!r}")


def _fields(value: Iterable[FieldLike] | None) -> tuple[Field, ...] | None:
    return None if value is None else tuple(as_field(v) for v in value)


@attr.frozen
class ColumnFrom:
    """One input column an output column is derived from, with the spec's transformation type.

    ``type`` is ``DIRECT`` (subtypes IDENTITY, TRANSFORMATION, AGGREGATION) or ``INDIRECT`` (JOIN,
    GROUP_BY, FILTER, SORT, WINDOW, CONDITIONAL); the type is inferred from the subtype when omitted.
    """

    dataset: datasets.DatasetRef | datasets.ConnectionTableRef = attr.field(converter=as_ref)
    column: str
    subtype: str = "IDENTITY"
    type: str | None = None
    description: str | None = None
    masking: bool = False

    @property
    def transformation_type(self) -> str:
        if self.type:
            return self.type.upper()
        return expected_type(self.subtype)


def _column_lineage(
    value: Mapping[str, ColumnFrom | Sequence[ColumnFrom]] | None,
) -> dict[str, tuple[ColumnFrom, ...]] | None:
    if value is None:
        return None
    return {col: (src,) if isinstance(src, ColumnFrom) else tuple(src) for col, src in value.items()}


def _facet_list(value: Iterable[BaseFacet] | None) -> tuple[BaseFacet, ...]:
    return tuple(value or ())


@attr.frozen
class _DatasetDeclaration:
    dataset: datasets.DatasetRef | datasets.ConnectionTableRef = attr.field(converter=as_ref)
    schema: tuple[Field, ...] | None = attr.field(default=None, converter=_fields)
    description: str | None = None
    owners: tuple[str, ...] = attr.field(default=(), converter=_strings)
    tags: tuple[str, ...] = attr.field(default=(), converter=_strings)
    facets: tuple[BaseFacet, ...] = attr.field(default=(), converter=_facet_list)


@attr.frozen
class Input(_DatasetDeclaration):
    """An input dataset of a task, with what is known about it."""


@attr.frozen
class Output(_DatasetDeclaration):
    """An output dataset of a task: schema, column lineage (output column -> input columns) and facets."""

    column_lineage: dict[str, tuple[ColumnFrom, ...]] | None = attr.field(
        default=None, converter=_column_lineage
    )


def _as_input(value: Input | DatasetLike) -> Input:
    return value if isinstance(value, Input) else Input(as_ref(value))


def _as_output(value: Output | DatasetLike) -> Output:
    return value if isinstance(value, Output) else Output(as_ref(value))


def _inputs(value: Iterable[Input | DatasetLike]) -> tuple[Input, ...]:
    return tuple(_as_input(v) for v in value)


def _outputs(value: Iterable[Output | DatasetLike]) -> tuple[Output, ...]:
    return tuple(_as_output(v) for v in value)


def failing_field(parts: Mapping[str, Any]) -> str | None:
    """The first keyword of ``LineageSpec(**parts)`` whose value cannot be converted, for error messages."""
    for name, value in parts.items():
        try:
            LineageSpec(**{name: value})
        except (TypeError, ValueError):
            return name
    return None


@attr.frozen
class LineageSpec:
    """Everything one task declares about its lineage."""

    inputs: tuple[Input, ...] = attr.field(default=(), converter=_inputs)
    outputs: tuple[Output, ...] = attr.field(default=(), converter=_outputs)
    owners: tuple[str, ...] = attr.field(default=(), converter=_strings)
    description: str | None = None
    sql: str | None = None
    sql_dialect: str | None = None
    tags: tuple[str, ...] = attr.field(default=(), converter=_strings)
    facets: tuple[BaseFacet, ...] = attr.field(default=(), converter=_facet_list)
    source_path: str | None = None

    def assets(self) -> tuple[list[Any], list[Any]]:
        """Airflow Assets for the declared inputs and outputs, for the task's ``inlets``/``outlets``."""
        return (
            [decl.dataset.to_asset() for decl in self.inputs],
            [decl.dataset.to_asset() for decl in self.outputs],
        )

    def connection_refs(self) -> set[datasets.ConnectionTableRef]:
        """Every declared dataset whose identity comes from an Airflow connection.

        Column-lineage sources need no scan of their own: :func:`.validation.validate` requires them to be
        inputs.
        """
        refs = (d.dataset for d in (*self.inputs, *self.outputs))
        return {ref for ref in refs if isinstance(ref, datasets.ConnectionTableRef)}
