"""what-changed over built events: the rules per kind, the ranking, visibility, "cannot tell"."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from graph_builders import DS_NS, JOB_NS, at, dataset_node, event, facet, job_node, write_log

from airflow_lineage_plus.graph import LineageQueries
from airflow_lineage_plus.graph import wire as w
from airflow_lineage_plus.graph.eventlog import EventLogSource
from airflow_lineage_plus.graph.index import IndexedEventLog
from airflow_lineage_plus.graph.what_changed import render

pytestmark = pytest.mark.timeout(60)
DAY = 24 * 60
NOISE = (1.0, 0.98, 1.01, 0.99, 1.0, 0.98, 1.01, 1.02)  # ±2 % from run to run, the last day +2 %


def _output(name: str, rows: int | None, nulls: int | None, fields: list[tuple[str, str]]) -> dict[str, Any]:
    facets: dict[str, Any] = {"schema": facet(fields=[{"name": n, "type": t} for n, t in fields])}
    output_facets: dict[str, Any] = {}
    if rows is not None:
        facets["dataQualityMetrics"] = facet(
            rowCount=rows, bytes=rows * 100, columnMetrics={"email": {"nullCount": nulls or 0}}
        )
        output_facets["outputStatistics"] = facet(rowCount=rows, size=rows * 100)
    return {"namespace": DS_NS, "name": name, "facets": facets, "outputFacets": output_facets}


def _run(
    job: str,
    day: int,
    outputs: list[dict[str, Any]],
    *,
    state: str = "COMPLETE",
    minutes: float = 10,
    **kw: Any,
) -> list[dict[str, Any]]:
    label = f"{job}-{day}"
    start = day * DAY + (5 if job == "stg_contacts" else 0)
    return [
        event("START", job, label, start, **kw),
        event(state, job, label, start + minutes, outputs=outputs, **kw),
    ]


def _week(days: int = 8, **last: Any) -> list[dict[str, Any]]:
    """CRM extract -> raw.contacts -> stg_contacts (SQL) -> stg.contacts, ``days`` days of ±2 % noise;
    ``last`` changes the last day: rows, nulls, sql, fields, state, minutes, raw_rows."""
    events = []
    fields = [("id", "INT"), ("email", "VARCHAR")]
    for day in range(days):
        final = day == days - 1
        rows = int(1000 * NOISE[day % len(NOISE)])
        raw_rows = last.get("raw_rows", rows) if final else rows
        events += _run("crm_extract", day, [_output("raw.contacts", raw_rows, 10, fields)])
        stg_rows = last.get("rows", raw_rows) if final else rows
        sql = last.get("sql", "SELECT * FROM raw.contacts") if final else "SELECT * FROM raw.contacts"
        out_fields = last.get("fields", fields) if final else fields
        nulls = last.get("nulls", 10) if final else 10
        events += _run(
            "stg_contacts",
            day,
            [_output("stg.contacts", stg_rows, nulls, out_fields)],
            state=last.get("state", "COMPLETE") if final else "COMPLETE",
            minutes=last.get("minutes", 10 + day % 2) if final else 10 + day % 2,
            inputs=[{"namespace": DS_NS, "name": "raw.contacts"}],
            job_facets={"sql": facet(query=sql)},
        )
    return events


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
    answer = _ask(tmp_path, _week())
    assert answer["changes"] == []
    assert answer["cannotTell"] == []
    assert answer["baseline"] == {"runs": 7}
    assert render(answer).startswith("Nothing changed upstream of warehouse / stg.contacts")


def test_fewer_rows_at_the_source_rank_the_source_first_with_its_path(tmp_path: Path) -> None:
    answer = _ask(tmp_path, _week(raw_rows=880))
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
    answer = _ask(tmp_path, _week(sql="SELECT * FROM raw.contacts WHERE active", rows=700))
    job, stg = job_node("stg_contacts"), dataset_node("stg.contacts")
    assert _kinds(answer) == [(job, "sql", None), (stg, "rowCount", None), (stg, "bytes", None)]
    assert answer["changes"][0]["change"] == "changed"
    assert answer["changes"][1]["change"] == -0.3


def test_a_failed_job_a_schema_change_nulls_and_a_slow_run_are_each_reported(tmp_path: Path) -> None:
    fields = [("id", "BIGINT"), ("email", "VARCHAR"), ("phone", "VARCHAR")]
    answer = _ask(tmp_path, _week(nulls=400, fields=fields, minutes=60))
    job, stg = job_node("stg_contacts"), dataset_node("stg.contacts")
    assert _kinds(answer) == [
        (stg, "schema", "id"),
        (stg, "schema", "phone"),
        (stg, "nullRate", "email"),
        (job, "duration", None),
    ]
    assert [c["change"] for c in answer["changes"][:2]] == ["typeChanged", "added"]
    (tmp_path / "f").mkdir()
    failed = _ask(tmp_path / "f", _week(state="FAIL"))
    assert _kinds(failed) == [(job, "state", None)]
    assert (failed["changes"][0]["from"], failed["changes"][0]["to"]) == ("COMPLETED", "FAILED")


def test_a_dataset_without_figures_cannot_tell(tmp_path: Path) -> None:
    events = _week()
    for item in events:
        for output in item["outputs"]:
            if output["name"] == "raw.contacts":
                output["facets"] = {}
                output["outputFacets"] = {}
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


def test_the_index_gives_the_same_answer_as_a_full_load(tmp_path: Path) -> None:
    log = write_log(tmp_path / "events.jsonl", _week(raw_rows=880))
    now = w.to_micros(at(7 * DAY + 60))
    target = dataset_node("stg.contacts")
    full = EventLogSource(log)
    indexed = IndexedEventLog(log, build="here")
    try:
        assert LineageQueries(indexed).what_changed(target, now=now) == LineageQueries(full).what_changed(
            target, now=now
        )
    finally:
        full.close()
        indexed.close()


def test_as_of_before_the_change_day_sees_no_change(tmp_path: Path) -> None:
    log = write_log(tmp_path / "events.jsonl", _week(raw_rows=880))
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
    events = _week(raw_rows=880)
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
