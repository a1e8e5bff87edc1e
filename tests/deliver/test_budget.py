"""Size limits and redaction: SQL and schema cut with markers, events trimmed in the documented order,
credentials and known secrets redacted, quality facets free of values; every cut counted and logged."""

from __future__ import annotations

import json
import logging
from pathlib import Path
from typing import Any

import pytest
from openlineage.client.serde import Serde
from openlineage.client.transport import get_default_factory

from airflow_lineage_plus.deliver import event_budget
from airflow_lineage_plus.deliver.serialize import dumps, plain
from tests.support.openlineage_spec import validate_event
from tests.support.reliability_events import run_event

TRIMMED = "lineagePlus_trimmed"


def _cuts(event: dict[str, Any]) -> list[tuple[str, int]]:
    return [(c["what"], c["count"]) for c in event["run"]["facets"][TRIMMED]["cuts"]]


def _output(event: dict[str, Any]) -> dict[str, Any]:
    return event["outputs"][0]["facets"]  # type: ignore[no-any-return]


def test_sql_longer_than_sql_max_length_is_cut_with_a_marker_counted_and_logged(
    caplog: pytest.LogCaptureFixture,
) -> None:
    before = event_budget.cut_counts().get("SQL characters beyond sql_max_length", 0)
    event = plain(run_event(sql="SELECT 1 -- " + "x" * 5000))
    with caplog.at_level(logging.WARNING, logger="airflow_lineage_plus"):
        event = event_budget.enforce(event)
    query = event["job"]["facets"]["sql"]["query"]
    hidden = 5012 - 4000
    assert (
        query
        == ("SELECT 1 -- " + "x" * 5000)[:4000]
        + f"\n-- [cut by airflow-lineage-plus: {hidden} more characters]"
    )
    assert ("SQL characters beyond sql_max_length", hidden) in _cuts(event)
    assert event_budget.cut_counts()["SQL characters beyond sql_max_length"] - before == hidden
    assert any("SQL characters beyond sql_max_length (1012)" in r.getMessage() for r in caplog.records)
    validate_event(event)


