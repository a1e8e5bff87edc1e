"""Record lineage facts from inside a running task: figures, assertions, run-time schemas, extra outputs.

Facts are kept in the process-local task registry (:mod:`airflow_lineage_plus.emit.registry`), keyed
by the task instance (dag, task, run, map index, try). The provider builds a task's COMPLETE or FAIL
event after ``execute()`` in the same memory image (a forked child or a thread), so the declared
operator methods read the facts from there and put them on that event: no extra event, no extra run.

Every public function here is contained: misuse or a failure inside lineage code is logged once,
saying what was lost, and never reaches the task.

.. code-block:: python

    from airflow_lineage_plus import runtime

    rows = load_rows()
    runtime.record(STG_ORDERS, rows)  # row count, null counts per column, bytes
    runtime.assertion(STG_ORDERS, "order_id_not_null", success=..., column="order_id")
    runtime.record_expectations(checkpoint.run(...), STG_ORDERS)  # a Great Expectations run
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

import attr
from openlineage.client.facet_v2 import (
    data_quality_assertions_dataset,
    data_quality_metrics_dataset,
    data_quality_metrics_input_dataset,
    output_statistics_output_dataset,
)

from airflow_lineage_plus import conf, datasets
from airflow_lineage_plus.author import expectations, profiling
from airflow_lineage_plus.author.spec import DatasetLike, Field, FieldLike, as_field, as_ref
from airflow_lineage_plus.containment import contain, contained
from airflow_lineage_plus.custom_facets import EXECUTION_MODES, ExecutionModeRunFacet
from airflow_lineage_plus.emit import registry

RefLike = datasets.DatasetRef | datasets.ConnectionTableRef


@attr.define
class DatasetFacts:
    """What the task recorded about one dataset."""

    profile: profiling.Profile | None = None
    bytes: int | None = None
    file_count: int | None = None
    assertions: list[data_quality_assertions_dataset.Assertion] = attr.Factory(list)
    schema: tuple[Field, ...] | None = None
    partition: dict[str, str] | None = None
    """The partition the task recorded figures for (``ref.with_partition(date=...)``), if any."""

    def _column_metrics(self) -> dict[str, Any]:
        """Per-column metrics as JSON-ready dicts (cheaper than attrs objects for wide tables)."""
        if self.profile is None:
            return {}
        metrics: dict[str, Any] = {}
        for name, col in self.profile.columns.items():
            entry = metrics[name] = {}
            if col.null_count is not None:
                entry["nullCount"] = col.null_count
            if col.distinct_count is not None:
                entry["distinctCount"] = col.distinct_count
            if col.min is not None:
                entry["min"] = col.min
            if col.max is not None:
                entry["max"] = col.max
        return metrics

    def _quality_facets(self, metrics_class: Any, with_metrics: bool) -> dict[str, Any]:
        facets: dict[str, Any] = {}
        if with_metrics:
            facets["dataQualityMetrics"] = metrics_class(
                rowCount=self.profile.row_count if self.profile else None,
                bytes=self.bytes,
                fileCount=self.file_count,
                columnMetrics=self._column_metrics(),
            )
        if self.assertions:
            facets["dataQualityAssertions"] = (
                data_quality_assertions_dataset.DataQualityAssertionsDatasetFacet(
                    assertions=list(self.assertions)
                )
            )
        return facets

    def input_facets(self) -> dict[str, Any]:
        """Input-dataset facets of what was read: ``dataQualityMetrics`` and ``dataQualityAssertions``."""
        return self._quality_facets(
            data_quality_metrics_input_dataset.DataQualityMetricsInputDatasetFacet,
            self.profile is not None or self.bytes is not None,
        )

    def dataset_facets(self) -> dict[str, Any]:
        """Dataset facets of what was written: ``dataQualityMetrics`` and ``dataQualityAssertions``."""
        return self._quality_facets(
            data_quality_metrics_dataset.DataQualityMetricsDatasetFacet, self.profile is not None
        )

    def output_facets(self) -> dict[str, Any]:
        if self.profile is None and self.bytes is None:
            return {}
        return {
            "outputStatistics": output_statistics_output_dataset.OutputStatisticsOutputDatasetFacet(
                rowCount=self.profile.row_count if self.profile else None,
                size=self.bytes,
                fileCount=self.file_count,
            )
        }


@attr.define
class TaskFacts:
    """Everything recorded by one task instance, keyed by dataset reference."""

    by_dataset: dict[RefLike, DatasetFacts] = attr.Factory(dict)
    extra_outputs: dict[RefLike, tuple[Field, ...] | None] = attr.Factory(dict)
    extra_inputs: dict[RefLike, tuple[Field, ...] | None] = attr.Factory(dict)

    def facts(self, ref: RefLike) -> DatasetFacts:
        facts = self.by_dataset.setdefault(ref, DatasetFacts())
        if ref.partition:
            facts.partition = dict(ref.partition)
        return facts

    def for_dataset(self, declared: RefLike, resolved: datasets.DatasetRef) -> DatasetFacts | None:
        """Facts recorded under the declared reference or under its resolved identity."""
        found = self.by_dataset.get(declared) or self.by_dataset.get(resolved)
        if found is not None:
            return found
        for ref, facts in self.by_dataset.items():
            if isinstance(ref, datasets.DatasetRef) and (ref.namespace, ref.name) == (
                resolved.namespace,
                resolved.name,
            ):
                return facts
        return None


def facts_for(task_instance: Any) -> TaskFacts | None:
    """What the running task instance recorded, if anything (read by the operator lineage methods)."""
    entry = registry.find(task_instance)
    return entry.facts if entry is not None else None  # type: ignore[no-any-return]


def _current() -> TaskFacts:
    return registry.facts(registry.current_task_key(), TaskFacts)


def record(
    dataset: DatasetLike,
    data: Any = None,
    *,
    row_count: int | None = None,
    bytes: int | None = None,
    file_count: int | None = None,
    null_counts: Mapping[str, int] | None = None,
    columns: Iterable[str] | None = None,
    distinct: bool = False,
    min_max: bool = False,
) -> None:
    """Record figures for ``dataset``, computed from ``data`` (list of dicts, pandas or pyarrow) or given.

    ``distinct`` adds distinct counts; ``min_max`` adds min and max, and only when
    ``[lineage_plus] quality_include_values`` allows values to leave the task.
    """
    with contained(f"data-quality figures for {dataset!r}"):
        ref = as_ref(dataset)
        if data is not None:
            profile = profiling.profile(
                data,
                columns=columns,
                distinct=distinct,
                min_max=min_max and conf.quality_include_values(),
            )
        else:
            profile = profiling.Profile(row_count=row_count, columns={})
        if row_count is not None:
            profile = attr.evolve(profile, row_count=row_count)
        for name, count in (null_counts or {}).items():
            profile.columns.setdefault(name, profiling.ColumnProfile()).null_count = int(count)
        facts = _current().facts(ref)
        facts.profile = profile
        if bytes is not None:
            facts.bytes = int(bytes)
        if file_count is not None:
            facts.file_count = int(file_count)


def assertion(
    dataset: DatasetLike,
    name: str,
    *,
    success: bool,
    column: str | None = None,
    description: str | None = None,
    severity: str | None = None,
    expected: Any = None,
    actual: Any = None,
) -> bool:
    """Record a named data-quality assertion on ``dataset``; returns ``success`` for chaining."""
    with contained(f"assertion {name!r} on {dataset!r}"):
        item = data_quality_assertions_dataset.Assertion(
            assertion=name,
            success=bool(success),
            column=column,
            severity=severity,
            description=description,
            expected=None if expected is None else str(expected),
            actual=None if actual is None else str(actual),
        )
        _current().facts(as_ref(dataset)).assertions.append(item)
    return bool(success)


def record_expectations(result: Any, dataset: DatasetLike | Mapping[str, DatasetLike]) -> bool:
    """Record each expectation of a Great Expectations run as a ``dataQualityAssertions`` entry.

    ``result`` is what a GX ``Checkpoint.run()`` or ``ValidationDefinition.run()`` returns (or its
    ``to_json_dict()``); :mod:`airflow_lineage_plus.author.expectations` says what each entry carries.
    ``dataset`` is the dataset the validations ran on or, for a checkpoint over several GX data assets, a
    mapping from data asset name to dataset: a validation of an asset the mapping does not name is left
    out, logged once. Like :func:`assertion`, the entries land on the task's COMPLETE/FAIL event on that
    dataset, which the task declares (or adds with :func:`add_input`). Returns whether every expectation
    passed, so the task can fail its own quality gate after recording it.
    """
    passed = bool(getattr(result, "success", False))
    found: dict[str, list[Any]] = {}
    with contained("Great Expectations results"):
        found = expectations.assertions_by_asset(result, include_values=conf.quality_include_values())
        passed = all(a.success for entries in found.values() for a in entries)
    for asset, entries in found.items():
        with contained(f"Great Expectations results of data asset {asset!r}"):
            if entries:
                _current().facts(as_ref(_expectation_target(dataset, asset))).assertions.extend(entries)
    return passed


def _expectation_target(dataset: DatasetLike | Mapping[str, DatasetLike], asset: str) -> DatasetLike:
    """The dataset of the validations of GX data asset ``asset``."""
    if not isinstance(dataset, Mapping):
        return dataset
    if asset in dataset:
        return dataset[asset]
    named = ", ".join(map(repr, dataset)) or "none"
    raise LookupError(
        f"the Great Expectations data asset {asset!r} is not in the datasets given ({named}): "
        f"add {asset!r}: <its dataset> to record_expectations(result, {{...}})"
    )


def set_schema(dataset: DatasetLike, fields: Iterable[FieldLike]) -> None:
    """Record the schema of ``dataset`` as found at run time; it replaces the declared one on the event."""
    with contained(f"run-time schema of {dataset!r}"):
        _current().facts(as_ref(dataset)).schema = tuple(as_field(f) for f in fields)


def add_output(dataset: DatasetLike, schema: Iterable[FieldLike] | None = None) -> None:
    """Add an output found at run time (not declared) to this task's COMPLETE/FAIL event."""
    with contained(f"run-time output {dataset!r}"):
        _current().extra_outputs[as_ref(dataset)] = None if schema is None else tuple(map(as_field, schema))


