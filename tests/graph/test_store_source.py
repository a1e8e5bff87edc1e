"""The lineage store as a source gives the event log's answers: shuffled, repeated, split across writers,
as of any time, details and runs, what was written before each question; reading only what a question
touches; on SQLite and on PostgreSQL."""

from __future__ import annotations

import json
import tempfile
import threading
from pathlib import Path
from typing import Any

import pytest
import sqlalchemy as sa
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from airflow_lineage_plus.cli import run
from airflow_lineage_plus.graph import LineageQueries, LineageSource, open_source
from airflow_lineage_plus.graph.source import MAX_AIRFLOW_RUNS
from airflow_lineage_plus.graph.store_source import StoreSource
from airflow_lineage_plus.graph.stored_graph import StoredGraph
from airflow_lineage_plus.store import LineageStore, raw_event, schema
from airflow_lineage_plus.store.search import search_nodes
from airflow_lineage_plus.timestamps import to_micros
from tests.support.graph_builders import (
    airflow_facets,
    daily_runs,
    dataset_node,
    ds,
    job_node,
    permissions_world,
    run_id,
    run_pair,
    varied_events,
    with_run_facets,
    write_log,
)
from tests.support.store_engines import ENGINES, new_store_url

BASE = varied_events()
LINES = [json.dumps(e).encode() for e in BASE]


def answers(
    source: LineageSource, as_of: int | None = None, keys: tuple[str, ...] | None = None
) -> dict[str, Any]:
    """What the order-independence tests ask (those of ``keys``, default all), as of a time."""
    q = LineageQueries(source)
    found: dict[str, Any] = {}
    for key, ask in {
        "up": lambda: q.upstream(dataset_node("orders_report"), 10, as_of=as_of),
        "down": lambda: q.downstream(dataset_node("raw_orders"), 10, as_of=as_of),
        "failed": lambda: q.failed_upstream(dataset_node("orders_report"), 10, as_of=as_of),
        "impact": lambda: q.impact(dataset_node("raw_orders"), 10, as_of=as_of),
        "schema": lambda: q.schema_diff(dataset_node("stg_orders"), as_of=as_of),
        "columns": lambda: q.columns(dataset_node("fct_daily_orders"), "total_usd", 10, as_of=as_of),
        "lint": q.lint_names,
        "lineage": lambda: q.lineage(dataset_node("stg_orders"), 5, limit=3, as_of=as_of),
        "job": lambda: q.node_details(job_node("orders.build_fct"), as_of=as_of),
    }.items():
        if keys is not None and key not in keys:
            continue
        try:
            found[key] = ask()
        except LookupError as exc:  # a node with no events yet at that time
            found[key] = f"not found: {exc}"
    return found


def _from_log(lines: list[bytes]) -> dict[str, Any]:
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "events.jsonl"
        path.write_bytes(b"".join(line + b"\n" for line in lines))
        return answers(open_source(events=path))


EXPECTED = _from_log(LINES)


