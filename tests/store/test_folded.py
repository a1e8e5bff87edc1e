"""Reading the folded state: the jobs next to a dataset that ran last, by the index of the latest events."""

from __future__ import annotations

from typing import Any

import orjson
import pytest

from airflow_lineage_plus.store import LineageStore, adjacent, folded
from airflow_lineage_plus.store import wire as w
from tests.support.graph_builders import DS_NS, at, dataset_node, event, facet, job_node

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


def test_a_dataset_with_few_jobs_next_to_it_has_them_read_whole_on_the_sides_asked_for(
    state: folded.FoldedState,
) -> None:
    found = state.newest_adjacent([CALENDAR, dataset_node("nothing")], [1], 1)
    assert found == {CALENDAR: (_times(writer=10), True), dataset_node("nothing"): ({}, True)}
