"""Time travel and retired edges, through every way the event log is read.

Properties (hypothesis): a shuffled and repeated stream gives the same answers as the ordered one, whether
the log is read whole, by the quick scan, from the lineage store, or read in part with the rest appended
after it and refreshed; and an answer as of a time equals the answer from the log cut at that time (only
the events up to it), from the log and from the store.
"""

from __future__ import annotations

import contextlib
import json
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from airflow_lineage_plus.exceptions import NodeNotFound
from airflow_lineage_plus.graph import LineageQueries
from airflow_lineage_plus.graph.eventlog import EventLogSource
from airflow_lineage_plus.graph.focus import FocusedGraph
from airflow_lineage_plus.graph.scan import QuickSource
from airflow_lineage_plus.store import wire as w
from tests.support.graph_builders import (
    at,
    dataset_node,
    ds,
    job_event,
    job_node,
    retirement_events,
    run_pair,
    tie_events,
    varied_events,
    write_log,
)
from tests.support.store_engines import store_source_of

BASE = varied_events() + tie_events() + retirement_events()
TIMES = sorted({w.to_micros(e["eventTime"]) for e in BASE})
# fx_rates and plan: declared edges of orders.planned (never run), fx_rates only by its first declaration
DATASETS = [
    "report_table",
    "loaded",
    "orders_report",
    "stg_orders",
    "raw_orders",
    "tie_ds",
    "src_a",
    "fx_rates",
    "plan",
]
JOBS = ["etl.load", "etl.report", "orders.build_fct", "orders.report", "orders.x", "orders", "orders.planned"]


def _ask(queries: LineageQueries, as_of: int | None = None, *, quick: bool = False) -> dict[str, Any]:
    """Every question of every node (NodeNotFound as an answer too), ``asOf`` left out."""
    answers: dict[str, Any] = {}

    def put(key: str, question: Callable[..., dict[str, Any]], *args: Any, **options: Any) -> None:
        try:
            answer = question(*args, as_of=as_of, **options)
        except NodeNotFound:
            answer = {"missing": True}
        answer.pop("asOf", None)
        answers[key] = answer

    for name in DATASETS:
        node = dataset_node(name)
        for retired in (False, True):
            put(f"up {name} {retired}", queries.upstream, node, 10, include_retired=retired)
            put(f"down {name} {retired}", queries.downstream, node, 10, include_retired=retired)
            put(f"lin {name} {retired}", queries.lineage, node, 4, 6, include_retired=retired)
        put(f"failed {name}", queries.failed_upstream, node, 10)
        put(f"impact {name}", queries.impact, node, 10)
        put(f"schema {name}", queries.schema_diff, node)
        if not quick:  # the quick scan does not know the readers of a column (docs/graph.md)
            put(f"columns {name}", queries.columns, node, "v" if "report" in name else "id", 10)
    for name in JOBS:
        node = job_node(name)
        put(f"up {name}", queries.upstream, node, 10, include_retired=True)
        put(f"down {name}", queries.downstream, node, 10)
    return answers


def _log(directory: Path, events: list[dict[str, Any]]) -> Path:
    return write_log(directory / "events.jsonl", events)


REFERENCE = None


def _reference() -> dict[str, Any]:
    global REFERENCE
    if REFERENCE is None:
        with tempfile.TemporaryDirectory() as tmp:
            REFERENCE = _ask(LineageQueries(EventLogSource(_log(Path(tmp), BASE))))
    return REFERENCE


def test_retired_edges_are_left_out_unless_asked_for_and_marked() -> None:
    answers = _reference()
    current = answers["up loaded False"]
    assert {e["origin"] for e in current["edges"]} == {
        job_node("etl.load"),
        dataset_node("src_b"),
        dataset_node("src_c"),
    }
    everything = answers["up loaded True"]
    assert {
        "origin": dataset_node("src_a"),
        "destination": job_node("etl.load"),
        "state": "retired",
    } in everything["edges"]
    assert {e["state"] for e in current["edges"]} == {"current"}
    # reported by a failed run newer than the latest completed one: current, not retired
    report = answers["up report_table False"]
    assert {
        "origin": dataset_node("extra"),
        "destination": job_node("etl.report"),
        "state": "current",
    } in report["edges"]
    assert answers["down src_a False"]["nodes"] == [] and answers["down src_a True"]["nodes"]


