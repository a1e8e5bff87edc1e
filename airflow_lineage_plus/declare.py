"""What a task declares about its lineage, checked at DAG parse time and turned into OpenLineage facets.

:class:`LineageSpec` is the whole declaration of one task: inputs and outputs (:class:`Input`,
:class:`Output`, or bare dataset references), per-dataset schema (:class:`Field`), column lineage
(:class:`ColumnFrom`), documentation, owners, tags and custom facets, plus job-level SQL, owners,
description, tags and custom facets. :meth:`LineageSpec.validate` raises
:class:`LineageDeclarationError` for authoring mistakes, naming the DAG file, the task, the field and
the fix. :meth:`LineageSpec.to_operator_lineage` builds the provider's ``OperatorLineage`` that rides on
the provider's own task events.
"""

from __future__ import annotations

import logging
from collections.abc import Iterable, Mapping, Sequence
from typing import TYPE_CHECKING, Any, Union

import attr
from openlineage.client.event_v2 import InputDataset, OutputDataset
from openlineage.client.facet_v2 import (
    BaseFacet,
    DatasetFacet,
    JobFacet,
    RunFacet,
    column_lineage_dataset,
    documentation_dataset,
    ownership_dataset,
    schema_dataset,
    source_code_location_job,
    sql_job,
    tags_dataset,
    tags_job,
)

from airflow_lineage_plus import conf, datasets
from airflow_lineage_plus.containment import call_within

if TYPE_CHECKING:
    from airflow.providers.openlineage.extractors import OperatorLineage

    from airflow_lineage_plus.runtime import DatasetFacts, TaskFacts

log = logging.getLogger(__name__)

DatasetLike = Union["datasets.DatasetRef", "datasets.ConnectionTableRef", str]

DIRECT_SUBTYPES = frozenset({"IDENTITY", "TRANSFORMATION", "AGGREGATION"})
INDIRECT_SUBTYPES = frozenset({"JOIN", "GROUP_BY", "FILTER", "SORT", "WINDOW", "CONDITIONAL"})
SQL_CUT_MARKER = "\n-- [cut by airflow-lineage-plus: {hidden} more characters]"
CONNECTION_LOOKUP_SECONDS = 3.0


class LineageDeclarationError(ValueError):
    """An authoring mistake in a lineage declaration, raised at DAG parse time."""


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


def _label(ref: datasets.DatasetRef | datasets.ConnectionTableRef) -> str:
    if isinstance(ref, datasets.ConnectionTableRef):
        return f"{ref.table} (connection {ref.conn_id!r})"
    return f"{ref.namespace}/{ref.name}"


def _strings(value: Iterable[str]) -> tuple[str, ...]:
    return tuple(value)


def _nested_fields(value: Iterable[Field]) -> tuple[Field, ...]:
    return tuple(value)


