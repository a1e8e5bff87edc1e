"""Authoring mistakes fail at DAG parse time with an import error naming the DAG file, task, field and fix."""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest

from airflow_lineage_plus import (
    ColumnFrom,
    Field,
    Input,
    LineageDeclarationError,
    LineageSpec,
    Output,
    datasets,
)
from airflow_lineage_plus.author import validation

RAW = datasets.s3("s3://raw/orders/")
STG = datasets.postgres("db", "analytics", "staging", "stg_orders")

HEADER = """
import pendulum
from airflow.sdk import dag, task
from airflow_lineage_plus import ColumnFrom, Field, Input, Output, datasets, lineage

RAW = datasets.s3("s3://raw/orders/")
STG = datasets.postgres("db", "analytics", "staging", "stg_orders")

@dag(schedule=None, start_date=pendulum.datetime(2024, 1, 1, tz="UTC"))
def broken():
    {decorator}
    @task
    def load():
        pass
    load()

broken()
"""

CASES = {
    "column lineage from an undeclared dataset": (
        '@lineage(outputs=[Output(STG, column_lineage={"id": [ColumnFrom(RAW, "id")]})])',
        ["'load'", "outputs[0].column_lineage['id']", "not a declared input", "Fix:"],
    ),
    "column missing from the input schema": (
        '@lineage(inputs=[Input(RAW, schema=[Field("id")])], '
        'outputs=[Output(STG, column_lineage={"id": [ColumnFrom(RAW, "order_id")]})])',
        ["'load'", "input column 'order_id' is not in the schema", "Fix:"],
    ),
    "output column missing from the output schema": (
        '@lineage(inputs=[RAW], outputs=[Output(STG, schema=[Field("id")], '
        'column_lineage={"total": [ColumnFrom(RAW, "amount")]})])',
        ["output column 'total' is not in the schema", "Fix:"],
    ),
    "one dataset declared twice with conflicting schemas": (
        '@lineage(inputs=[Input(STG, schema=[Field("id", "INT")])], '
        'outputs=[Output(STG, schema=[Field("id", "TEXT")])])',
        ["outputs[0].schema", "declared twice with different schemas"],
    ),
    "an empty dataset name": (
        '@lineage(outputs=["postgres://db:5432/analytics.staging."])',
        ["'load'", "table"],
    ),
    "a malformed URI": (
        '@lineage(inputs=["not a uri"])',
        ["'load'", "uri"],
    ),
}


@pytest.mark.parametrize("decorator, expected", list(CASES.values()), ids=list(CASES))
def test_authoring_mistake_is_an_import_error_naming_file_task_and_field(
    tmp_path: Path, decorator: str, expected: list[str]
) -> None:
    try:
        from airflow.dag_processing.dagbag import DagBag
    except ImportError:  # Airflow 3.1
        from airflow.models.dagbag import DagBag  # type: ignore[no-redef]

    dag_file = tmp_path / "broken_dag.py"
    dag_file.write_text(textwrap.dedent(HEADER).replace("{decorator}", decorator))
    bag = DagBag(dag_folder=str(tmp_path))
    assert bag.dags == {}
    (message,) = bag.import_errors.values()
    assert "broken_dag.py" in message
    for fragment in expected:
        assert fragment in message, f"{fragment!r} missing from:\n{message}"


def test_lineage_above_a_plain_function_names_the_fix() -> None:
    from airflow_lineage_plus import lineage

    with pytest.raises(LineageDeclarationError, match="put @lineage above @task"):

        @lineage(inputs=[RAW])
        def not_a_task() -> None: ...


def test_subtype_and_type_must_agree() -> None:
    spec = LineageSpec(
        inputs=[RAW],
        outputs=[Output(STG, column_lineage={"id": [ColumnFrom(RAW, "id", subtype="JOIN", type="DIRECT")]})],
    )
    with pytest.raises(LineageDeclarationError, match="subtype JOIN belongs to type INDIRECT"):
        validation.validate(spec, "t")


def test_unknown_transformation_subtype_is_rejected() -> None:
    spec = LineageSpec(
        inputs=[RAW], outputs=[Output(STG, column_lineage={"id": [ColumnFrom(RAW, "id", subtype="MAGIC")]})]
    )
    with pytest.raises(LineageDeclarationError, match="unknown transformation subtype 'MAGIC'"):
        validation.validate(spec, "t")


def test_a_job_facet_on_a_dataset_is_rejected() -> None:
    from airflow_lineage_plus import OwningTeam

    spec = LineageSpec(outputs=[Output(STG, facets=[OwningTeam(name="x")])])
    with pytest.raises(LineageDeclarationError, match="is not a dataset facet"):
        validation.validate(spec, "t")


def test_duplicate_schema_columns_are_rejected() -> None:
    spec = LineageSpec(inputs=[Input(RAW, schema=[Field("id"), Field("id")])])
    with pytest.raises(LineageDeclarationError, match=r"\['id'\] appear twice"):
        validation.validate(spec, "t")


def test_a_valid_declaration_passes_validation() -> None:
    spec = LineageSpec(
        inputs=[Input(RAW, schema=[Field("id"), Field("amount")])],
        outputs=[
            Output(
                STG,
                schema=[Field("id"), Field("total")],
                column_lineage={"total": [ColumnFrom(RAW, "amount", subtype="AGGREGATION")]},
            )
        ],
    )
    validation.validate(spec, "t")  # a mistake raises, naming the fix
    # and validation leaves the declaration as it was written
    assert spec.outputs[0].column_lineage == {"total": (ColumnFrom(RAW, "amount", subtype="AGGREGATION"),)}