def add_input(dataset: DatasetLike, schema: Iterable[FieldLike] | None = None) -> None:
    """Add an input found at run time (not declared) to this task's COMPLETE/FAIL event."""
    with contained(f"run-time input {dataset!r}"):
        _current().extra_inputs[as_ref(dataset)] = None if schema is None else tuple(map(as_field, schema))


@contain("the execution mode facet", default=lambda: None)
def set_execution_mode(mode: str, reason: str | None = None) -> None:
    """Say, from inside a running task, how this run went: ``RAN``, ``CACHED``, ``NO_OP`` or ``PARTIAL``.

    The mode lands on the task's own COMPLETE (or FAIL) event as ``lineagePlus_executionMode``. A mode
    outside :data:`~airflow_lineage_plus.custom_facets.EXECUTION_MODES` is refused (logged once, the task
    goes on).
    """
    normalized = str(mode).strip().upper().replace("-", "_")
    if normalized not in EXECUTION_MODES:
        raise ValueError(f"execution mode {mode!r} is not one of {', '.join(EXECUTION_MODES)}")
    registry.entry(registry.current_task_key()).execution_mode = ExecutionModeRunFacet(
        mode=normalized, reason=reason
    )


__all__ = [
    "add_input",
    "add_output",
    "assertion",
    "facts_for",
    "record",
    "record_expectations",
    "set_execution_mode",
    "set_schema",
]