@attr.frozen
class Field:
    """A column of a dataset schema: name, type and description (nested ``fields`` for structs)."""

    name: str
    type: str | None = None
    description: str | None = None
    fields: tuple[Field, ...] = attr.field(default=(), converter=_strings)

    def to_facet_field(self, position: int | None = None) -> dict[str, Any]:
        """The schema facet's field entry, as the JSON-ready dict the client serialises.

        Plain dicts rather than ``SchemaDatasetFacetFields`` objects: wide schemas are built for every
        event, and dicts cost a fraction of attrs objects (see benchmarks/declare_bench.py).
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
        return "INDIRECT" if self.subtype.upper() in INDIRECT_SUBTYPES else "DIRECT"


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


def _owner(name: str) -> tuple[str, str | None]:
    """``"team:analytics"`` -> (``"team:analytics"``, ``"team"``); a bare name has no type."""
    kind, sep, _ = name.partition(":")
    return name, (kind if sep else None)


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

    # -- parse time ---------------------------------------------------------------------------------

    def validate(self, task_id: str, dag_file: str | None = None) -> None:
        """Raise :class:`LineageDeclarationError` for the first authoring mistake found."""
        where = f"{dag_file}: task {task_id!r}" if dag_file else f"task {task_id!r}"

        def fail(field: str, problem: str, fix: str) -> None:
            raise LineageDeclarationError(f"{where}: lineage field {field!r}: {problem}. Fix: {fix}")

        schemas: dict[Any, tuple[Field, ...]] = {}
        for kind, decls in (("inputs", self.inputs), ("outputs", self.outputs)):
            for i, decl in enumerate(decls):
                if decl.schema is not None:
                    names = [f.name for f in decl.schema]
                    dupes = sorted({n for n in names if names.count(n) > 1})
                    if dupes:
                        fail(
                            f"{kind}[{i}].schema", f"column(s) {dupes} appear twice", "list each column once"
                        )
                    if not all(n and n.strip() for n in names):
                        fail(f"{kind}[{i}].schema", "a column has an empty name", "name every column")
                    known = schemas.get(decl.dataset)
                    if known is not None and known != decl.schema:
                        fail(
                            f"{kind}[{i}].schema",
                            f"dataset {_label(decl.dataset)} is declared twice with different schemas",
                            "declare one schema per dataset (or leave the schema off the second declaration)",
                        )
                    schemas[decl.dataset] = decl.schema
                for facet in decl.facets:
                    if not isinstance(facet, DatasetFacet):
                        fail(
                            f"{kind}[{i}].facets",
                            f"{type(facet).__name__} is not a dataset facet",
                            "pass dataset facets here and job facets in lineage(facets=...)",
                        )
        for facet in self.facets:
            if not isinstance(facet, JobFacet | RunFacet):
                fail(
                    "facets",
                    f"{type(facet).__name__} is not a job or run facet",
                    "pass dataset facets on Input(...)/Output(...) instead",
                )
        inputs = {decl.dataset: decl for decl in self.inputs}
        for i, out in enumerate(self.outputs):
            for column, sources in (out.column_lineage or {}).items():
                field = f"outputs[{i}].column_lineage[{column!r}]"
                if out.schema is not None and column not in {f.name for f in out.schema}:
                    fail(
                        field,
                        f"output column {column!r} is not in the schema of {_label(out.dataset)}",
                        "add the column to the output schema or correct its name",
                    )
                if not sources:
                    fail(field, "no input column is given", "give at least one ColumnFrom(...)")
                for src in sources:
                    if src.dataset not in inputs:
                        fail(
                            field,
                            f"it names {_label(src.dataset)}, which is not a declared input",
                            "add that dataset to inputs=[...] or point at a declared input",
                        )
                    in_schema = inputs[src.dataset].schema or schemas.get(src.dataset)
                    if in_schema is not None and src.column not in {f.name for f in in_schema}:
                        fail(
                            field,
                            f"input column {src.column!r} is not in the schema of {_label(src.dataset)}",
                            "add the column to that input's schema or correct its name",
                        )
                    subtypes = DIRECT_SUBTYPES | INDIRECT_SUBTYPES
                    if src.subtype.upper() not in subtypes:
                        fail(
                            field,
                            f"unknown transformation subtype {src.subtype!r}",
                            f"use one of {sorted(subtypes)}",
                        )
                    expected = "INDIRECT" if src.subtype.upper() in INDIRECT_SUBTYPES else "DIRECT"
                    if src.transformation_type != expected:
                        fail(
                            field,
                            f"subtype {src.subtype} belongs to type {expected}, "
                            f"not {src.transformation_type}",
                            f"use type={expected!r} or leave type out",
                        )

    def assets(self) -> tuple[list[Any], list[Any]]:
        """Airflow Assets for the declared inputs and outputs, for the task's ``inlets``/``outlets``."""
        return (
            [decl.dataset.to_asset() for decl in self.inputs],
            [decl.dataset.to_asset() for decl in self.outputs],
        )

    # -- run time -----------------------------------------------------------------------------------

    def connection_refs(self) -> set[datasets.ConnectionTableRef]:
        """Every declared dataset whose identity comes from an Airflow connection.

        Column-lineage sources need no scan of their own: :meth:`validate` requires them to be inputs.
        """
        refs = (d.dataset for d in (*self.inputs, *self.outputs))
        return {ref for ref in refs if isinstance(ref, datasets.ConnectionTableRef)}

    def to_operator_lineage(
        self,
        facts: TaskFacts | None = None,
        *,
        final: bool = False,
        resolved_refs: Mapping[Any, datasets.DatasetRef] | None = None,
    ) -> OperatorLineage:
        """The provider's ``OperatorLineage`` for this declaration, with runtime ``facts`` when ``final``.

        ``resolved_refs`` are connection-derived identities resolved beforehand in the task process
        (see ``LineageMixin.render_template_fields``); others are resolved here, within a time bound.
        """
        from airflow.providers.openlineage.extractors import OperatorLineage

        resolved: dict[Any, datasets.DatasetRef] = dict(resolved_refs or {})

        def resolve(ref: datasets.DatasetRef | datasets.ConnectionTableRef) -> datasets.DatasetRef:
            if ref not in resolved:
                if isinstance(ref, datasets.ConnectionTableRef):
                    # A connection lookup can hang in the provider's forked emitter: bound it.
                    resolved[ref] = call_within(
                        CONNECTION_LOOKUP_SECONDS,
                        f"looking up connection {ref.conn_id!r} for table {ref.table!r}",
                        datasets.resolve,
                        ref,
                    )
                else:
                    resolved[ref] = datasets.resolve(ref)
            return resolved[ref]

        inputs = [
            self._input_dataset(decl, resolve(decl.dataset), facts if final else None) for decl in self.inputs
        ]
        outputs = [
            self._output_dataset(decl, resolve(decl.dataset), resolve, facts if final else None)
            for decl in self.outputs
        ]
        if final and facts is not None:
            declared = {(d.namespace, d.name) for d in inputs + outputs}
            for extra_ref, extra_schema in facts.extra_outputs.items():
                ref = resolve(extra_ref)
                if (ref.namespace, ref.name) not in declared:
                    outputs.append(
                        self._output_dataset(Output(ref, schema=extra_schema), ref, resolve, facts)
                    )
                    declared.add((ref.namespace, ref.name))
            for extra_ref, extra_schema in facts.extra_inputs.items():
                ref = resolve(extra_ref)
                if (ref.namespace, ref.name) not in declared:
                    inputs.append(self._input_dataset(Input(ref, schema=extra_schema), ref, facts))
                    declared.add((ref.namespace, ref.name))
        run_facets = {_key(f): f for f in self.facets if isinstance(f, RunFacet)}
        return OperatorLineage(
            inputs=inputs, outputs=outputs, run_facets=run_facets, job_facets=self._job_facets()
        )

    def _job_facets(self) -> dict[str, Any]:
        facets: dict[str, Any] = {}
        if self.sql:
            facets["sql"] = sql_job.SQLJobFacet(query=cut_sql(self.sql), dialect=self.sql_dialect)
        # ownership and documentation reach the job through the task's owner and doc_md (see mixins),
        # because the provider builds those two facets from the task and overwrites operator facets.
        if self.tags:
            facets["tags"] = tags_job.TagsJobFacet(
                tags=[
                    tags_job.TagsJobFacetFields(key=t, value="true", source="LINEAGE_PLUS") for t in self.tags
                ]
            )
        repo, commit = conf.source_repository_url(), conf.source_commit()
        if repo:
            facets["sourceCodeLocation"] = source_code_location_job.SourceCodeLocationJobFacet(
                type="git",
                url=repo,
                repoUrl=repo,
                path=self.source_path,
                version=commit or None,
            )
        for facet in self.facets:
            if isinstance(facet, JobFacet):
                facets[_key(facet)] = facet
        return facets

    def _dataset_facets(self, decl: _DatasetDeclaration, schema: tuple[Field, ...] | None) -> dict[str, Any]:
        facets: dict[str, Any] = {}
        if schema is not None:
            facets["schema"] = schema_facet(schema)
        if decl.description:
            facets["documentation"] = documentation_dataset.DocumentationDatasetFacet(
                description=decl.description, contentType="text/markdown"
            )
        if decl.owners:
            facets["ownership"] = ownership_dataset.OwnershipDatasetFacet(
                owners=[ownership_dataset.Owner(name=n, type=t) for n, t in map(_owner, decl.owners)]
            )
        if decl.tags:
            facets["tags"] = tags_dataset.TagsDatasetFacet(
                tags=[
                    tags_dataset.TagsDatasetFacetFields(key=t, value="true", source="LINEAGE_PLUS")
                    for t in decl.tags
                ]
            )
        for facet in decl.facets:
            facets[_key(facet)] = facet
        return facets

    def _input_dataset(self, decl: Input, ref: datasets.DatasetRef, facts: TaskFacts | None) -> InputDataset:
        dataset_facts = facts.for_dataset(decl.dataset, ref) if facts else None
        schema = (dataset_facts.schema if dataset_facts and dataset_facts.schema else None) or decl.schema
        facets = self._dataset_facets(decl, schema)
        input_facets: dict[str, Any] = {}
        subset = _partitioned(ref, dataset_facts).subset_facet("input")
        if subset is not None:
            input_facets["subset"] = subset
        if dataset_facts is not None:
            input_facets.update(dataset_facts.input_facets())
        return InputDataset(namespace=ref.namespace, name=ref.name, facets=facets, inputFacets=input_facets)

    def _output_dataset(
        self,
        decl: Output,
        ref: datasets.DatasetRef,
        resolve: Any,
        facts: TaskFacts | None,
    ) -> OutputDataset:
        dataset_facts = facts.for_dataset(decl.dataset, ref) if facts else None
        schema = (dataset_facts.schema if dataset_facts and dataset_facts.schema else None) or decl.schema
        facets = self._dataset_facets(decl, schema)
        if decl.column_lineage:
            facets["columnLineage"] = column_lineage_dataset.ColumnLineageDatasetFacet(
                fields={
                    column: {"inputFields": [_input_field(src, resolve(src.dataset)) for src in sources]}  # type: ignore[misc]
                    for column, sources in decl.column_lineage.items()
                }  # JSON-ready dicts, as in Field.to_facet_field
            )
        output_facets: dict[str, Any] = {}
        subset = _partitioned(ref, dataset_facts).subset_facet("output")
        if subset is not None:
            output_facets["subset"] = subset
        if dataset_facts is not None:
            facets.update(dataset_facts.dataset_facets())
            output_facets.update(dataset_facts.output_facets())
        return OutputDataset(
            namespace=ref.namespace, name=ref.name, facets=facets, outputFacets=output_facets
        )


