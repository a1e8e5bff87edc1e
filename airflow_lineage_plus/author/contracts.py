"""Data contracts held at task time: the schema a task wrote, checked against its outputs' contracts.

An output declared with a :class:`~airflow_lineage_plus.custom_facets.DataContract` and a schema is checked
when the task's ``execute()`` has returned, against what the task recorded about it: the run-time schema
(``runtime.set_schema``) and the profile of the data (``runtime.record``). A breach is a declared column
missing (``COLUMN_REMOVED``), a type narrowed (``BIGINT`` -> ``INTEGER``) or changed to another kind
(``TYPE_NARROWED``, ``TYPE_CHANGED``), or nulls in, or a nullable type for, a column declared
``nullable=False`` (``NULLABILITY``). Added columns and widened types are compatible and pass.

Each contract checked leaves ``dataQualityAssertions`` on the output (one failed assertion per breach, or
one passed), so the event and the Lineage view show the result. ``[lineage_plus] contract_mode``: ``warn``
(default) logs the breaches and lets the task succeed; ``fail`` fails the task with
:class:`~airflow_lineage_plus.exceptions.ContractBreachError`; ``off`` checks nothing.

Why at the end of ``execute()`` (``LineageMixin.post_execute``): it is the last moment the task's outcome
can still change. The provider builds the COMPLETE event later, in a forked child, after Airflow has
recorded the task's state; an operator lineage method raising there changes nothing but the event.
"""

from __future__ import annotations

import logging
from collections.abc import Iterator
from typing import TYPE_CHECKING, Any

import attr
from openlineage.client.facet_v2 import data_quality_assertions_dataset

from airflow_lineage_plus import conf, datasets
from airflow_lineage_plus.author.column_types import CHANGED, NARROWED, compare
from airflow_lineage_plus.author.validation import label
from airflow_lineage_plus.custom_facets import DataContract
from airflow_lineage_plus.exceptions import ContractBreachError

if TYPE_CHECKING:
    from airflow_lineage_plus.author.runtime import DatasetFacts, TaskFacts
    from airflow_lineage_plus.author.spec import Field, LineageSpec, Output

log = logging.getLogger("airflow_lineage_plus")

COLUMN_REMOVED, TYPE_NARROWED, TYPE_CHANGED, NULLABILITY = (
    "COLUMN_REMOVED",
    "TYPE_NARROWED",
    "TYPE_CHANGED",
    "NULLABILITY",
)


@attr.frozen
class Breach:
    """One way a task's output broke its contract."""

    dataset: str
    contract: str
    kind: str
    column: str
    detail: str

    def line(self) -> str:
        return f"{self.dataset} (contract {self.contract}): {self.kind} {self.column!r}: {self.detail}"


def contract_of(output: Output) -> DataContract | None:
    return next((f for f in output.facets if isinstance(f, DataContract)), None)


def _columns_found(facts: DatasetFacts) -> dict[str, Field] | None:
    """The run-time schema as name -> Field, or None when the task recorded none."""
    return {f.name: f for f in facts.schema} if facts.schema else None


def _column_breaches(
    declared: Field, found: dict[str, Field] | None, facts: DatasetFacts
) -> Iterator[tuple[str, str]]:
    profile = facts.profile
    profiled = profile.columns if profile is not None and profile.row_count and profile.columns else None
    if found is not None and declared.name not in found:
        yield COLUMN_REMOVED, "the run-time schema has no such column"
    elif found is None and profiled is not None and declared.name not in profiled:
        yield COLUMN_REMOVED, "the recorded data has no such column"
    actual = found.get(declared.name) if found is not None else None
    if actual is not None and declared.type and actual.type:
        how = compare(declared.type, actual.type)
        if how in {NARROWED, CHANGED}:
            kind = TYPE_NARROWED if how == NARROWED else TYPE_CHANGED
            yield kind, f"declared {declared.type}, written as {actual.type}"
    if declared.nullable is False:
        if actual is not None and actual.nullable:
            yield NULLABILITY, "declared not null, written as nullable"
        nulls = profiled[declared.name].null_count if profiled and declared.name in profiled else None
        if nulls:
            yield NULLABILITY, f"declared not null, {nulls} null value(s) written"


def check_output(output: Output, facts: DatasetFacts | None) -> list[Breach]:
    """The breaches of ``output``'s contract by what the task recorded (none without a contract, a
    declared schema or recorded facts)."""
    contract = contract_of(output)
    if contract is None or output.schema is None or facts is None:
        return []
    found = _columns_found(facts)
    return [
        Breach(label(output.dataset), contract.version, kind, declared.name, detail)
        for declared in output.schema
        for kind, detail in _column_breaches(declared, found, facts)
    ]


def _record(facts: DatasetFacts, contract: DataContract, breaches: list[Breach]) -> None:
    name = f"dataContract {contract.version}"
    if not breaches:
        facts.assertions.append(data_quality_assertions_dataset.Assertion(assertion=name, success=True))
    for breach in breaches:
        facts.assertions.append(
            data_quality_assertions_dataset.Assertion(
                assertion=f"{name}: {breach.kind}",
                success=False,
                column=breach.column,
                description=breach.detail,
            )
        )


def check(spec: LineageSpec, task_facts: TaskFacts | None, resolved: dict[Any, Any]) -> list[Breach]:
    """Check every contracted output of ``spec`` and record the result on its facts; the breaches."""
    if task_facts is None:
        return []
    breaches: list[Breach] = []
    for output in spec.outputs:
        contract = contract_of(output)
        ref = resolved.get(output.dataset, output.dataset)
        if isinstance(ref, datasets.DatasetRef):
            facts = task_facts.for_dataset(output.dataset, ref)
        else:
            facts = task_facts.by_dataset.get(output.dataset)
        if contract is None or facts is None or output.schema is None:
            continue
        found = check_output(output, facts)
        _record(facts, contract, found)
        breaches += found
    return breaches


def enforce(task_id: str, breaches: list[Breach]) -> None:
    """Warn about ``breaches``, and with ``contract_mode = fail`` fail the task."""
    if not breaches:
        return
    listing = "\n".join(f"  - {b.line()}" for b in breaches)
    fix = (
        "Fix: write the columns and types the contract declares, or publish a new contract version with "
        "the new schema"
    )
    if conf.contract_mode() == "fail":
        raise ContractBreachError(
            f"task {task_id!r} broke the data contract of its output:\n{listing}\n{fix} "
            "([lineage_plus] contract_mode = warn only warns)."
        )
    log.warning(
        "airflow-lineage-plus: task %r broke the data contract of its output:\n%s\n%s "
        "([lineage_plus] contract_mode = fail fails the task).",
        task_id,
        listing,
        fix,
    )