@pytest.fixture(scope="module", params=ENGINES)
def engine_url(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> str:
    return new_store_url(request.param, tmp_path_factory.mktemp("store"), request)


def _emptied(url: str) -> LineageStore:
    store = LineageStore(url)
    with store.engine.begin() as connection:
        for table in (schema.event, *schema.FOLDED):
            connection.execute(sa.delete(table))
    return store


def _append_from_writers(url: str, parts: list[list[bytes]]) -> None:
    """Each part appended by a writer of its own (its own engine), all at once."""
    errors: list[BaseException] = []

    def write(part: list[bytes]) -> None:
        writer = LineageStore(url)
        try:
            for start in range(0, len(part), 3):
                writer.append(part[start : start + 3])
        except BaseException as exc:  # reported below
            errors.append(exc)
        finally:
            writer.close()

    threads = [threading.Thread(target=write, args=(part,)) for part in parts]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(60)
    assert errors == []


def test_the_reference_answers_are_not_trivial() -> None:
    assert [n["latestRun"]["state"] for n in EXPECTED["failed"]["nodes"]] == ["FAILED", "ABORTED"]
    assert EXPECTED["schema"]["changes"] and EXPECTED["columns"]["upstream"]


@settings(max_examples=12, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    order=st.permutations(range(len(BASE))),
    repeats=st.lists(st.integers(min_value=0, max_value=len(BASE) - 1), max_size=6),
    writers=st.integers(min_value=1, max_value=4),
)
def test_shuffled_repeated_events_split_across_writers_give_the_event_logs_answers(
    engine_url: str, order: list[int], repeats: list[int], writers: int
) -> None:
    lines = [LINES[i] for i in order] + [LINES[i] for i in repeats]
    store = _emptied(engine_url)
    try:
        _append_from_writers(engine_url, [lines[w::writers] for w in range(writers)])
        assert answers(StoreSource(store)) == EXPECTED
    finally:
        store.close()


def test_answers_as_of_every_event_time_are_the_event_logs(engine_url: str, tmp_path: Path) -> None:
    log = open_source(events=write_log(tmp_path / "events.jsonl", BASE))
    store = _emptied(engine_url)
    try:
        store.append(reversed(LINES))
        source = StoreSource(store)
        times = sorted({to_micros(e["eventTime"]) for e in BASE})
        for moment in [times[0] - 1, *times]:
            assert answers(source, moment) == answers(log, moment), moment
    finally:
        store.close()


@pytest.mark.parametrize(("world", "counts"), [(varied_events, (7, 7)), (permissions_world, (24, 13))])
def test_details_of_every_node_and_run_are_the_event_logs(
    engine_url: str, tmp_path: Path, world: Any, counts: tuple[int, int]
) -> None:
    events = world()
    log = open_source(events=write_log(tmp_path / "events.jsonl", events))
    store = _emptied(engine_url)
    try:
        store.append(json.dumps(e).encode() for e in events)
        source = StoreSource(store)
        nodes = [*log.graph.jobs, *log.graph.datasets]  # type: ignore[attr-defined]
        runs = list(log.graph.runs)  # type: ignore[attr-defined]
        assert (len(nodes), len(runs)) == counts
        for node in nodes:
            assert source.node_details(node) == log.node_details(node), node
        for run_id in runs:
            assert source.run_details(run_id) == log.run_details(run_id), run_id
        assert source.run_history(sorted(nodes), 5) == log.run_history(sorted(nodes), 5)
        assert source.summary()[:2] == log.summary()[:2] and source.time_range() == log.time_range()
        assert sorted(source.dataset_names()) == sorted(log.dataset_names())
        assert source.search("orders", 50) == log.search("orders", 50)
        assert source.problems == log.problems
    finally:
        store.close()


def test_a_question_sees_every_event_written_before_it_started(engine_url: str) -> None:
    store = _emptied(engine_url)
    try:
        store.append(LINES[:5])
        source = StoreSource(store)
        store.append(LINES)  # the first five again (stored once) and the rest
        assert answers(source) == EXPECTED
    finally:
        store.close()


def test_questions_inside_one_view_share_a_graph_per_thread_and_later_ones_read_anew(engine_url: str) -> None:
    store = _emptied(engine_url)
    try:
        store.append(LINES[:5])
        source = StoreSource(store)
        other: list[Any] = []
        with source.one_view():
            now, past = source.view(), source.view(to_micros("2026-01-01T00:00:00Z"))
            store.append(LINES)
            assert source.view() is now and source.view(to_micros("2026-01-01T00:00:00Z")) is past
            assert now is not past and source.view(keep_refs=True) is now and now.keep_refs  # type: ignore[attr-defined]
            with source.one_view():  # nested: the same block
                assert source.view() is now
            thread = threading.Thread(target=lambda: other.append(source.view()))
            thread.start()
            thread.join()
        assert other[0] is not now  # another thread is not in the block
        assert source.view() is not now and source.view() is not source.view()
        assert answers(source) == EXPECTED
    finally:
        store.close()


def test_every_step_of_one_question_reads_one_snapshot_of_the_store(
    engine_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A walk reads a level at a time; a write committed between two levels is not half in the answer."""
    store = _emptied(engine_url)
    writer = LineageStore(engine_url)
    chain = [
        *run_pair("load", run_id("load"), 0, 1, inputs=[ds("source")], outputs=[ds("staged")]),
        *run_pair("build", run_id("build"), 2, 3, inputs=[ds("staged")], outputs=[ds("mart")]),
    ]
    late = run_pair("backfill", run_id("backfill"), 4, 5, inputs=[ds("archive")], outputs=[ds("staged")])
    read_writers = StoredGraph.load_writers
    written: list[int] = []

    def write_after_the_first_level(graph: StoredGraph, dataset_ids: Any) -> None:
        read_writers(graph, dataset_ids)
        if not written:  # another writer commits a new writer of "staged" before the next level is read
            written.append(writer.append([json.dumps(e).encode() for e in late]).added)

    try:
        store.append([json.dumps(e).encode() for e in chain])
        queries = LineageQueries(StoreSource(store))
        monkeypatch.setattr(StoredGraph, "load_writers", write_after_the_first_level)
        first = {n["name"] for n in queries.upstream(dataset_node("mart"), 10)["nodes"]}
        assert written == [2]
        assert first == {"build", "staged", "load", "source"}  # the target is not among its nodes
        later = {n["name"] for n in queries.upstream(dataset_node("mart"), 10)["nodes"]}
        assert later == first | {"backfill", "archive"}
    finally:
        writer.close()
        store.close()


def test_search_ignores_case_and_takes_percent_and_underscore_literally(engine_url: str) -> None:
    store = _emptied(engine_url)
    names = ["Orders_Daily", "ordersXdaily", "margin_%_report", "margin_x_report", "Ünïcode_Ä"]
    events = [e for n, name in enumerate(names) for e in run_pair(name, run_id(name), n, n + 1)]
    try:
        store.append([json.dumps(e).encode() for e in events])
        queries = LineageQueries(StoreSource(store))

        def found(text: str) -> list[str]:
            return sorted(n["name"] for n in queries.search(text, 50))

        assert found("ORDERS_daily") == ["Orders_Daily"]  # "_" is not any character
        assert found("orders") == ["Orders_Daily", "ordersXdaily"]
        assert found("_%_") == ["margin_%_report"]  # nor is "%" any run of them
        assert found("Ünïcode_Ä") == found("code_Ä") == ["Ünïcode_Ä"]  # as written (folded: see search)
        assert found("CODE_Ä") == ["Ünïcode_Ä"]
    finally:
        store.close()


def test_search_ranks_every_match_in_the_store_and_reads_only_the_best(engine_url: str) -> None:
    store = _emptied(engine_url)
    # stored first: 30 names only containing the text, then those starting with it, then the text itself
    names = [f"x{n:02d}.orders" for n in range(30)] + ["orders_archive", "orders_b", "orders", "Orders_a"]
    events = [e for n, name in enumerate(names) for e in run_pair(name, run_id(name), n, n + 1)]
    try:
        store.append([json.dumps(e).encode() for e in events])
        best = search_nodes(store, "orders", 3)  # what the store hands over: 3 rows, not 34
        assert [name for _, _, name in best] == ["orders", "Orders_a", "orders_b"]
        queries = LineageQueries(StoreSource(store))
        assert [n["name"] for n in queries.search("ORDERS", 4)] == [
            "orders",
            "Orders_a",
            "orders_b",
            "orders_archive",
        ]
        assert [n["name"] for n in queries.search("orders", 40)][-2:] == ["x28.orders", "x29.orders"]
    finally:
        store.close()


def test_an_event_and_its_folded_facts_are_seen_together_once_committed(
    request: pytest.FixtureRequest, tmp_path: Path
) -> None:
    """PostgreSQL: a writer's transaction not committed yet shows neither the event nor what it says."""
    url = new_store_url("postgresql", tmp_path, request)
    store = LineageStore(url)
    writer = LineageStore(url)
    try:
        source = StoreSource(store)
        with writer.engine.connect() as connection:
            transaction = connection.begin()
            writer._insert_in(connection, [raw_event(LINES[0])])  # not committed yet
            assert store.count() == 0
            assert LineageQueries(source).search("orders") == []
            transaction.commit()
        assert store.count() == 1
        assert [n["name"] for n in LineageQueries(source).search("orders.load")] == ["orders.load_orders"]
    finally:
        writer.close()
        store.close()


def test_import_loads_a_log_once_and_the_store_answers_like_it(engine_url: str, tmp_path: Path) -> None:
    _emptied(engine_url).close()
    log = write_log(tmp_path / "events.jsonl", BASE)
    with log.open("ab") as handle:
        handle.write(b"{garbage\n\n")
    first = run(["import", str(log), "--store", engine_url])
    second = run(["import", str(log), "--store", engine_url])
    assert first[0] == 0 and f"imported {len(BASE)} new events" in first[1]
    assert "skipped input: malformed=1" in first[2]
    assert second[0] == 0 and "imported 0 new events" in second[1]
    assert f"({len(BASE)} already stored)" in second[1]
    assert answers(open_source(store=engine_url)) == EXPECTED


UNRELATED = job_node("other.unrelated")


def test_a_question_reads_only_the_nodes_it_touches_and_answers_as_the_event_log(engine_url: str) -> None:
    store = _emptied(engine_url)
    unrelated = {
        "eventType": "COMPLETE",
        "eventTime": "2026-03-01T00:00:00Z",
        "producer": "https://example.com/tests",
        "schemaURL": "https://openlineage.io/spec/2-0-2/OpenLineage.json#/$defs/RunEvent",
        "run": {"runId": "01970000-0000-7000-8000-000000000001"},
        "job": {"namespace": "pipeline", "name": "other.unrelated"},
        "inputs": [{"namespace": "warehouse", "name": "elsewhere"}],
        "outputs": [],
    }
    try:
        _append_from_writers(engine_url, [LINES[0::2], [*LINES[1::2], json.dumps(unrelated).encode()]])
        graph = StoredGraph(store)
        answer = LineageQueries(_OneGraph(store, graph)).upstream(dataset_node("orders_report"), 10)
        assert answer == EXPECTED["up"]
        read = set(graph.jobs) | set(graph.datasets)
        assert UNRELATED not in read and dataset_node("elsewhere") not in read
        assert job_node("orders.build_fct") in read
    finally:
        store.close()


class _OneGraph(StoreSource):
    """A store source whose questions all read one graph (to see what they read)."""

    def __init__(self, store: LineageStore, graph: Any) -> None:
        super().__init__(store)
        self.one = graph

    def view(self, as_of: int | None = None, *, keep_refs: bool = False) -> Any:
        return self.one if as_of is None else super().view(as_of, keep_refs=keep_refs)


def test_a_task_instances_tries_are_found_however_old_its_dag_run(engine_url: str) -> None:
    store = _emptied(engine_url)
    store.append([json.dumps(e).encode() for e in daily_runs(25)])
    source = StoreSource(store)
    load = job_node("nightly.load")
    listed = LineageQueries(source).node_details(load)["runs"]
    assert len(listed) == 20 and {run["airflow"]["run_id"] for run in listed} == {
        f"scheduled__2024-01-{day:02d}" for day in range(6, 26)
    }  # the first DAG runs are too old for the job's details
    queries = LineageQueries(source)
    assert queries.airflow_runs(load, "scheduled__2024-01-01") == [
        run_id("nightly.load-1-try2"),
        run_id("nightly.load-1-try1"),
    ]
    assert queries.airflow_runs(load, "scheduled__2024-01-25") == [run_id("nightly.load-25-try1")]
    assert queries.airflow_runs(job_node("nightly"), "scheduled__2024-01-01") == [run_id("nightly-1")]
    assert queries.airflow_runs(load, "manual__2024-01-01") == []
    assert queries.scoped(lambda dag: dag == "other").airflow_runs(load, "scheduled__2024-01-01") == []
    assert queries.scoped(lambda dag: dag == "nightly").airflow_runs(load, "scheduled__2024-01-01") == [
        run_id("nightly.load-1-try2"),
        run_id("nightly.load-1-try1"),
    ]
    source.close()
    store.close()


def test_a_producer_naming_one_dag_run_in_many_runs_costs_at_most_the_bound(engine_url: str) -> None:
    store = _emptied(engine_url)
    ids = airflow_facets("nightly", task_id="load", dag_run="scheduled__2024-01-01")
    hostile = [
        item
        for number in range(MAX_AIRFLOW_RUNS + 1)
        for item in with_run_facets(run_pair("nightly.load", f"flood-{number}", number, number + 0.5), ids)
    ]
    store.append([json.dumps(e).encode() for e in hostile])
    source = StoreSource(store)
    found = LineageQueries(source).airflow_runs(job_node("nightly.load"), "scheduled__2024-01-01")
    assert found == [run_id(f"flood-{number}") for number in range(MAX_AIRFLOW_RUNS, 0, -1)]  # the newest 100
    source.close()
    store.close()