def _partitioned(ref: datasets.DatasetRef, facts: DatasetFacts | None) -> datasets.DatasetRef:
    """``ref`` with the partition the task recorded figures for, when it recorded one."""
    if facts is not None and facts.partition:
        return ref.with_partition(facts.partition)
    return ref


def _input_field(src: ColumnFrom, ref: datasets.DatasetRef) -> dict[str, Any]:
    transformation: dict[str, Any] = {
        "type": src.transformation_type,
        "subtype": src.subtype.upper(),
        "masking": src.masking,
    }
    if src.description:
        transformation["description"] = src.description
    return {
        "namespace": ref.namespace,
        "name": ref.name,
        "field": src.column,
        "transformations": [transformation],
    }


def _key(facet: BaseFacet) -> str:
    """The key a facet is emitted under: the class's ``key`` attribute, else its camelCased class name."""
    key = getattr(type(facet), "key", None)
    if isinstance(key, str):
        return key
    name = type(facet).__name__
    for suffix in ("DatasetFacet", "JobFacet", "RunFacet", "Facet"):
        if name.endswith(suffix) and name != suffix:
            name = name[: -len(suffix)]
            break
    return name[0].lower() + name[1:]


def schema_facet(fields: Sequence[Field]) -> schema_dataset.SchemaDatasetFacet:
    """A schema facet, summarised above ``[lineage_plus] schema_max_columns`` columns."""
    limit = conf.schema_max_columns()
    kept = list(fields)[:limit]
    facet = schema_dataset.SchemaDatasetFacet(
        fields=[f.to_facet_field(position=i + 1) for i, f in enumerate(kept)]  # type: ignore[misc]
    )
    if len(fields) > limit:
        from airflow_lineage_plus import budget

        budget.count_cut("schema fields beyond schema_max_columns", len(fields) - limit)
        facet = facet.with_additional_properties(**{budget.OMITTED_FIELDS: len(fields) - limit})  # type: ignore[assignment]
        log.warning(
            "airflow-lineage-plus: schema of %d columns summarised to the first %d ([lineage_plus] "
            "schema_max_columns)",
            len(fields),
            limit,
        )
    return facet


def cut_sql(sql: str) -> str:
    """``sql`` cut at ``[lineage_plus] sql_max_length`` characters with a marker; the cut is logged."""
    limit = conf.sql_max_length()
    if len(sql) <= limit:
        return sql
    from airflow_lineage_plus import budget

    budget.count_cut("SQL characters beyond sql_max_length", len(sql) - limit)
    log.warning(
        "airflow-lineage-plus: SQL of %d characters cut to %d ([lineage_plus] sql_max_length)",
        len(sql),
        limit,
    )
    return sql[:limit] + SQL_CUT_MARKER.format(hidden=len(sql) - limit)
