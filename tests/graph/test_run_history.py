"""Run histories read back from the events: a source read by many jobs costs only its last readers, and
what is read once is kept until the log changes."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from airflow_lineage_plus.graph import run_history
from airflow_lineage_plus.graph.eventlog import EventLogSource
from airflow_lineage_plus.graph.history import DatasetRun
from airflow_lineage_plus.graph.store_source import StoreSource
from airflow_lineage_plus.graph.stored_graph import StoredGraph
from airflow_lineage_plus.store import LineageStore, adjacent, folded
from airflow_lineage_plus.store import wire as w
from tests.support.graph_builders import DS_NS, at, dataset_node, event, facet, job_node, write_log
from tests.support.store_engines import ENGINES, new_store_url, store_source_of

pytestmark = pytest.mark.timeout(60)
DAY = 24 * 60
CALENDAR = dataset_node("calendar")
#: calendar's 3 newest reads in :func:`_readers`
NEWEST_READS = [(job_node("reader_0"), 500), (job_node("reader_19"), 419), (job_node("reader_18"), 418)]


def _read(job: str, label: str, minute: float, rows: int) -> list[dict[str, Any]]:
    source = {
        "namespace": DS_NS,
        "name": "calendar",
        "inputFacets": {"dataQualityMetrics": facet(rowCount=rows)},
    }
    return [event("START", job, label, minute), event("COMPLETE", job, label, minute + 5, inputs=[source])]


def _readers() -> list[dict[str, Any]]:
    """calendar, written by no job, read by reader_0 .. reader_19 daily (day 0-4, reader_k at k x 10 min),
    and once more by reader_0 on day 5: the newest reads are reader_0's last, reader_19's, reader_18's."""
    events = []
    for day in range(5):
        for k in range(20):
            events += _read(f"reader_{k}", f"r{k}-{day}", day * DAY + 10 * k, 100 * day + k)
    return events + _read("reader_0", "r0-5", 5 * DAY, 500)


def _by_index(monkeypatch: pytest.MonkeyPatch) -> list[bool]:
    """Make the store find the jobs next to a dataset with more than 3 of them by the index of the
    latest events (``FoldedState.newest_adjacent``), the newest 3 per job asked for; for each time it
    tried, whether the index answered (False: the newest events held too few, all were read)."""
    monkeypatch.setattr(adjacent, "READ_WHOLE", 3)
    monkeypatch.setattr(adjacent, "SCAN", 3)
    answered: list[bool] = []
    newest = folded.FoldedState._newest

    def counted(state: folded.FoldedState, *args: Any) -> dict[str, int | None] | None:
        found = newest(state, *args)
        answered.append(found is not None)
        return found

    monkeypatch.setattr(folded.FoldedState, "_newest", counted)
    return answered


def _rows(runs: tuple[Any, ...]) -> list[tuple[str, int | None]]:
    return [(r.job_id, r.rows) for r in runs if isinstance(r, DatasetRun)]


@pytest.mark.parametrize(
    ("stored", "by_index"), [(False, False), (True, False), (True, True)], ids=["full load", "store", "index"]
)
def test_a_source_read_by_many_jobs_reads_only_its_last_readers(
    tmp_path: Path, stored: bool, by_index: bool, monkeypatch: pytest.MonkeyPatch
) -> None:
    log = write_log(tmp_path / "events.jsonl", _readers())
    source = store_source_of(log) if stored else EventLogSource(log)
    answered = _by_index(monkeypatch) if by_index else []
    try:
        history = source.run_history([CALENDAR], 3)[CALENDAR]
        assert _rows(history.runs) == NEWEST_READS
        graph = StoredGraph(source.store, keep_refs=True)
        reader = run_history.RunReader(source._read_refs)
        assert run_history.run_history(graph, [CALENDAR], 3, reader) == {CALENDAR: history}
        # the 3 newest candidates (as many as runs asked for) are read at once; none of the 17 older ones
        readers = {job for job in graph._jobs_read if "reader_" in job}
        assert readers == {job_node(f"reader_{k}") for k in (0, 19, 18)}
        # by the index, once in each of the two graphs: the readers that ran last, every one the scan
        # vouches for (is a 4th as late as the 3rd newest read? asks no second scan; the as-of question
        # folds its own graph, asking no index)
        assert answered == ([True] * 2 if by_index else [])
        then = source.run_history([CALENDAR], 3, as_of=w.to_micros(at(3 * DAY + 200)))[CALENDAR]
        assert _rows(then.runs) == [(job_node(f"reader_{k}"), 300 + k) for k in (19, 18, 17)]
    finally:
        source.close()


