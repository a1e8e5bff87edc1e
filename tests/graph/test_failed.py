"""failed-upstream names the datasets whose latest assertions failed (graph/failed.py), over built events:
a writer's own assertions, a quality check that reads the dataset (Great Expectations, a dbt test), the
newest result winning, per-DAG visibility, hostile facets."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from airflow_lineage_plus.cli import run
from airflow_lineage_plus.graph import LineageQueries
from airflow_lineage_plus.graph.eventlog import EventLogSource
from airflow_lineage_plus.graph.failed import MAX_NAMED
from airflow_lineage_plus.graph.run_history import MAX_TEXT
from airflow_lineage_plus.graph.what_changed import render
from airflow_lineage_plus.store import wire as w
from tests.support.graph_builders import at, dataset_node, facet, job_node, write_log
from tests.support.store_engines import store_source_of
from tests.support.what_changed_events import DAY, assertions, check, week

pytestmark = pytest.mark.timeout(60)
RAW, STG = dataset_node("raw.contacts"), dataset_node("stg.contacts")
LAST_EXTRACT = at(7 * DAY + 10)  # the CRM extract's last run ended then


def _failed_upstream(tmp_path: Path, events: list[dict[str, Any]], **kw: Any) -> dict[str, Any]:
    source = EventLogSource(write_log(tmp_path / "events.jsonl", events))
    try:
        return LineageQueries(source, **kw).failed_upstream(STG)
    finally:
        source.close()


def test_a_failed_assertion_the_writer_recorded_names_its_dataset(tmp_path: Path) -> None:
    events = week(raw_assertions=[("not_null", "email", False), ("row_count_between", None, True)])
    answer = _failed_upstream(tmp_path, events)
    assert [(n["id"], n["depth"]) for n in answer["nodes"]] == [(RAW, 2)]
    assert answer["nodes"][0]["failedAssertions"] == [
        {"assertion": "not_null", "column": "email", "job": job_node("crm_extract"), "at": LAST_EXTRACT}
    ]
    assert answer["edges"] == [
        {"origin": RAW, "destination": job_node("stg_contacts"), "state": "current"},
        {"origin": job_node("stg_contacts"), "destination": STG, "state": "current"},
    ]
    assert "failedAssertions" not in answer["target"]
    stored = store_source_of(tmp_path / "events.jsonl")
    try:
        assert LineageQueries(stored).failed_upstream(STG) == answer  # the store reads them back the same
    finally:
        stored.close()


def test_passing_assertions_name_nothing(tmp_path: Path) -> None:
    answer = _failed_upstream(tmp_path, week(raw_assertions=[("not_null", "email", True)]))
    assert answer["nodes"] == [] and answer["edges"] == []


def test_a_quality_check_reading_the_dataset_counts_and_its_newest_result_wins(tmp_path: Path) -> None:
    gx = [("expect_column_values_to_not_be_null", "email", False), ("expect_table_row_count", None, False)]
    events = week() + check("gx_contacts", "stg.contacts", 7 * DAY + 30, gx)
    events += check("gx_raw", "raw.contacts", 7 * DAY + 32, [("unique", "id", False)])
    events += check("dbt_test_raw", "raw.contacts", 7 * DAY + 40, [("unique", "id", True)])  # later: passed
    answer = _failed_upstream(tmp_path, events)
    assert answer["nodes"] == []  # raw.contacts' newest result of ``unique id`` passed
    assert answer["target"]["failedAssertions"] == [
        {"assertion": a, "column": c, "job": job_node("gx_contacts"), "at": at(7 * DAY + 31)}
        for a, c in (("expect_column_values_to_not_be_null", "email"), ("expect_table_row_count", None))
    ]


def test_the_cli_exits_4_and_says_which_assertion_failed_in_text_and_pictures(tmp_path: Path) -> None:
    log = write_log(tmp_path / "events.jsonl", week(raw_assertions=[("not_null", "email", False)]))
    base = ["--events", str(log), "failed-upstream", "--namespace", "warehouse"]
    code, out, _ = run([*base, "--name", "stg.contacts"])
    assert code == 4
    assert out.splitlines()[1:4] == [
        "  depth 2",
        "    DATASET warehouse / raw.contacts  (2 fields)",
        f"            failed assertion: not_null on email  (by {job_node('crm_extract')} at {LAST_EXTRACT})",
    ]
    _, mermaid, _ = run([*base, "--name", "stg.contacts", "--format", "mermaid"])
    assert '  n1[("warehouse / raw.contacts #183; assertion not_null on email failed")]' in mermaid
    assert "  class n1 assertionFailed" in mermaid
    code, _, _ = run([*base, "--name", "raw.contacts"])  # the target's own failed assertion counts too
    assert code == 4


def test_a_reader_who_may_not_read_the_checking_dag_is_not_told_its_results(tmp_path: Path) -> None:
    events = week() + check("gx_contacts", "raw.contacts", 7 * DAY + 30, [("unique", "id", False)])
    for item in events:
        dag = "quality" if item["job"]["name"] == "gx_contacts" else "staging"
        item["run"]["facets"]["airflow"] = facet(dag={"dag_id": dag}, task={"task_id": item["job"]["name"]})
    (tmp_path / "all").mkdir()
    assert [n["id"] for n in _failed_upstream(tmp_path / "all", events)["nodes"]] == [RAW]
    scoped = _failed_upstream(tmp_path, events, may_read_dag=lambda dag: dag == "staging")
    assert scoped["nodes"] == [] and "gx_contacts" not in str(scoped)


def test_hostile_assertion_facets_are_bounded_and_strings_stay_strings(tmp_path: Path) -> None:
    many = [(f"check_{i:04d}" + "x" * 300, None, False) for i in range(1000)]
    bad = assertions(many)
    bad["assertions"] += [{"assertion": 7, "success": False}, {"assertion": "a", "column": {"x": 1}}]
    events = week() + check("gx_contacts", "raw.contacts", 7 * DAY + 30, [])
    events[-1]["inputs"][0]["inputFacets"]["dataQualityAssertions"] = bad
    events += check("gx_other", "stg.contacts", 7 * DAY + 30, [])
    events[-1]["inputs"][0]["inputFacets"]["dataQualityAssertions"] = facet(assertions="not a list")
    answer = _failed_upstream(tmp_path, events)
    [raw] = answer["nodes"]
    named = raw["failedAssertions"]
    assert len(named) == MAX_NAMED and {len(n["assertion"]) for n in named} == {MAX_TEXT}
    assert named[0]["assertion"].startswith("check_0000") and "failedAssertions" not in answer["target"]


def test_what_changed_names_failed_assertions_and_reports_only_the_new_failure_as_a_change(
    tmp_path: Path,
) -> None:
    events = week(raw_assertions=[("not_null", "email", False)])  # the writer's: passed every day before
    events += check("gx_contacts", "stg.contacts", 6 * DAY + 30, [("unique", "id", False)])
    events += check("gx_contacts", "stg.contacts", 7 * DAY + 30, [("unique", "id", False)])  # failed again
    source = EventLogSource(write_log(tmp_path / "events.jsonl", events))
    try:
        answer = LineageQueries(source).what_changed(STG, now=w.to_micros(at(7 * DAY + 60)))
    finally:
        source.close()
    assert [
        (c["node"], c["kind"], c["column"], c["from"], c["to"], c["change"]) for c in answer["changes"]
    ] == [
        (RAW, "assertion", "email", "passed", "failed", "not_null")
    ]  # the assertion kind of issue 28: newly failed
    path = [RAW, job_node("stg_contacts"), STG]
    assert answer["failedAssertions"] == [
        {
            "node": STG,
            "assertion": "unique",
            "column": "id",
            "job": job_node("gx_contacts"),
            "at": at(7 * DAY + 31),
            "depth": 0,
            "path": [STG],
        },
        {
            "node": RAW,
            "assertion": "not_null",
            "column": "email",
            "job": job_node("crm_extract"),
            "at": LAST_EXTRACT,
            "depth": 2,
            "path": path,
        },
    ]
    assert render(answer).splitlines()[-2:] == [
        f"  [0] dataset warehouse:stg.contacts: its latest assertion unique on id failed "
        f"(by {job_node('gx_contacts')} at {at(7 * DAY + 31)})",
        f"  [2] dataset warehouse:raw.contacts: its latest assertion not_null on email failed "
        f"(by {job_node('crm_extract')} at {LAST_EXTRACT})",
    ]
    query = ["--events", str(tmp_path / "events.jsonl"), "what-changed", "--namespace"]
    query += ["warehouse", "--name", "stg.contacts", "--as-of", at(7 * DAY + 60), "--format", "mermaid"]
    mermaid = run(query)[1]
    assert '  n0[("warehouse / stg.contacts #183; assertion unique on id failed")]' in mermaid
    assert "  class n0 assertionFailed" in mermaid and "  class n2 changed" in mermaid  # raw: its change
