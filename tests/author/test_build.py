"""Building the provider's OperatorLineage from a declaration (author/build.py): the schema and column
lineage of an immutable declaration are built once and reused by every event of the task, and yet follow
what can change between events: how a connection's table resolves, the configured schema cut."""

from __future__ import annotations

from typing import Any

import pytest

from airflow_lineage_plus import ColumnFrom, Field, Input, LineageSpec, Output, datasets
from airflow_lineage_plus.author import build, validation
from airflow_lineage_plus.deliver.serialize import plain

SOURCE = datasets.sql_table("warehouse", "raw.orders")
TARGET = datasets.postgres("db.internal", "shop", "marts", "orders")
SCHEMA = [Field(f"c{i}", "INT") for i in range(8)]


def _spec() -> LineageSpec:
    spec = LineageSpec(
        inputs=[Input(SOURCE, schema=SCHEMA)],
        outputs=[
            Output(TARGET, schema=SCHEMA, column_lineage={f.name: ColumnFrom(SOURCE, f.name) for f in SCHEMA})
        ],
    )
    validation.validate(spec, "build_test")
    return spec


def _resolved(host: str) -> dict[Any, datasets.DatasetRef]:
    return {SOURCE: datasets.postgres(host, "shop", "raw", "orders")}


def _output_facets(spec: LineageSpec, host: str) -> dict[str, Any]:
    lineage = build.to_operator_lineage(spec, None, resolved_refs=_resolved(host))
    facets: dict[str, Any] = lineage.outputs[0].facets
    return facets


def test_events_of_one_declaration_share_its_built_schema_and_column_lineage() -> None:
    spec = _spec()
    first, second = _output_facets(spec, "db-a"), _output_facets(spec, "db-a")
    assert second["schema"].fields is first["schema"].fields
    assert second["columnLineage"].fields is first["columnLineage"].fields
    assert plain(second) == plain(first)
    assert len(first["schema"].fields) == 8
    assert len(first["columnLineage"].fields) == 8


def test_column_lineage_follows_the_table_a_connection_resolves_to_at_each_event() -> None:
    spec = _spec()
    for host in ("db-a", "db-b", "db-a"):
        fields = _output_facets(spec, host)["columnLineage"].fields
        namespaces = {entry["namespace"] for column in fields.values() for entry in column["inputFields"]}
        assert namespaces == {f"postgres://{host}:5432"}


def test_the_schema_cut_follows_schema_max_columns_when_it_changes(monkeypatch: pytest.MonkeyPatch) -> None:
    spec = _spec()
    for limit in (3, 5, 3, 100):
        monkeypatch.setenv("AIRFLOW__LINEAGE_PLUS__SCHEMA_MAX_COLUMNS", str(limit))
        fields = _output_facets(spec, "db-a")["schema"].fields
        assert [f["name"] for f in fields] == [f"c{i}" for i in range(min(limit, 8))]
