"""what-changed over built events: the rules per kind, the ranking, visibility, "cannot tell"."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from airflow_lineage_plus.graph import LineageQueries
from airflow_lineage_plus.graph.eventlog import EventLogSource
from airflow_lineage_plus.graph.what_changed import render
from airflow_lineage_plus.store import wire as w
from tests.support.graph_builders import DS_NS, JOB_NS, at, dataset_node, facet, job_node, write_log
from tests.support.store_engines import store_source_of
from tests.support.what_changed_events import DAY, output, run, week

pytestmark = pytest.mark.timeout(60)


def _ask(tmp_path: Path, events: list[dict[str, Any]], **kw: Any) -> dict[str, Any]:
    log = write_log(tmp_path / "events.jsonl", events)
    source = EventLogSource(log)
    try:
        now = w.to_micros(at(7 * DAY + 60))
        return LineageQueries(source).what_changed(dataset_node("stg.contacts"), now=now, **kw)
    finally:
        source.close()


def _kinds(answer: dict[str, Any]) -> list[tuple[str, str, str | None]]:
    return [(c["node"], c["kind"], c["column"]) for c in answer["changes"]]


def test_a_week_of_two_percent_noise_gives_no_change(tmp_path: Path) -> None:
    answer = _ask(tmp_path, week())
    assert answer["changes"] == []
    assert answer["cannotTell"] == []
    assert answer["baseline"] == {"runs": 7}
    assert render(answer).startswith("Nothing changed upstream of warehouse / stg.contacts")


def test_fewer_rows_at_the_source_rank_the_source_first_with_its_path(tmp_path: Path) -> None:
    answer = _ask(tmp_path, week(raw_rows=880))
    raw, stg = dataset_node("raw.contacts"), dataset_node("stg.contacts")
    assert _kinds(answer) == [
        (raw, "rowCount", None),
        (raw, "bytes", None),
        (stg, "rowCount", None),
        (stg, "bytes", None),
    ]
    top = answer["changes"][0]
    assert (top["from"], top["to"], top["change"], top["depth"]) == (1000, 880, -0.12, 2)
    assert top["path"] == [raw, job_node("stg_contacts"), stg]
    assert top["at"] == at(7 * DAY + 10)
    assert render(answer).splitlines()[0] == (
        f"Most likely cause for warehouse / stg.contacts: dataset {DS_NS}:raw.contacts: 880 rows "
        f"(usually 1000, -12 %), 2 hop(s) upstream (at {at(7 * DAY + 10)})."
    )


def test_a_changed_sql_comes_before_the_rows_it_changed(tmp_path: Path) -> None:
    answer = _ask(tmp_path, week(sql="SELECT * FROM raw.contacts WHERE active", rows=700))
    job, stg = job_node("stg_contacts"), dataset_node("stg.contacts")
    assert _kinds(answer) == [(job, "sql", None), (stg, "rowCount", None), (stg, "bytes", None)]
    assert answer["changes"][0]["change"] == "changed"
    assert answer["changes"][1]["change"] == -0.3


def test_a_failed_job_a_schema_change_nulls_and_a_slow_run_are_each_reported(tmp_path: Path) -> None:
    fields = [("id", "BIGINT"), ("email", "VARCHAR"), ("phone", "VARCHAR")]
    answer = _ask(tmp_path, week(nulls=400, fields=fields, minutes=60))
    job, stg = job_node("stg_contacts"), dataset_node("stg.contacts")
    assert _kinds(answer) == [
        (stg, "schema", "id"),
        (stg, "schema", "phone"),
        (stg, "nullRate", "email"),
        (job, "duration", None),
    ]
    assert [c["change"] for c in answer["changes"][:2]] == ["typeChanged", "added"]
    (tmp_path / "f").mkdir()
    failed = _ask(tmp_path / "f", week(state="FAIL"))
    assert _kinds(failed) == [(job, "state", None)]
    assert (failed["changes"][0]["from"], failed["changes"][0]["to"]) == ("COMPLETED", "FAILED")


def test_a_dataset_without_figures_cannot_tell(tmp_path: Path) -> None:
    events = week()
    for item in events:
        for written in item["outputs"]:
            if written["name"] == "raw.contacts":
                written["facets"] = {}
                written["outputFacets"] = {}
    answer = _ask(tmp_path, events)
    assert answer["changes"] == []
    assert answer["cannotTell"] == [
        {
            "node": dataset_node("raw.contacts"),
            "reason": "its latest run recorded no figures",
            "depth": 2,
            "path": [dataset_node("raw.contacts"), job_node("stg_contacts"), dataset_node("stg.contacts")],
        }
    ]
    assert "cannot tell dataset" in render(answer)


def test_the_store_gives_the_same_answer_as_a_full_load(tmp_path: Path) -> None:
    log = write_log(tmp_path / "events.jsonl", week(raw_rows=880))
    now = w.to_micros(at(7 * DAY + 60))
    target = dataset_node("stg.contacts")
    full = EventLogSource(log)
    stored = store_source_of(log)
    try:
        assert LineageQueries(stored).what_changed(target, now=now) == LineageQueries(full).what_changed(
            target, now=now
        )
    finally:
        full.close()
        stored.close()


def test_as_of_before_the_change_day_sees_no_change(tmp_path: Path) -> None:
    log = write_log(tmp_path / "events.jsonl", week(raw_rows=880))
    source = EventLogSource(log)
    try:
        answer = LineageQueries(source).what_changed(
            dataset_node("stg.contacts"), as_of=w.to_micros(at(6 * DAY + 60))
        )
    finally:
        source.close()
    assert answer["changes"] == []
    assert answer["asOf"] == at(6 * DAY + 60)


def test_a_reader_who_may_not_read_the_source_job_is_not_told_of_its_changes(tmp_path: Path) -> None:
    events = week(raw_rows=880)
    for item in events:
        dag = "crm" if item["job"]["name"] == "crm_extract" else "staging"
        item["run"]["facets"]["airflow"] = facet(dag={"dag_id": dag}, task={"task_id": item["job"]["name"]})
    answer = _ask(tmp_path, events)
    assert {c["node"] for c in answer["changes"]} == {
        dataset_node("raw.contacts"),
        dataset_node("stg.contacts"),
    }
    log = tmp_path / "events.jsonl"
    source = EventLogSource(log)
    try:
        scoped = LineageQueries(source, may_read_dag=lambda dag: dag == "staging").what_changed(
            dataset_node("stg.contacts"), now=w.to_micros(at(7 * DAY + 60))
        )
    finally:
        source.close()
    named = {c["node"] for c in scoped["changes"]} | {c["node"] for c in scoped["cannotTell"]}
    assert JOB_NS and job_node("crm_extract") not in named
    assert all("crm_extract" not in str(c["path"]) for c in scoped["changes"])
    assert scoped["cannotTell"][0]["node"] == dataset_node("raw.contacts")
    assert [c["node"] for c in scoped["changes"]] == [dataset_node("stg.contacts")] * 2


def test_a_reader_is_not_held_to_the_freshness_target_of_a_writer_they_may_not_see(tmp_path: Path) -> None:
    # stg.contacts is written daily by stg_contacts (DAG staging) and once by audit_copy (DAG audit), whose
    # freshness target is one minute; asked an hour after its last write
    slo = {"lineagePlus_sloTier": facet(tier="gold", freshnessMinutes=1)}
    copy = output("stg.contacts", 1000, 10, [("id", "INT"), ("email", "VARCHAR")])
    events = [*week(), *run("audit_copy", 0, [copy], job_facets=slo)]
    for item in events:
        dag = {"crm_extract": "crm", "audit_copy": "audit"}.get(item["job"]["name"], "staging")
        item["run"]["facets"]["airflow"] = facet(dag={"dag_id": dag}, task={"task_id": item["job"]["name"]})
    log = write_log(tmp_path / "events.jsonl", events)
    stg, now = dataset_node("stg.contacts"), w.to_micros(at(7 * DAY + 75))
    source = EventLogSource(log)
    try:
        every = LineageQueries(source).what_changed(stg, now=now)
        staging = LineageQueries(source, may_read_dag=lambda dag: dag == "staging").what_changed(stg, now=now)
    finally:
        source.close()
    assert [(c["node"], c["kind"], c["from"]) for c in every["changes"]] == [(stg, "freshnessSlo", 60)]
    assert staging["changes"] == []  # audit_copy's target is not the staging reader's: nothing is said of it


def test_max_nodes_compares_only_the_nearest_nodes_and_says_how_many_were_left_out(tmp_path: Path) -> None:
    raw, stg, job = dataset_node("raw.contacts"), dataset_node("stg.contacts"), job_node("stg_contacts")
    events = week(raw_rows=880)
    answer = _ask(tmp_path, events, max_nodes=2)  # stg.contacts (depth 0) and its job (1)
    assert _kinds(answer) == [(stg, "rowCount", None), (stg, "bytes", None)]
    assert answer["notCompared"] == {"nodes": 2, "maxNodes": 2, "fromDepth": 2}
    assert answer["changes"][0]["path"] == [stg]
    assert render(answer).splitlines()[2] == (
        "  2 farther node(s), from depth 2 on, were not compared ([lineage_plus] what_changed_max_nodes = 2)"
        ": nothing is said of them"
    )
    (tmp_path / "all").mkdir()
    every = _ask(tmp_path / "all", events, max_nodes=4)  # the walk has 4 nodes: nothing left out
    assert "notCompared" not in every
    assert _kinds(every)[0] == (raw, "rowCount", None)
    assert every["changes"][0]["path"] == [raw, job, stg]


def test_a_cut_walk_with_no_change_does_not_claim_nothing_changed(tmp_path: Path) -> None:
    answer = _ask(tmp_path, week(), max_nodes=1)
    assert (answer["changes"], answer["cannotTell"]) == ([], [])
    assert answer["notCompared"] == {"nodes": 3, "maxNodes": 1, "fromDepth": 1}
    first = render(answer).splitlines()[0]
    assert (
        first
        == "No change found in the 1 nodes nearest warehouse / stg.contacts; farther ones were not compared."
    )
    (tmp_path / "none").mkdir()
    with pytest.raises(ValueError, match="max_nodes"):
        _ask(tmp_path / "none", week(), max_nodes=0)
