"""A declaration turned into the provider's ``OperatorLineage``, which rides on the provider's own events.

:func:`to_operator_lineage` builds the inputs, outputs (schema, column lineage, documentation, owners,
tags, custom facets, partitions as the subset facet) and job facets (SQL, tags, source code location,
custom facets) of one task, with the figures the task recorded at run time
(:mod:`airflow_lineage_plus.author.runtime`) on its COMPLETE/FAIL event. SQL and schemas are cut at the
configured limits (:mod:`airflow_lineage_plus.deliver.limits`).
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

import attr
from openlineage.client.event_v2 import InputDataset, OutputDataset
from openlineage.client.facet_v2 import (
    BaseFacet,
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
from airflow_lineage_plus.deliver import limits
from airflow_lineage_plus.facet_keys import OMITTED_FIELDS

if TYPE_CHECKING:
    from airflow.providers.openlineage.extractors import OperatorLineage

    from airflow_lineage_plus.author.runtime import DatasetFacts, TaskFacts
    from airflow_lineage_plus.author.spec import ColumnFrom, Field, LineageSpec

log = logging.getLogger(__name__)

#: Seconds a connection lookup may take in the provider's forked emitter before it is given up.
CONNECTION_LOOKUP_SECONDS = 3.0

AnyRef = datasets.DatasetRef | datasets.ConnectionTableRef
Resolver = Callable[[AnyRef], datasets.DatasetRef]


@attr.frozen
class _Found:
    """A dataset the task found at run time (not declared): only a reference and maybe a schema."""

    dataset: AnyRef
    schema: tuple[Field, ...] | None = None
    description: str | None = None
    owners: tuple[str, ...] = ()
    tags: tuple[str, ...] = ()
    facets: tuple[BaseFacet, ...] = ()
    column_lineage: None = None


def to_operator_lineage(
    spec: LineageSpec,
    facts: TaskFacts | None = None,
    *,
    final: bool = False,
    resolved_refs: Mapping[Any, datasets.DatasetRef] | None = None,
    attached: Sequence[datasets.DatasetRef] = (),
) -> OperatorLineage:
    """The provider's ``OperatorLineage`` for ``spec``, with runtime ``facts`` when ``final``.

    ``resolved_refs`` are connection-derived identities resolved beforehand in the task process
    (see ``LineageMixin.render_template_fields``); others are resolved here, within a time bound.
    ``attached``: the assets the task attached to its outlets at run time (``outlet_events``), outputs
    of the final event like those added with ``runtime.add_output``.
    """
    from airflow.providers.openlineage.extractors import OperatorLineage

    resolve = _resolver(resolved_refs)
    used = facts if final else None
    inputs = [_input_dataset(decl, resolve(decl.dataset), used) for decl in spec.inputs]
    outputs = [_output_dataset(decl, resolve(decl.dataset), resolve, used) for decl in spec.outputs]
    if final:
        _add_found_datasets(inputs, outputs, facts, resolve, attached)
    run_facets = {facet_key(f): f for f in spec.facets if isinstance(f, RunFacet)}
    return OperatorLineage(
        inputs=inputs, outputs=outputs, run_facets=run_facets, job_facets=_job_facets(spec)
    )


def _resolver(resolved_refs: Mapping[Any, datasets.DatasetRef] | None) -> Resolver:
    resolved: dict[Any, datasets.DatasetRef] = dict(resolved_refs or {})

    def resolve(ref: AnyRef) -> datasets.DatasetRef:
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

    return resolve


def _add_found_datasets(
    inputs: list[InputDataset],
    outputs: list[OutputDataset],
    facts: TaskFacts | None,
    resolve: Resolver,
    attached: Sequence[datasets.DatasetRef] = (),
) -> None:
    """Append the inputs and outputs the task found at run time and did not declare."""
    declared = {(d.namespace, d.name) for d in [*inputs, *outputs]}
    found_outputs = dict(facts.extra_outputs) if facts is not None else {}
    for ref in attached:
        found_outputs.setdefault(ref, None)
    for extra_ref, extra_schema in found_outputs.items():
        ref = resolve(extra_ref)
        if (ref.namespace, ref.name) not in declared:
            outputs.append(_output_dataset(_Found(ref, extra_schema), ref, resolve, facts))
            declared.add((ref.namespace, ref.name))
    for extra_ref, extra_schema in (facts.extra_inputs if facts is not None else {}).items():
        ref = resolve(extra_ref)
        if (ref.namespace, ref.name) not in declared:
            inputs.append(_input_dataset(_Found(ref, extra_schema), ref, facts))
            declared.add((ref.namespace, ref.name))


def _job_facets(spec: LineageSpec) -> dict[str, Any]:
    facets: dict[str, Any] = {}
    if spec.sql:
        facets["sql"] = sql_job.SQLJobFacet(query=cut_sql(spec.sql), dialect=spec.sql_dialect)
    # ownership and documentation reach the job through the task's owner and doc_md (see mixins),
    # because the provider builds those two facets from the task and overwrites operator facets.
    if spec.tags:
        facets["tags"] = tags_job.TagsJobFacet(
            tags=[tags_job.TagsJobFacetFields(key=t, value="true", source="LINEAGE_PLUS") for t in spec.tags]
        )
    repo, commit = conf.source_repository_url(), conf.source_commit()
    if repo:
        facets["sourceCodeLocation"] = source_code_location_job.SourceCodeLocationJobFacet(
            type="git",
            url=repo,
            repoUrl=repo,
            path=spec.source_path,
            version=commit or None,
        )
    for facet in spec.facets:
        if isinstance(facet, JobFacet):
            facets[facet_key(facet)] = facet
    return facets


def _owner(name: str) -> tuple[str, str | None]:
    """``"team:analytics"`` -> (``"team:analytics"``, ``"team"``); a bare name has no type."""
    kind, sep, _ = name.partition(":")
    return name, (kind if sep else None)


def _dataset_facets(decl: Any, schema: tuple[Field, ...] | None) -> dict[str, Any]:
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
        facets[facet_key(facet)] = facet
    return facets


def _recorded(decl: Any, ref: datasets.DatasetRef, facts: TaskFacts | None) -> DatasetFacts | None:
    return facts.for_dataset(decl.dataset, ref) if facts else None


def _schema(decl: Any, dataset_facts: DatasetFacts | None) -> tuple[Field, ...] | None:
    """The schema found at run time, else the declared one."""
    return (dataset_facts.schema if dataset_facts and dataset_facts.schema else None) or decl.schema


def _input_dataset(decl: Any, ref: datasets.DatasetRef, facts: TaskFacts | None) -> InputDataset:
    dataset_facts = _recorded(decl, ref, facts)
    facets = _dataset_facets(decl, _schema(decl, dataset_facts))
    input_facets: dict[str, Any] = {}
    subset = _partitioned(ref, dataset_facts).subset_facet("input")
    if subset is not None:
        input_facets["subset"] = subset
    if dataset_facts is not None:
        input_facets.update(dataset_facts.input_facets())
    return InputDataset(namespace=ref.namespace, name=ref.name, facets=facets, inputFacets=input_facets)


def _output_dataset(
    decl: Any, ref: datasets.DatasetRef, resolve: Resolver, facts: TaskFacts | None
) -> OutputDataset:
    dataset_facts = _recorded(decl, ref, facts)
    facets = _dataset_facets(decl, _schema(decl, dataset_facts))
    if decl.column_lineage:
        facets["columnLineage"] = column_lineage_dataset.ColumnLineageDatasetFacet(
            fields=_column_lineage_fields(decl.column_lineage, resolve)  # type: ignore[arg-type]
        )
    output_facets: dict[str, Any] = {}
    subset = _partitioned(ref, dataset_facts).subset_facet("output")
    if subset is not None:
        output_facets["subset"] = subset
    if dataset_facts is not None:
        facets.update(dataset_facts.dataset_facets())
        output_facets.update(dataset_facts.output_facets())
    return OutputDataset(namespace=ref.namespace, name=ref.name, facets=facets, outputFacets=output_facets)


def _partitioned(ref: datasets.DatasetRef, facts: DatasetFacts | None) -> datasets.DatasetRef:
    """``ref`` with the partition the task recorded figures for, when it recorded one."""
    if facts is not None and facts.partition:
        return ref.with_partition(facts.partition)
    return ref


#: JSON-ready parts built from immutable declarations, by the identity of what they were built from
#: (each entry keeps it alive, so the id is not reused): a task builds the same schema and column lineage
#: for each of its events, and building a wide declaration costs far more than a lookup (docs/reliability.md,
#: "What a user pays per event").
#: Shared between events, never changed: the transport serialises them, and trims a decoded copy.
_built: dict[tuple[str, int], tuple[object, object, Any]] = {}
_MAX_BUILT = 512


def _memo(part: str, source: object, variant: object, build: Callable[[], Any]) -> Any:
    """``part`` built from ``source`` (and ``variant``, compared by equality), built once."""
    known = _built.get((part, id(source)))
    if known is not None and known[0] is source and known[1] == variant:
        return known[2]
    if len(_built) >= _MAX_BUILT:
        _built.clear()
    value = build()
    _built[(part, id(source))] = (source, variant, value)
    return value


def _column_lineage_fields(
    column_lineage: Mapping[str, Sequence[ColumnFrom]], resolve: Resolver
) -> dict[str, dict[str, list[dict[str, Any]]]]:
    """The column-lineage facet's fields (JSON-ready dicts, as in ``Field.to_facet_field``), built once
    per declaration and resolution of its source datasets."""
    sources = _memo(
        "column sources",
        column_lineage,
        None,
        lambda: list(dict.fromkeys(src.dataset for entries in column_lineage.values() for src in entries)),
    )
    refs = {source: resolve(source) for source in sources}
    return _memo(  # type: ignore[no-any-return]
        "column lineage",
        column_lineage,
        refs,
        lambda: {
            column: {"inputFields": [_input_field(src, refs[src.dataset]) for src in entries]}
            for column, entries in column_lineage.items()
        },
    )


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


def facet_key(facet: BaseFacet) -> str:
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
    omitted = max(0, len(fields) - limit)

    def build() -> list[dict[str, Any]]:
        return [f.to_facet_field(position=i + 1) for i, f in enumerate(limits.cut_fields(fields, limit)[0])]

    facet = schema_dataset.SchemaDatasetFacet(  # JSON-ready dicts, built once per (immutable) schema
        fields=_memo("schema", fields, limit, build) if isinstance(fields, tuple) else build()  # type: ignore[arg-type]
    )
    if omitted:
        limits.count_cut(limits.SCHEMA_CUT, omitted)
        facet = facet.with_additional_properties(**{OMITTED_FIELDS: omitted})  # type: ignore[assignment]
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
    cut, hidden = limits.cut_sql(sql, limit)
    if hidden:
        limits.count_cut(limits.SQL_CUT, hidden)
        log.warning(
            "airflow-lineage-plus: SQL of %d characters cut to %d ([lineage_plus] sql_max_length)",
            len(sql),
            limit,
        )
    return cut
