"""The rules a lineage declaration must follow, one function per rule, checked at DAG parse time.

:func:`validate` runs every rule of :data:`RULES` on a :class:`~airflow_lineage_plus.author.spec.LineageSpec`
and raises :class:`~airflow_lineage_plus.exceptions.LineageDeclarationError` for the first mistake found,
naming the DAG file, the task, the field and the fix. A rule yields ``(field, problem, fix)`` for each
mistake it finds.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

from openlineage.client.facet_v2 import DatasetFacet, JobFacet, RunFacet

from airflow_lineage_plus.author.spec import (
    DIRECT_SUBTYPES,
    INDIRECT_SUBTYPES,
    ColumnFrom,
    LineageSpec,
    Output,
    expected_type,
)
from airflow_lineage_plus.datasets import ConnectionTableRef
from airflow_lineage_plus.exceptions import LineageDeclarationError

Problem = tuple[str, str, str]  # (field, problem, fix)


def label(ref: Any) -> str:
    """A dataset reference as messages show it."""
    if isinstance(ref, ConnectionTableRef):
        return f"{ref.table} (connection {ref.conn_id!r})"
    return f"{ref.namespace}/{ref.name}"


def _declarations(spec: LineageSpec) -> Iterator[tuple[str, int, Any]]:
    for kind, decls in (("inputs", spec.inputs), ("outputs", spec.outputs)):
        for i, decl in enumerate(decls):
            yield kind, i, decl


def schema_columns_listed_once(spec: LineageSpec) -> Iterator[Problem]:
    for kind, i, decl in _declarations(spec):
        names = [f.name for f in decl.schema or ()]
        dupes = sorted({n for n in names if names.count(n) > 1})
        if dupes:
            yield f"{kind}[{i}].schema", f"column(s) {dupes} appear twice", "list each column once"


def schema_columns_named(spec: LineageSpec) -> Iterator[Problem]:
    for kind, i, decl in _declarations(spec):
        if decl.schema is not None and not all(f.name and f.name.strip() for f in decl.schema):
            yield f"{kind}[{i}].schema", "a column has an empty name", "name every column"


def one_schema_per_dataset(spec: LineageSpec) -> Iterator[Problem]:
    schemas: dict[Any, Any] = {}
    for kind, i, decl in _declarations(spec):
        if decl.schema is None:
            continue
        known = schemas.get(decl.dataset)
        if known is not None and known != decl.schema:
            yield (
                f"{kind}[{i}].schema",
                f"dataset {label(decl.dataset)} is declared twice with different schemas",
                "declare one schema per dataset (or leave the schema off the second declaration)",
            )
        schemas[decl.dataset] = decl.schema


def dataset_facets_on_datasets(spec: LineageSpec) -> Iterator[Problem]:
    for kind, i, decl in _declarations(spec):
        for facet in decl.facets:
            if not isinstance(facet, DatasetFacet):
                yield (
                    f"{kind}[{i}].facets",
                    f"{type(facet).__name__} is not a dataset facet",
                    "pass dataset facets here and job facets in lineage(facets=...)",
                )


def job_or_run_facets_on_the_task(spec: LineageSpec) -> Iterator[Problem]:
    for facet in spec.facets:
        if not isinstance(facet, JobFacet | RunFacet):
            yield (
                "facets",
                f"{type(facet).__name__} is not a job or run facet",
                "pass dataset facets on Input(...)/Output(...) instead",
            )


def _column_entries(spec: LineageSpec) -> Iterator[tuple[str, Output, str, tuple[ColumnFrom, ...]]]:
    for i, out in enumerate(spec.outputs):
        for column, sources in (out.column_lineage or {}).items():
            yield f"outputs[{i}].column_lineage[{column!r}]", out, column, sources


def column_lineage_targets_output_columns(spec: LineageSpec) -> Iterator[Problem]:
    for field, out, column, sources in _column_entries(spec):
        if out.schema is not None and column not in {f.name for f in out.schema}:
            yield (
                field,
                f"output column {column!r} is not in the schema of {label(out.dataset)}",
                "add the column to the output schema or correct its name",
            )
        if not sources:
            yield field, "no input column is given", "give at least one ColumnFrom(...)"


def column_lineage_reads_declared_inputs(spec: LineageSpec) -> Iterator[Problem]:
    inputs = {decl.dataset: decl for decl in spec.inputs}
    schemas = {decl.dataset: decl.schema for _, _, decl in _declarations(spec) if decl.schema is not None}
    for field, _, _, sources in _column_entries(spec):
        for src in sources:
            if src.dataset not in inputs:
                yield (
                    field,
                    f"it names {label(src.dataset)}, which is not a declared input",
                    "add that dataset to inputs=[...] or point at a declared input",
                )
                continue
            in_schema = inputs[src.dataset].schema or schemas.get(src.dataset)
            if in_schema is not None and src.column not in {f.name for f in in_schema}:
                yield (
                    field,
                    f"input column {src.column!r} is not in the schema of {label(src.dataset)}",
                    "add the column to that input's schema or correct its name",
                )


def column_lineage_transformations_known(spec: LineageSpec) -> Iterator[Problem]:
    subtypes = DIRECT_SUBTYPES | INDIRECT_SUBTYPES
    for field, _, _, sources in _column_entries(spec):
        for src in sources:
            if src.subtype.upper() not in subtypes:
                yield (
                    field,
                    f"unknown transformation subtype {src.subtype!r}",
                    f"use one of {sorted(subtypes)}",
                )
                continue
            expected = expected_type(src.subtype)
            if src.transformation_type != expected:
                yield (
                    field,
                    f"subtype {src.subtype} belongs to type {expected}, not {src.transformation_type}",
                    f"use type={expected!r} or leave type out",
                )


#: Every rule, in the order mistakes are reported.
RULES: tuple[Callable[[LineageSpec], Iterator[Problem]], ...] = (
    schema_columns_listed_once,
    schema_columns_named,
    one_schema_per_dataset,
    dataset_facets_on_datasets,
    job_or_run_facets_on_the_task,
    column_lineage_targets_output_columns,
    column_lineage_reads_declared_inputs,
    column_lineage_transformations_known,
)


def validate(spec: LineageSpec, task_id: str, dag_file: str | None = None) -> None:
    """Raise :class:`LineageDeclarationError` for the first authoring mistake found by :data:`RULES`."""
    where = f"{dag_file}: task {task_id!r}" if dag_file else f"task {task_id!r}"
    for rule in RULES:
        for field, problem, fix in rule(spec):
            raise LineageDeclarationError(f"{where}: lineage field {field!r}: {problem}. Fix: {fix}")