def test_sql_length_limit_is_configurable(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("AIRFLOW__LINEAGE_PLUS__SQL_MAX_LENGTH", "10")
    event = plain(run_event(sql="SELECT * FROM orders"))
    event = event_budget.enforce(event)
    assert event["job"]["facets"]["sql"]["query"].startswith(
        "SELECT * F\n-- [cut by airflow-lineage-plus: 10 "
    )


def test_schema_wider_than_schema_max_columns_keeps_its_first_columns_and_says_how_many_are_left_out() -> (
    None
):
    event = plain(run_event(columns=620))
    event = event_budget.enforce(event)
    schema = _output(event)["schema"]
    assert [f["name"] for f in schema["fields"]] == [f"col_{i}" for i in range(500)]
    assert schema["lineagePlus_omittedFields"] == 120
    assert ("schema fields beyond schema_max_columns", 120 * 2) in _cuts(event)  # input and output schema
    validate_event(event)


def test_declared_wide_schema_is_summarised_and_counted_at_declaration() -> None:
    from airflow_lineage_plus.author.build import schema_facet
    from airflow_lineage_plus.author.spec import Field

    before = event_budget.cut_counts().get("schema fields beyond schema_max_columns", 0)
    facet = plain(schema_facet([Field(f"c{i}", "INT") for i in range(510)]))
    assert len(facet["fields"]) == 500 and facet["lineagePlus_omittedFields"] == 10
    assert event_budget.cut_counts()["schema fields beyond schema_max_columns"] - before == 10


def _sized(budget_bytes: int, monkeypatch: pytest.MonkeyPatch) -> dict[str, Any]:
    monkeypatch.setenv("AIRFLOW__LINEAGE_PLUS__EVENT_SIZE_BUDGET", str(budget_bytes))
    event = plain(run_event(columns=300, sql="SELECT " + ", ".join(f"col_{i}" for i in range(300))))
    event = event_budget.enforce(event)
    return event


def test_event_above_budget_loses_column_lineage_descriptions_first(monkeypatch: pytest.MonkeyPatch) -> None:
    full = len(dumps(plain(run_event(columns=300))))
    event = _sized(full - 20_000, monkeypatch)
    assert [what for what, _ in _cuts(event)] == [
        "column metric values (min/max/quantiles; quality_include_values is off)",
        "column-lineage descriptions",
    ]
    lineage = _output(event)["columnLineage"]["fields"]["col_0"]["inputFields"][0]["transformations"][0]
    assert "description" not in lineage and lineage["subtype"] == "TRANSFORMATION"
    assert _output(event)["dataQualityMetrics"]["columnMetrics"]["col_0"] == {
        "distinctCount": 10,
        "nullCount": 0,
    }
    facet = event["run"]["facets"][TRIMMED]
    assert facet["finalBytes"] <= facet["budgetBytes"] < facet["originalBytes"]
    validate_event(event)


def test_event_trimmed_in_the_documented_order_until_it_fits(monkeypatch: pytest.MonkeyPatch) -> None:
    event = _sized(30_000, monkeypatch)
    order = [what for what, _ in _cuts(event)][1:]  # after the values policy
    assert order == [what for what, _ in event_budget.TRIM_ORDER][: len(order)]
    assert len(order) >= 4  # descriptions, column metrics, column lineage, schema fields beyond 100
    assert "columnLineage" not in _output(event)
    assert _output(event)["dataQualityMetrics"]["columnMetrics"] == {}
    assert len(_output(event)["schema"]["fields"]) == event_budget.BUDGET_SCHEMA_COLUMNS
    assert len(dumps(event)) <= 30_000 + 2_000  # within budget, plus the trimmed facet itself
    validate_event(event)


def test_event_that_cannot_fit_is_sent_with_a_warning_never_dropped(
    monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    with caplog.at_level(logging.WARNING, logger="airflow_lineage_plus"):
        event = _sized(500, monkeypatch)
    assert event["job"]["name"] == "dag.task" and event["inputs"] and event["outputs"]
    assert any(
        "above the budget of 500" in r.getMessage() and "sent as is" in r.getMessage() for r in caplog.records
    )
    assert any(what.startswith("facet 'schema' of") for what, _ in _cuts(event))
    validate_event(event)


def test_whole_facets_cut_to_fit_never_include_the_cross_dag_link(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("AIRFLOW__LINEAGE_PLUS__EVENT_SIZE_BUDGET", "500")
    event = plain(run_event(columns=3))
    upstream = [
        {
            "job": {"namespace": "test-airflow", "name": f"orders_{i}.extract"},
            "run": {"runId": f"01a22674-e06b-7252-84d0-{i:012d}"},
            "dependency_type": "IMPLICIT_ASSET_DEPENDENCY",
        }
        for i in range(40)
    ]
    event["run"]["facets"]["jobDependencies"] = {
        "_producer": "https://github.com/apache/airflow/tree/providers-openlineage/2.20.0",
        "_schemaURL": "https://openlineage.io/spec/facets/1-0-1/JobDependenciesRunFacet.json#/$defs/JobDependenciesRunFacet",
        "upstream": upstream,
        "downstream": [],
    }
    trimmed = event_budget.enforce(event)
    assert trimmed["run"]["facets"]["jobDependencies"]["upstream"] == upstream  # the largest facet, kept
    cut = [what for what, _ in _cuts(trimmed)]
    assert "facet 'schema' of s3://raw/orders" in cut and not any("jobDependencies" in what for what in cut)
    validate_event(trimmed)


def test_event_objects_and_their_json_are_trimmed_alike(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("AIRFLOW__LINEAGE_PLUS__EVENT_SIZE_BUDGET", "40000")
    source = run_event(
        columns=620, sql="SELECT 1 -- " + "y" * 5000, run_id="01a22674-e06b-7252-84d0-26850cfac2fd"
    )
    as_dict = event_budget.enforce(plain(source))
    as_object = event_budget.enforce(source)
    assert json.loads(Serde.to_json(as_object)) == as_dict


def test_credentials_in_uris_are_redacted_in_every_string() -> None:
    event = plain(run_event(sql="COPY t FROM 'postgresql://etl:pa55w0rd@db:5432/x'"))
    event["job"]["facets"]["documentation"] = {
        "_producer": "p",
        "_schemaURL": "https://openlineage.io/spec/facets/1-1-0/DocumentationJobFacet.json#/$defs/DocumentationJobFacet",
        "description": "mirror of s3a://AKIAEXAMPLE:wJalrXUtnFEMI@bucket/key and https://user:tok3n@git.example.com/repo",
    }
    event["inputs"][0]["namespace"] = "mysql://root:rootpw@mysql:3306"
    event = event_budget.enforce(event)
    text = dumps(event).decode()
    for secret in ("pa55w0rd", "wJalrXUtnFEMI", "tok3n", "rootpw"):
        assert secret not in text
    assert "postgresql://etl:***@db:5432/x" in event["job"]["facets"]["sql"]["query"]
    assert event["inputs"][0]["namespace"] == "mysql://root:***@mysql:3306"
    assert event["outputs"][0]["namespace"] == "postgres://db:5432"  # no credentials: untouched


def test_secrets_known_to_airflows_masker_are_redacted() -> None:
    from airflow.sdk._shared.secrets_masker import mask_secret

    mask_secret("hunter2-correct-horse")
    event = plain(run_event(sql="SELECT * FROM t WHERE token = 'hunter2-correct-horse'"))
    before = event_budget.cut_counts().get("redacted strings", 0)
    event = event_budget.enforce(event)
    assert "hunter2-correct-horse" not in dumps(event).decode()
    assert "token = '***'" in event["job"]["facets"]["sql"]["query"]
    assert event_budget.cut_counts()["redacted strings"] - before == 1  # this event's one string holding it


def test_each_of_many_secrets_known_to_airflows_masker_is_redacted() -> None:
    """More registered secrets than redaction looks for one by one: the automaton alone finds them."""
    from airflow.sdk._shared.secrets_masker import mask_secret

    from airflow_lineage_plus.deliver import redaction

    secrets = [f"s3cret-number-{i:02d}-xyzzy" for i in range(redaction._Literals.MAX_NEEDLES + 4)]
    for secret in secrets:
        mask_secret(secret)
    for secret in (secrets[0], secrets[-1]):
        event = event_budget.enforce(plain(run_event(sql=f"SELECT 1 WHERE k = '{secret}'")))
        assert event["job"]["facets"]["sql"]["query"] == "SELECT 1 WHERE k = '***'"


def test_column_metric_values_leave_only_when_enabled(monkeypatch: pytest.MonkeyPatch) -> None:
    event = plain(run_event())
    event = event_budget.enforce(event)
    assert _output(event)["dataQualityMetrics"]["columnMetrics"]["col_1"] == {
        "nullCount": 0,
        "distinctCount": 10,
    }
    monkeypatch.setenv("AIRFLOW__LINEAGE_PLUS__QUALITY_INCLUDE_VALUES", "True")
    allowed = plain(run_event())
    allowed = event_budget.enforce(allowed)
    assert _output(allowed)["dataQualityMetrics"]["columnMetrics"]["col_1"]["max"] == 9.0
    assert TRIMMED not in allowed["run"]["facets"]


def test_runtime_record_carries_counts_only_by_default() -> None:
    from airflow_lineage_plus.author import profiling

    profile = profiling.profile([{"a": 1, "b": "x"}, {"a": 5, "b": None}], distinct=True, min_max=False)
    for column in profile.columns.values():
        assert column.min is None and column.max is None
    assert profile.columns["b"].null_count == 1


def test_budget_transformer_works_in_the_clients_transform_transport(tmp_path: Path) -> None:
    log = tmp_path / "events.jsonl"
    config: dict[str, Any] = {
        "type": "transform",
        "transformer_class": "airflow_lineage_plus.budget.BudgetTransformer",
        "transport": {"type": "file", "log_file_path": str(log), "append": True},
    }
    transport = get_default_factory().create(config)
    original = run_event(columns=510, sql="SELECT 'postgres://a:b-secret@h/db' " + "z" * 4100)
    transport.emit(original)
    (written,) = [json.loads(line) for line in log.read_text().splitlines()]
    assert "b-secret" not in json.dumps(written)
    assert len(_output(written)["schema"]["fields"]) == 500
    assert written["job"]["facets"]["sql"]["query"].endswith("more characters]")
    schema: Any = (original.outputs or [])[0].facets["schema"]  # type: ignore[index]
    assert len(schema.fields) == 510  # the caller's event is not changed
    validate_event(written)


def test_budget_transformer_does_not_send_an_event_it_could_not_check(
    caplog: pytest.LogCaptureFixture,
) -> None:
    class Unreadable:
        @property
        def run(self) -> Any:
            raise RuntimeError("broken event")

    with caplog.at_level(logging.WARNING, logger="airflow_lineage_plus"):
        assert event_budget.BudgetTransformer({}).transform(Unreadable()) is None
    assert any(
        "could not be checked for secrets and size (not sent)" in r.getMessage() for r in caplog.records
    )