def test_an_answer_as_of_a_time_says_what_was_known_then(tmp_path: Path) -> None:
    queries = LineageQueries(EventLogSource(_log(tmp_path, BASE)))
    before_switch = w.to_micros(at(55))
    answer = queries.upstream(dataset_node("loaded"), 10, as_of=before_switch)
    assert answer["asOf"] == at(55) and answer["exact"] is True
    assert {e["origin"] for e in answer["edges"]} == {job_node("etl.load"), dataset_node("src_a")}
    with pytest.raises(NodeNotFound):
        queries.upstream(dataset_node("src_c"), 10, as_of=before_switch)
    report = queries.upstream(job_node("etl.report"), 1, as_of=w.to_micros(at(52.5)))
    assert report["target"]["latestRun"]["state"] == "RUNNING"  # it completed at 53


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    order=st.permutations(range(len(BASE))),
    repeats=st.lists(st.integers(min_value=0, max_value=len(BASE) - 1), max_size=8),
    read_share=st.floats(min_value=0.0, max_value=1.0),
)
def test_shuffled_and_repeated_streams_give_the_same_answers_however_the_log_is_read(
    order: list[int], repeats: list[int], read_share: float
) -> None:
    events = [BASE[i] for i in order] + [BASE[i] for i in repeats]
    expected = _reference()
    with tempfile.TemporaryDirectory() as tmp:
        directory = Path(tmp)
        log = _log(directory, events)
        assert _ask(LineageQueries(EventLogSource(log))) == expected
        assert _ask(LineageQueries(QuickSource(log)), quick=True) == {
            k: v for k, v in expected.items() if not k.startswith("columns")
        }
        with contextlib.closing(store_source_of(log)) as stored:
            assert _ask(LineageQueries(stored)) == expected
        cut = int(len(events) * read_share)  # read up to here; the rest appended after and refreshed
        _log(directory, events[:cut])
        source = EventLogSource(log)
        with open(log, "a") as handle:
            handle.write("".join(json.dumps(e) + "\n" for e in events[cut:]))
        assert source.refresh() == len(events) - cut
        assert _ask(LineageQueries(source)) == expected


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    moment=st.sampled_from(TIMES),
    shift=st.sampled_from([-1, 0, 1]),
    order=st.permutations(range(len(BASE))),
)
def test_an_answer_as_of_a_time_equals_the_answer_of_the_log_cut_at_that_time(
    moment: int, shift: int, order: list[int]
) -> None:
    as_of = moment + shift
    events = [BASE[i] for i in order]
    with tempfile.TemporaryDirectory() as tmp:
        directory = Path(tmp)
        cut = [e for e in events if w.to_micros(e["eventTime"]) <= as_of]
        expected = _ask(LineageQueries(EventLogSource(write_log(directory / "cut.jsonl", cut))))
        log = _log(directory, events)
        assert _ask(LineageQueries(EventLogSource(log)), as_of) == expected
        with contextlib.closing(store_source_of(log)) as stored:
            assert _ask(LineageQueries(stored), as_of) == expected


def test_a_dataset_as_of_a_time_is_folded_from_the_events_that_name_it_not_from_its_readers_whole(
    tmp_path: Path,
) -> None:
    source_v1 = ds("shared_src", fields=[("id", "int")])
    source_v2 = ds("shared_src", fields=[("id", "int"), ("v", "text")])
    events = [job_event("planner", 5, inputs=[ds("shared_src", owners=["team-a"])])]
    for n in range(3):  # three readers: a run before the moment, one reading something else, one after
        out = [ds(f"out{n}")]
        events += run_pair(f"reader.r{n}", f"r{n}-1", 10 + n, 11 + n, inputs=[source_v1], outputs=out)
        events += run_pair(f"reader.r{n}", f"r{n}-x", 15 + n, 16 + n, inputs=[ds("other")], outputs=out)
        events += run_pair(f"reader.r{n}", f"r{n}-2", 30 + n, 31 + n, inputs=[source_v2], outputs=out)
    source_id, moment = dataset_node("shared_src"), w.to_micros(at(25))
    with contextlib.closing(store_source_of(_log(tmp_path, events))) as stored:
        catalog = stored.catalog()
        readers = sorted(catalog.adjacent(source_id, upstream=False))
        assert readers == [job_node(name) for name in ("planner", "reader.r0", "reader.r1", "reader.r2")]
        # the START and COMPLETE of each r{n}-1 and the planner's declaration: not the runs reading
        # something else, nor those first seen after the moment
        assert len(catalog.naming_refs(source_id, readers, moment) or ()) == 3 * 2 + 1
        assert len(catalog.naming_refs(source_id, readers) or ()) == 3 * 4 + 1
        graph = stored.view(moment)
        assert isinstance(graph, FocusedGraph)
        graph.prefetch_records([source_id])
        record = graph.dataset_record(source_id)
        assert record is not None and graph.folded_jobs == set()  # no reader folded whole
        assert record.schema_versions() == [(("id", "int"),)] and record.owners == ("team-a",)
        then = LineageQueries(stored).schema_diff(source_id, as_of=moment)["versions"]
        assert then == [[{"name": "id", "type": "int"}]]
