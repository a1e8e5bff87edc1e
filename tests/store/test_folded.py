"""Reading the folded state: the jobs next to a dataset that ran last, by the index of the latest events;
whether a job's older runs ended late, without reading them."""

from __future__ import annotations

from typing import Any

import orjson
import pytest

from airflow_lineage_plus.store import LineageStore, adjacent, folded
from airflow_lineage_plus.store import wire as w
from airflow_lineage_plus.store.facts import key_of
from tests.support.graph_builders import (
    DS_NS,
    RUN_FACET,
    at,
    dataset_node,
    error_message,
    event,
    facet,
    job_node,
    run_id,
)

pytestmark = pytest.mark.timeout(120)
CALENDAR = dataset_node("calendar")


def _events() -> list[dict[str, Any]]:
    """calendar, written by d.writer (minute 10), read by d.r0, d.r1 and d.r2 (minute 100), d.r3 (50),
    d.r4 (40) and d.r5 (30), which a run of DAG d says at minute 200 did not run."""
    calendar = {"namespace": DS_NS, "name": "calendar"}
    events = [event("COMPLETE", "d.writer", "w", 10, outputs=[calendar])]
    for name, minute in (("r0", 100), ("r1", 100), ("r2", 100), ("r3", 50), ("r4", 40), ("r5", 30)):
        events.append(event("COMPLETE", f"d.{name}", name, minute, inputs=[calendar]))
    skipped = {"airflowState": facet(dagRunState="success", tasksState={"r5": "skipped"})}
    events.append(event("COMPLETE", "d", "dag-run", 200, run_facets=skipped))
    return events


def _times(**minutes: float) -> dict[str, int | None]:
    return {job_node(f"d.{name}"): w.to_micros(at(minute)) for name, minute in minutes.items()}


@pytest.fixture
def state(store_url: str, monkeypatch: pytest.MonkeyPatch) -> Any:
    """The folded state of :func:`_events`, asking the index for a dataset with more than 3 jobs."""
    monkeypatch.setattr(adjacent, "READ_WHOLE", 3)
    store = LineageStore(store_url)
    store.append([orjson.dumps(e) for e in _events()])
    yield folded.FoldedState(store)
    store.close()


def test_the_index_gives_every_reader_the_scan_vouches_for_and_those_a_later_skip_record_names(
    state: folded.FoldedState, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(adjacent, "SCAN", 3)  # the 6 newest latest events (of jobs): d, r0 .. r4
    # 2 asked for (minute 100), but every reader later than r4 (40, the oldest found: one as old may be
    # past the scan) is in the scan: r3 (50) too; d.r5's latest event (30) is not among the newest, its
    # skip record (200) is
    found = state.newest_adjacent([CALENDAR], [0], 2)
    assert found == {CALENDAR: (_times(r0=100, r1=100, r2=100, r3=50, r5=200), False)}


def test_readers_as_late_as_the_last_one_asked_for_are_never_cut_off_by_the_scan(
    state: folded.FoldedState, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(adjacent, "SCAN", 1)  # the 3 newest latest events (of jobs): d, two of minute 100
    # the scan ends among readers of minute 100: it cannot tell which others are as late, so all are read
    found = state.newest_adjacent([CALENDAR], [0], 1)
    assert found == {CALENDAR: (_times(r0=100, r1=100, r2=100, r3=50, r4=40, r5=200), True)}


def test_whether_a_job_has_an_older_run_that_ended_late_is_asked_without_reading_its_runs(
    store_url: str,
) -> None:
    """d.long starts at minute 10 and ends at 100; d.short at 20-25 and 30-35."""
    store = LineageStore(store_url)
    try:
        events = [event("START", "d.job", "long", 10), event("COMPLETE", "d.job", "long", 100)]
        for label, minute in (("first", 20), ("second", 30)):
            events += [event("START", "d.job", label, minute), event("COMPLETE", "d.job", label, minute + 5)]
        store.append([orjson.dumps(e) for e in events])
        state, key = folded.FoldedState(store), key_of(job_node("d.job"))
        minute = lambda m: w.to_micros(at(m))  # noqa: E731
        # started before the runs of minute 20 on: the long one, ended at 100
        assert state.ended_since(key, minute(20), minute(100)) is True
        assert state.ended_since(key, minute(20), minute(101)) is False
        # started before 30: the long one and the first short one (25)
        assert state.ended_since(key, minute(30), minute(25)) is True
        # none started before 10
        assert state.ended_since(key, minute(10), minute(0)) is False
        # of many jobs at once: each run that ended at 30 or later, with its start
        assert sorted(state.ended_runs([key], minute(30))) == [(key, minute(10)), (key, minute(30))]
    finally:
        store.close()


def test_a_run_with_several_facts_is_one_run_holding_them_all(store_url: str) -> None:
    store = LineageStore(store_url)
    try:
        facets = {
            **error_message("boom"),
            "lineagePlus_executionMode": facet(RUN_FACET, mode="cached"),
        }
        events = [
            event("START", "d.job", "both", 10),
            event("FAIL", "d.job", "both", 11, run_facets=facets),
            event("START", "d.job", "none", 20),
            event("COMPLETE", "d.job", "none", 21),
        ]
        store.append([orjson.dumps(e) for e in events])
        state = folded.FoldedState(store)
        runs, partial = state.newest_job_runs([key_of(job_node("d.job"))], 5)
        assert partial == {}
        assert [(run.row.run_id, sorted(run.facts)) for run in runs] == [
            (run_id("both"), ["error", "mode"]),
            (run_id("none"), []),
        ]
        assert [sorted(run.facts) for run in state.runs([run_id("both")])] == [["error", "mode"]]
    finally:
        store.close()


def test_a_dataset_with_few_jobs_next_to_it_has_them_read_whole_on_the_sides_asked_for(
    state: folded.FoldedState,
) -> None:
    found = state.newest_adjacent([CALENDAR, dataset_node("nothing")], [1], 1)
    assert found == {CALENDAR: (_times(writer=10), True), dataset_node("nothing"): ({}, True)}