@pytest.mark.parametrize("stored", [False, True], ids=["full load", "store"])
def test_a_readers_older_run_that_ended_after_the_newest_reads_found_is_counted(
    tmp_path: Path, stored: bool
) -> None:
    """reader_7 also ran from day 3 (after its day-3 run started) to day 4 at 190 min, after every day-4
    read but reader_19's: it is read although the run it started last (day 4, 70 min) is older."""
    long_run = _read("reader_7", "r7-long", 3 * DAY + 100, 777)
    long_run[1]["eventTime"] = at(4 * DAY + 190)
    log = write_log(tmp_path / "events.jsonl", [*_readers(), *long_run])
    source = store_source_of(log) if stored else EventLogSource(log)
    try:
        history = source.run_history([CALENDAR], 3)[CALENDAR]
        assert _rows(history.runs) == [
            (job_node("reader_0"), 500),
            (job_node("reader_19"), 419),
            (job_node("reader_7"), 777),
        ]
    finally:
        source.close()


def test_whether_a_batch_of_readers_has_older_runs_that_count_is_one_query(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    asked: list[str] = []
    for name in ("ended_since", "ended_runs"):
        probe = getattr(folded.FoldedState, name)
        monkeypatch.setattr(
            folded.FoldedState,
            name,
            lambda state, *args, _probe=probe, _name=name: asked.append(_name) or _probe(state, *args),
        )
    source = store_source_of(write_log(tmp_path / "events.jsonl", _readers()))
    try:
        history = source.run_history([CALENDAR], 3)[CALENDAR]
        assert _rows(history.runs) == NEWEST_READS
        # the first 3 readers' newest reads are the newest 3: one query says none has an older one that
        # counts, and no reader is asked alone
        assert asked == ["ended_runs"]
    finally:
        source.close()


def test_a_datasets_history_holds_its_own_count_of_runs_and_a_jobs_the_runs_asked_for(
    tmp_path: Path,
) -> None:
    source = store_source_of(write_log(tmp_path / "events.jsonl", _readers()))
    try:
        found = source.run_history([CALENDAR, job_node("reader_19")], 3, dataset_runs=2)
        assert _rows(found[CALENDAR].runs) == [(job_node("reader_0"), 500), (job_node("reader_19"), 419)]
        assert [run.run_id for run in found[job_node("reader_19")].runs] == [
            run.run_id for run in source.run_history([job_node("reader_19")], 3)[job_node("reader_19")].runs
        ]
        assert len(found[job_node("reader_19")].runs) == 3
    finally:
        source.close()


def test_what_was_read_is_kept_until_the_log_grows(tmp_path: Path) -> None:
    log = write_log(tmp_path / "events.jsonl", _readers())
    source = EventLogSource(log)
    try:
        first = source.run_history([CALENDAR, job_node("reader_19")], 3)
        reader = source._runs
        read = reader.events_read
        # 2 events a run: the newest read of each of the first 3 readers (reader_0's day 5, reader_19's and
        # reader_18's day 4), which are the 3 newest, so no other run of theirs is read for calendar;
        # reader_19's own history adds its days 3 and 2
        assert read == 2 * (3 + 2)
        assert source.run_history([CALENDAR, job_node("reader_19")], 3) == first
        assert reader.events_read == read  # nothing read again
        with open(log, "a") as handle:
            extra = _read("reader_3", "r3-6", 6 * DAY, 603)
            handle.write("".join(json.dumps(e) + "\n" for e in extra))
        source.refresh()
        latest = source.run_history([CALENDAR], 3)[CALENDAR]
        assert _rows(latest.runs)[0] == (job_node("reader_3"), 603)
    finally:
        source.close()


def _checks() -> list[dict[str, Any]]:
    """calendar read by checks.check_0 .. check_59 (check_k runs at minute 10 k, for 5 minutes, asserting
    ``k % 3 != 0``) and by checks.check_long, which started first (minute 0) and ended last (minute 1000);
    the DAG run of minute 700 says check_3 did not run (a skipped run of it starting then, its latest)."""

    def checked(job: str, label: str, start: float, end: float, success: bool) -> list[dict[str, Any]]:
        source = {
            "namespace": DS_NS,
            "name": "calendar",
            "inputFacets": {
                "dataQualityAssertions": facet(assertions=[{"assertion": "not_null", "success": success}])
            },
        }
        return [event("START", job, label, start), event("COMPLETE", job, label, end, inputs=[source])]

    events = checked("checks.check_long", "long", 0, 1000, True)
    for k in range(60):
        events += checked(f"checks.check_{k}", f"c{k}", 10 * k, 10 * k + 5, k % 3 != 0)
    skipped = {"airflowState": facet(dagRunState="success", tasksState={"check_3": "skipped"})}
    events.append(event("START", "checks", "dag-700", 700))
    events.append(event("COMPLETE", "checks", "dag-700", 701, run_facets=skipped))
    return events


@pytest.mark.parametrize(
    ("engine", "by_index"),
    [(None, False), *((e, False) for e in ENGINES), *((e, True) for e in ENGINES)],
    ids=["full load", *ENGINES, *(f"{e}, index" for e in ENGINES)],
)
def test_latest_assertions_of_a_source_read_by_many_jobs_read_only_the_jobs_that_can_have_run_last(
    tmp_path: Path,
    engine: str | None,
    by_index: bool,
    request: pytest.FixtureRequest,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    log = write_log(tmp_path / "events.jsonl", _checks())
    answered = _by_index(monkeypatch) if by_index else []
    stored = engine is not None
    source: EventLogSource | StoreSource = EventLogSource(log)
    if engine is not None:
        store = LineageStore(new_store_url(engine, tmp_path, request))
        store.append([line for line in log.read_bytes().splitlines() if line.strip()])
        source = StoreSource(store, owns_store=True)
    try:
        found = source.latest_assertions([CALENDAR])[CALENDAR]
        # the 10 jobs whose latest run started last (MAX_JOBS): check_3, skipped at minute 700 (its latest
        # run did not run: no assertions of it), then check_59 .. check_51, newest end first; check_long,
        # the last to end, started first
        assert [(a.job_id, a.assertions) for a in found] == [
            (job_node(f"checks.check_{k}"), (("not_null", None, k % 3 != 0),)) for k in range(59, 50, -1)
        ]
        if not stored:
            return
        graph = StoredGraph(source.store, keep_refs=True)
        assert run_history.latest_assertions(graph, [CALENDAR], source._read_refs) == {CALENDAR: found}
        # by the latest event or skip record: check_long, check_3 (701) and check_59 .. check_52 first (10),
        # then 20 more (check_51 .. check_32); check_50's latest event (minute 505) is before check_51's
        # start: no job left can count
        checks = {job for job in graph._jobs_read if "check_" in job}
        assert checks == {job_node(f"checks.check_{k}") for k in (3, *range(32, 60))} | {
            job_node("checks.check_long")
        }
        # by the index: check_3 comes from its skip record (its latest event, minute 35, is not among the
        # newest); asked for 10, then 30 (the next batch), in each of the two graphs
        assert answered == ([True, True, True, True] if by_index else [])
    finally:
        source.close()
