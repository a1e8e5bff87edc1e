"""Retention: old raw events go in batches while 4 writers append; the current graph and the latest runs
stay; an answer as of a time before the window says so. On SQLite and on PostgreSQL."""

from __future__ import annotations

import json
import threading
import time
from typing import Any

from airflow_lineage_plus.graph import LineageQueries
from airflow_lineage_plus.graph.store_source import StoreSource
from airflow_lineage_plus.store import LineageStore, apply_retention
from airflow_lineage_plus.store.retention import current_runs
from airflow_lineage_plus.timestamps import to_micros
from tests.support.graph_builders import at as time_of
from tests.support.graph_builders import (
    dataset_node,
    ds,
    event,
    job_node,
    parent_facet,
    run_id,
    run_pair,
    with_run_facets,
)

WINDOW = to_micros(time_of(50))  # events before minute 50 are past the window
OLD_RUNS = 150
JOBS = ("load", "build", "ended", "moved", "child")


def _world() -> list[dict[str, Any]]:
    raw, stg, mart, gone = ds("raw"), ds("stg", fields=[("id", "INT")]), ds("mart"), ds("gone")
    events = [
        *run_pair("load", "load-old", 1, 2, inputs=[raw], outputs=[stg]),  # deleted: a newer run ended
        *run_pair("load", "load-new", 60, 61, inputs=[raw], outputs=[stg]),
        *run_pair("build", "build-old", 3, 4, inputs=[stg], outputs=[mart]),  # kept: the parent of child-run
        *run_pair("build", "build-last", 10, 11, "FAIL", inputs=[stg], outputs=[mart]),  # old but current
        *run_pair("ended", "ended-old", 5, 6, inputs=[mart], outputs=[ds("report")]),  # latest that ended
        event("START", "ended", "ended-running", 70, inputs=[mart]),  # running, newer
        *run_pair("moved", "moved-old", 7, 8, outputs=[gone]),  # deleted: its edge to gone is retired
        *run_pair("moved", "moved-new", 80, 81, outputs=[mart]),
        *with_run_facets(
            run_pair("child", "child-run", 12, 13, outputs=[ds("side")]),
            {"parent": parent_facet("build", "build-old")},
        ),
    ]
    for n in range(OLD_RUNS):  # many old runs of one job: retention takes many batches
        events += run_pair("busy", f"busy-{n}", 20 + n * 0.1, 20.05 + n * 0.1, outputs=[ds("busy_out")])
    return events


#: events past the window that are not of a current run: load-old, moved-old, busy-0..148
EXPECTED_DELETED = 2 * 2 + 2 * (OLD_RUNS - 1)


def _current(store: LineageStore) -> dict[str, Any]:
    q = LineageQueries(StoreSource(store))
    found: dict[str, Any] = {
        "up": q.upstream(dataset_node("report"), 10),
        "down": q.downstream(dataset_node("raw"), 10),
        "failed": q.failed_upstream(dataset_node("report"), 10),
        "schema": q.schema_diff(dataset_node("stg")),
    }
    for job in (*JOBS, "busy"):
        walked = q.downstream(job_node(job), 1)
        found[job] = (q.node_details(job_node(job))["latestRun"], [n["id"] for n in walked["nodes"]])
    return found


def _writer(url: str, number: int, errors: list[BaseException], times: list[float]) -> None:
    store = LineageStore(url)
    try:
        for n in range(25):
            lines = run_pair(f"writer{number}", f"w{number}-{n}", 100 + n, 100.5 + n, outputs=[ds("w")])
            store.append([json.dumps(e).encode() for e in lines])
            times.append(time.monotonic())
            time.sleep(0.005)
    except BaseException as exc:  # reported by the test
        errors.append(exc)
    finally:
        store.close()


def test_retention_while_four_writers_append_keeps_everything_current(store_url: str) -> None:
    store = LineageStore(store_url)
    try:
        world = _world()
        store.append(json.dumps(e).encode() for e in world)
        before = _current(store)
        errors: list[BaseException] = []
        times: list[float] = []
        writers = [threading.Thread(target=_writer, args=(store_url, n, errors, times)) for n in range(4)]
        for thread in writers:
            thread.start()
        started = time.monotonic()
        result = apply_retention(store, WINDOW, batch=7)
        ended = time.monotonic()
        for thread in writers:
            thread.join(120)
        assert errors == []
        assert len(times) == 100 and sum(started < t < ended for t in times) > 0  # they did overlap
        assert (result.deleted, result.retained_from) == (EXPECTED_DELETED, WINDOW)
        assert store.count() == len(world) - EXPECTED_DELETED + 4 * 25 * 2
        assert _current(store) == before
        assert store.retained_from() == WINDOW
        # the folded state is kept: history such as an edge retired before the window stays (moved-old
        # wrote "gone"; moved-new no longer does), though the raw events that reported it are gone
        outputs = LineageQueries(StoreSource(store)).node_details(job_node("moved"))["outputs"]
        assert outputs == ["dataset:warehouse:gone", "dataset:warehouse:mart"]
        assert LineageQueries(StoreSource(store)).downstream(job_node("moved"), 1, include_retired=True)[
            "edges"
        ] == [
            {"origin": job_node("moved"), "destination": "dataset:warehouse:gone", "state": "retired"},
            {"origin": job_node("moved"), "destination": "dataset:warehouse:mart", "state": "current"},
        ]
    finally:
        store.close()


def test_the_runs_kept_are_each_jobs_latest_and_latest_ended_with_their_parents(store_url: str) -> None:
    store = LineageStore(store_url)
    try:
        store.append(json.dumps(e).encode() for e in _world())
        kept = current_runs(store)
        labels = {"load-new", "build-last", "build-old", "ended-old", "ended-running", "moved-new"}
        labels.add("child-run")
        assert kept == {run_id(label) for label in {*labels, f"busy-{OLD_RUNS - 1}"}}
    finally:
        store.close()


def test_an_answer_as_of_a_time_before_the_window_says_so(store_url: str) -> None:
    store = LineageStore(store_url)
    try:
        store.append(json.dumps(e).encode() for e in _world())
        apply_retention(store, WINDOW)
        q = LineageQueries(StoreSource(store))
        early = q.upstream(dataset_node("stg"), 5, as_of=to_micros(time_of(30)))
        late = q.upstream(dataset_node("stg"), 5, as_of=to_micros(time_of(90)))
        assert (early["exact"], early["retainedFrom"]) == (False, time_of(50))
        assert late["exact"] is True and "retainedFrom" not in late
        assert q.time_range()["from"] == time_of(50)
    finally:
        store.close()
