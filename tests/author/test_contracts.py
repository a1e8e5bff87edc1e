"""Data contracts at task time, on real runs: a breaking output fails its task only with
``contract_mode = fail``, the result rides on the task's own events as ``dataQualityAssertions``, and
compatible changes (added column, widened types) pass."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from airflow_lineage_plus.author.column_types import CHANGED, NARROWED, SAME, WIDENED, compare
from tests.support.harness import AirflowRunner, DagRunResult
from tests.support.openlineage_spec import validate_events

pytestmark = pytest.mark.airflow

DAG_FILE = Path(__file__).parent / "dags" / "contract_outputs.py"
EXPECTED_BREACHES = {
    ("dataContract 2.1.0: TYPE_NARROWED", "order_id"),
    ("dataContract 2.1.0: NULLABILITY", "order_id"),
    ("dataContract 2.1.0: COLUMN_REMOVED", "coupon_code"),
}


@pytest.fixture(scope="module")
def runs(airflow_db: Path, tmp_path_factory: pytest.TempPathFactory) -> dict[str, DagRunResult]:
    """The DAG run once with contract_mode = warn and once with contract_mode = fail."""
    return {
        mode: AirflowRunner(tmp_path_factory.mktemp(f"contract-{mode}")).run(
            DAG_FILE, dag_id="contract_outputs", env={"AIRFLOW__LINEAGE_PLUS__CONTRACT_MODE": mode}
        )
        for mode in ("warn", "fail")
    }


def _terminal(result: DagRunResult, task_id: str) -> dict[str, Any]:
    (event,) = [e for e in result.task_events(task_id) if e["eventType"] in {"COMPLETE", "FAIL"}]
    return event


def _assertions(event: dict[str, Any]) -> set[tuple[str, str | None, bool]]:
    (output,) = event["outputs"]
    found = output["facets"]["dataQualityAssertions"]["assertions"]
    return {(a["assertion"], a.get("column"), a["success"]) for a in found}


def test_a_breaking_output_only_warns_by_default_and_records_each_breach(
    runs: dict[str, DagRunResult],
) -> None:
    result = runs["warn"]
    assert validate_events(result.events) == len(result.events)
    event = _terminal(result, "write_orders")
    assert event["eventType"] == "COMPLETE", result.output[-3000:]
    assert _assertions(event) == {(name, column, False) for name, column in EXPECTED_BREACHES}
    assert "broke the data contract" in result.output
    assert "contract_mode = fail fails the task" in result.output


def test_contract_mode_fail_fails_the_breaking_task_with_a_message_naming_the_fix(
    runs: dict[str, DagRunResult],
) -> None:
    result = runs["fail"]
    assert validate_events(result.events) == len(result.events)
    event = _terminal(result, "write_orders")
    assert event["eventType"] == "FAIL"
    assert _assertions(event) == {(name, column, False) for name, column in EXPECTED_BREACHES}
    message = event["run"]["facets"]["errorMessage"]["message"]
    assert "ContractBreachError" in result.output
    assert "COLUMN_REMOVED 'coupon_code'" in message
    assert "Fix: write the columns and types the contract declares" in message


@pytest.mark.parametrize("mode", ["warn", "fail"])
def test_compatible_changes_pass_the_contract(runs: dict[str, DagRunResult], mode: str) -> None:
    event = _terminal(runs[mode], "write_customers")
    assert event["eventType"] == "COMPLETE"
    # the new column, the wider id and the unbounded e-mail are compatible; a null e-mail is allowed
    assert _assertions(event) == {("dataContract 1.0.0", None, True)}


@pytest.mark.parametrize(
    ("declared", "actual", "expected"),
    [
        ("BIGINT", "int8", SAME),
        ("INTEGER", "BIGINT", WIDENED),
        ("BIGINT", "INT", NARROWED),
        ("DECIMAL(12,2)", "NUMERIC(14, 2)", WIDENED),
        ("DECIMAL(12,2)", "DECIMAL(12,1)", NARROWED),
        ("INTEGER", "DECIMAL(12,2)", WIDENED),
        ("VARCHAR(128)", "STRING", WIDENED),
        ("TEXT", "VARCHAR(64)", NARROWED),
        ("DATE", "TIMESTAMP", WIDENED),
        ("DOUBLE", "BIGINT", NARROWED),
        ("VARCHAR", "BIGINT", CHANGED),
    ],
)
def test_type_comparison(declared: str, actual: str, expected: str) -> None:
    assert compare(declared, actual) == expected
