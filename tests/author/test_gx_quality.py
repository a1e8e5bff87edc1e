"""A real Great Expectations run inside real Airflow tasks: each expectation is a dataQualityAssertions entry.

One recording (module scope) of ``dags/gx_quality.py``: a GX Checkpoint over the sample pipelines' contacts
and orders (data assets mapped to the two declared inputs; a third left unmapped) that fails its gate, and a
ValidationDefinition run recorded on a declared output. Expected figures come from the sample data itself.
"""

from __future__ import annotations

import importlib.util
import json
import os
import subprocess
import sys
from collections import Counter
from datetime import date
from pathlib import Path
from typing import Any

import pytest

from tests.support.harness import REPO, AirflowRunner, DagRunResult
from tests.support.openlineage_spec import validate_events

pytestmark = pytest.mark.airflow

DAGS = Path(__file__).parent / "dags"
SAMPLE_DAGS = REPO / "dags"
CONTACTS = ("s3://raw-data-lake", "crm/contacts")
ORDERS = ("s3://raw-data-lake", "orders")
DAY = date(2024, 6, 1)


def _sample_sources() -> Any:
    path = SAMPLE_DAGS / "lineage_samples" / "sources.py"
    spec = importlib.util.spec_from_file_location("sample_sources", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.fixture(scope="module")
def gx_run(airflow_db: Path, tmp_path_factory: pytest.TempPathFactory) -> DagRunResult:
    pytest.importorskip("great_expectations", reason="the test extra installs great_expectations")
    workdir = tmp_path_factory.mktemp("gx")
    result = AirflowRunner(workdir).run(
        DAGS / "gx_quality.py",
        dag_id="gx_quality",
        logical_date="2024-06-01T00:00:00+00:00",
        env={
            "PYTHONPATH": os.pathsep.join(p for p in (str(SAMPLE_DAGS), os.environ.get("PYTHONPATH")) if p),
            "GX_ANALYTICS_ENABLED": "false",
        },
        timeout=400,
    )
    assert result.task_events("validate_orders"), result.output[-4000:]
    return result


def _terminal(result: DagRunResult, task_id: str) -> dict[str, Any]:
    (event,) = [e for e in result.task_events(task_id) if e["eventType"] in {"COMPLETE", "FAIL"}]
    return event


def _dataset(event: dict[str, Any], kind: str, key: tuple[str, str]) -> dict[str, Any]:
    (found,) = [d for d in event[kind] if (d["namespace"], d["name"]) == key]
    return found


def _assertions(event: dict[str, Any], kind: str, key: tuple[str, str]) -> list[dict[str, Any]]:
    dataset = _dataset(event, kind, key)
    group = dataset["inputFacets"] if kind == "inputs" else dataset["facets"]
    return group["dataQualityAssertions"]["assertions"]  # type: ignore[no-any-return]


def _by_name(assertions: list[dict[str, Any]]) -> dict[str, dict[str, Any]]:
    named = {a["name"]: a for a in assertions}
    assert len(named) == len(assertions)
    return named


def test_every_event_of_the_gx_run_is_valid_against_the_spec(gx_run: DagRunResult) -> None:
    assert validate_events(gx_run.events) == len(gx_run.events) > 0


def test_each_gx_task_is_one_run_with_one_start_and_one_terminal_event(gx_run: DagRunResult) -> None:
    per_run = Counter((e["job"]["name"], e["run"]["runId"], e["eventType"]) for e in gx_run.task_events())
    assert sorted((job, kind, n) for (job, _run, kind), n in per_run.items()) == [
        ("gx_quality.crm_quality_gate", "FAIL", 1),
        ("gx_quality.crm_quality_gate", "START", 1),
        ("gx_quality.validate_orders", "COMPLETE", 1),
        ("gx_quality.validate_orders", "START", 1),
    ]
    assert all(len(runs) == 1 for runs in gx_run.runs_by_job().values())


def test_checkpoint_expectations_land_on_the_dataset_of_their_data_asset(gx_run: DagRunResult) -> None:
    failed = _terminal(gx_run, "crm_quality_gate")
    contacts = _assertions(failed, "inputs", CONTACTS)
    orders = _assertions(failed, "inputs", ORDERS)
    assert {(a["assertion"], a.get("column"), a["success"]) for a in contacts} == {
        ("expect_column_values_to_not_be_null", "email", False),
        ("expect_column_values_to_be_unique", "contact_id", True),
        ("expect_column_values_to_not_be_null", "annual_revenue_usd", True),
        ("expect_table_row_count_to_be_between", None, True),
    }
    assert {(a["assertion"], a.get("column"), a["success"]) for a in orders} == {
        ("expect_column_values_to_be_in_set", "status", True),
        ("expect_column_mean_to_be_between", "total_amount_usd", True),
    }


def test_a_data_asset_the_mapping_does_not_name_is_left_out_and_logged(gx_run: DagRunResult) -> None:
    failed = _terminal(gx_run, "crm_quality_gate")
    assert "accounts" not in json.dumps(failed["inputs"])
    assert len(_assertions(failed, "inputs", CONTACTS)) == 4  # the other assets are recorded all the same
    assert "Great Expectations results of data asset 'accounts' was lost: LookupError" in gx_run.output
    assert "add 'accounts': <its dataset>" in gx_run.output


def test_counts_severity_and_arguments_come_from_the_real_validation(gx_run: DagRunResult) -> None:
    people = _sample_sources().crm_contacts(DAY)
    failed = _terminal(gx_run, "crm_quality_gate")
    contacts = _by_name(_assertions(failed, "inputs", CONTACTS))
    email = contacts["crm_contacts.expect_column_values_to_not_be_null.email"]
    missing = sum(1 for p in people if p["email"] is None)
    assert missing > 0
    assert email["actual"] == f'{{"element_count": {len(people)}, "unexpected_count": {missing}}}'
    assert email["severity"] == "error"  # GX's default severity, critical
    assert "expected" not in email  # no argument but the column
    revenue = contacts["crm_contacts.expect_column_values_to_not_be_null.annual_revenue_usd"]
    assert revenue["severity"] == "warn"
    assert revenue["expected"] == '{"mostly": 0.8}'
    rows = contacts["crm_contacts.expect_table_row_count_to_be_between"]
    assert (rows["actual"], rows["expected"]) == (str(len(people)), '{"max_value": 1000, "min_value": 1}')


def test_values_computed_from_the_data_stay_in_the_task_by_default(gx_run: DagRunResult) -> None:
    failed = _terminal(gx_run, "crm_quality_gate")
    orders = _by_name(_assertions(failed, "inputs", ORDERS))
    mean = orders["orders.expect_column_mean_to_be_between.total_amount_usd"]
    assert mean["expected"] == '{"max_value": 900.0, "min_value": 5.0}'  # GX keeps them as floats
    assert "actual" not in mean  # the observed mean is a value: [lineage_plus] quality_include_values is off
    assert "partial_unexpected" not in str(failed)  # GX's lists of unexpected values never leave the task


def test_a_validation_definition_run_lands_on_the_declared_output(gx_run: DagRunResult) -> None:
    complete = _terminal(gx_run, "validate_orders")
    assertions = _by_name(_assertions(complete, "outputs", ORDERS))
    assert {n: a["success"] for n, a in assertions.items()} == {
        "orders_written.expect_column_values_to_be_unique.order_id": True,
        "orders_written.expect_table_row_count_to_equal": True,
    }
    assert assertions["orders_written.expect_table_row_count_to_equal"]["actual"] == "40"


def test_expectations_are_recorded_at_run_time_not_on_start(gx_run: DagRunResult) -> None:
    for task_id in ("crm_quality_gate", "validate_orders"):
        (start,) = [e for e in gx_run.task_events(task_id) if e["eventType"] == "START"]
        assert "dataQualityAssertions" not in str(start)


def test_failed_upstream_names_the_expectation_that_failed_on_the_dataset(
    gx_run: DagRunResult, tmp_path: Path
) -> None:
    from airflow_lineage_plus.cli import run
    from airflow_lineage_plus.store import wire as w

    failed = _terminal(gx_run, "crm_quality_gate")
    log = tmp_path / "events.jsonl"
    log.write_text("".join(json.dumps(e) + "\n" for e in gx_run.events))
    query = ["--events", str(log), "failed-upstream", "--namespace", CONTACTS[0]]
    code, out, err = run([*query, "--name", CONTACTS[1], "--format", "json"])
    assert code == 4, err  # the contacts' latest email check failed
    answer = json.loads(out)
    job = f"job:{failed['job']['namespace']}:{failed['job']['name']}"
    assert answer["target"]["failedAssertions"] == [
        {
            "assertion": "expect_column_values_to_not_be_null",
            "column": "email",
            "job": job,
            "at": w.format_micros(w.to_micros(failed["eventTime"])),
        }
    ]
    code, out, err = run([*query[:-1], ORDERS[0], "--name", ORDERS[1], "--format", "json"])
    assert "failedAssertions" not in json.loads(out)["target"]  # every expectation on orders passed


def test_great_expectations_is_not_imported_with_the_runtime_api() -> None:
    code = (
        "import sys, airflow_lineage_plus.author.runtime, airflow_lineage_plus.author.expectations;"
        "print('great_expectations' in sys.modules)"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert out.stdout.strip() == "False"
