"""A graph read from the store reads each job's newest runs, and the older ones only when a question needs
them; every answer is the one reading every run gives (on SQLite and PostgreSQL)."""

from __future__ import annotations

import copy
import json
import uuid
from collections.abc import Iterator
from datetime import datetime, timedelta
from typing import Any

import pytest
import sqlalchemy as sa

from airflow_lineage_plus.graph import LineageQueries, visible_jobs
from airflow_lineage_plus.graph.answers import failed_jobs
from airflow_lineage_plus.graph.model import LineageGraph
from airflow_lineage_plus.graph.records import JobRecord
from airflow_lineage_plus.graph.runs import FAILED_STATES
from airflow_lineage_plus.graph.store_source import StoreSource
from airflow_lineage_plus.graph.stored_graph import RUN_WINDOW, StoredGraph
from airflow_lineage_plus.graph.visibility import Visibility
from airflow_lineage_plus.store import LineageStore
from airflow_lineage_plus.store.folded import FoldedState
from airflow_lineage_plus.timestamps import to_micros
from tests.graph.test_store_source import answers
from tests.support.graph_builders import (
    RUN_FACET,
    airflow_facets,
    at,
    daily_runs,
    dataset_node,
    ds,
    facet,
    job_node,
    parent_facet,
    run_id,
    run_pair,
    varied_events,
    with_run_facets,
)
from tests.support.what_changed_events import DAY, week

#: a window no test world fills: every run read at once
EVERY_RUN = 10_000
NIGHTLY_LOAD = job_node("nightly.load")
STG = dataset_node("stg.contacts")


def _store(url: str, events: list[dict[str, Any]]) -> LineageStore:
    store = LineageStore(url)
    store.append(json.dumps(item).encode() for item in events)
    return store


@pytest.fixture
def nightly(store_url: str) -> Iterator[LineageStore]:
    """40 daily runs of ``nightly.load`` (41 tries: day 1 has two)."""
    store = _store(store_url, daily_runs(40))
    yield store
    store.close()


@pytest.fixture
def forty_days(store_url: str) -> Iterator[LineageStore]:
    """40 days of the what-changed pipeline, the last with fewer rows and new SQL."""
    store = _store(store_url, week(40, rows=800, sql="SELECT id FROM raw.contacts"))
    yield store
    store.close()


def _job_read(store: LineageStore, job_id: str) -> tuple[StoredGraph, JobRecord]:
    """A graph of the store with the job read (its newest runs), and the job."""
    graph = StoredGraph(store)
    graph.load_jobs([job_id])
    return graph, graph.jobs[job_id]


def _with_window(monkeypatch: pytest.MonkeyPatch, window: int) -> None:
    monkeypatch.setattr(StoredGraph, "run_window", window)


def test_a_job_has_its_newest_runs_read_until_a_question_asks_for_every_run(nightly: LineageStore) -> None:
    graph, job = _job_read(nightly, NIGHTLY_LOAD)
    newest = [run_id(f"nightly.load-{day}-try1") for day in range(40 - RUN_WINDOW + 1, 41)]
    assert [run.run_id for run in job.runs] == newest
    latest = graph.latest_run(job)
    assert latest is not None and latest.run_id == run_id("nightly.load-40-try1")
    assert len(job.runs) == RUN_WINDOW  # deciding the latest run read nothing more
    assert len(list(graph.all_runs(job))) == 41
    assert [run.run_id for run in job.runs][-RUN_WINDOW:] == newest
    assert job.runs[0].run_id == run_id("nightly.load-1-try1")


def test_the_newest_runs_a_history_asks_for_are_read_only_past_the_window(
    nightly: LineageStore, monkeypatch: pytest.MonkeyPatch
) -> None:
    _with_window(monkeypatch, 20)
    graph, job = _job_read(nightly, NIGHTLY_LOAD)
    assert len(graph.newest_runs(job, 15)) == 20  # the window holds them: nothing more read
    assert len(job.runs) == 20
    assert job.runs[10].run_id == run_id("nightly.load-31-try1")
    # as of day 31 the 20 read hold 11 runs: the rest is read (days 1 to 31, and day 1's retry)
    as_of_day_31 = graph.newest_runs(job, 15, as_of=job.runs[10].sort_key()[0])
    assert (len(as_of_day_31), len(job.runs)) == (32, 41)


def test_the_histories_of_jobs_and_single_writer_datasets_read_where_their_events_are_at_once(
    forty_days: LineageStore, monkeypatch: pytest.MonkeyPatch
) -> None:
    asked: list[int] = []
    run_refs = FoldedState.run_refs

    def counted(state: FoldedState, run_keys: Any) -> dict[int, list[int]]:
        keys = list(run_keys)
        asked.append(len(keys))
        return run_refs(state, keys)

    monkeypatch.setattr(FoldedState, "run_refs", counted)
    nodes = [job_node("crm_extract"), job_node("stg_contacts"), dataset_node("raw.contacts"), STG]
    histories = StoreSource(forty_days).run_history(nodes, 15, dataset_runs=8)
    assert [len(histories[node].runs) for node in nodes] == [15, 15, 8, 8]
    # the 15 newest runs of each job, whose 8 newest are the datasets' writes: one query
    assert asked == [30]


def test_a_job_prefetched_for_its_latest_run_has_that_run_read_and_grows_from_there(
    nightly: LineageStore,
) -> None:
    graph = StoredGraph(nightly)
    graph.prefetch_records([NIGHTLY_LOAD], runs=1)
    job = graph.jobs[NIGHTLY_LOAD]
    assert [run.run_id for run in job.runs] == [run_id("nightly.load-40-try1")]
    # 3 asked for later: GROWTH x the 1 read (at least the 3 asked for), not GROWTH x the usual window
    assert [run.run_id for run in graph.newest_runs(job, 3)] == [
        run_id(f"nightly.load-{day}-try1") for day in range(40, 36, -1)
    ]


def test_where_a_runs_events_are_is_read_only_for_the_runs_a_question_reads_back(
    nightly: LineageStore,
) -> None:
    graph = StoredGraph(nightly, keep_refs=True)
    graph.load_jobs([NIGHTLY_LOAD])
    runs = graph.jobs[NIGHTLY_LOAD].runs
    assert [len(run.refs) for run in runs] == [0] * RUN_WINDOW
    graph.read_refs(runs[-2:])
    assert [len(run.refs) for run in runs] == [0] * (RUN_WINDOW - 2) + [2, 2]  # START and COMPLETE
    payloads = nightly.payloads(runs[-1].refs)
    assert {json.loads(payload)["run"]["runId"] for payload in payloads.values()} == {runs[-1].run_id}
    # without keep_refs nothing is read
    bare = StoredGraph(nightly)
    bare.load_jobs([NIGHTLY_LOAD])
    bare.read_refs(bare.jobs[NIGHTLY_LOAD].runs)
    assert [len(run.refs) for run in bare.jobs[NIGHTLY_LOAD].runs] == [0] * RUN_WINDOW


def test_a_history_past_the_window_reads_four_times_as_many_newest_runs_not_every_run(
    nightly: LineageStore, monkeypatch: pytest.MonkeyPatch
) -> None:
    _with_window(monkeypatch, 2)
    graph, job = _job_read(nightly, NIGHTLY_LOAD)
    assert len(job.runs) == 2
    # 5 asked for: the newest max(2 x GROWTH, 5) = 8 are read, and the 33 older runs are not
    newest = graph.newest_runs(job, 5)
    assert [run.run_id for run in newest] == [run_id(f"nightly.load-{day}-try1") for day in range(40, 32, -1)]
    assert len(job.runs) == 8
    # 20 asked for: max(8 x GROWTH, 20) = 32
    assert len(graph.newest_runs(job, 20)) == 32
    assert len(job.runs) == 32
    # the same as reading every run gives, to the fifth
    whole = StoredGraph(nightly)
    whole.run_window = EVERY_RUN
    whole.load_jobs([NIGHTLY_LOAD])
    every = whole.newest_runs(whole.jobs[NIGHTLY_LOAD], 5)
    assert len(every) == 41
    assert [run.run_id for run in newest[:5]] == [run.run_id for run in every[:5]]


def _etl_days(completed: int, failed: int, written: str, written_failing: str) -> list[dict[str, Any]]:
    """``completed`` daily runs of ``etl`` writing ``written``, then ``failed`` failed ones writing
    ``written_failing``."""
    events = []
    for day in range(1, completed + failed + 1):
        ok = day <= completed
        outputs = [ds(written if ok else written_failing)]
        events += run_pair(
            "etl", f"etl-{day}", day * 10, day * 10 + 1, "COMPLETE" if ok else "FAIL", outputs=outputs
        )
    return events


@pytest.mark.parametrize(
    ("completed", "failed", "read"),
    [
        (40, 10, 32),  # 2, then 8 newest runs failed; the 32 newest hold a completed run: no more read
        (1, 4, 5),  # 2 failed, then 8 asked for: all 5 there are
    ],
)
def test_a_job_whose_newest_runs_never_completed_reads_four_times_as_many_until_one_did(
    store_url: str, monkeypatch: pytest.MonkeyPatch, completed: int, failed: int, read: int
) -> None:
    """Its current edges start at its latest completed run, so that run must be read."""
    store = _store(store_url, _etl_days(completed, failed, "old_table", "new_table"))
    try:
        _with_window(monkeypatch, 2)
        graph, job = _job_read(store, job_node("etl"))
        assert len(job.runs) == read
        assert graph.current_io(job) == {
            (job_node("etl"), dataset_node("old_table")),
            (job_node("etl"), dataset_node("new_table")),
        }
    finally:
        store.close()


def test_a_history_asking_fewer_completed_runs_than_runs_is_answered_by_the_window(
    store_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A job's history takes its newest runs whatever their state; a dataset's, its writers' completed
    ones: asking 15 runs and 8 completed reads no more while the window holds both."""
    store = _store(store_url, _etl_days(40, 3, "table", "table"))
    try:
        _with_window(monkeypatch, 16)
        graph, job = _job_read(store, job_node("etl"))
        # the 16 newest: 3 failed, 13 completed
        assert len(graph.newest_runs(job, 15, completed=8)) == 16
        assert len(job.runs) == 16
        # 15 completed asked for: the newest 16 x GROWTH = 64 are read, all 43 there are
        assert len(graph.newest_runs(job, 15)) == 43
        assert len(job.runs) == 43
    finally:
        store.close()


def _earlier(events: list[dict[str, Any]], days: int) -> list[dict[str, Any]]:
    """``events`` again, ``days`` earlier, as runs of their own."""
    found = copy.deepcopy(events)
    for item in found:
        moment = datetime.fromisoformat(item["eventTime"].replace("Z", "+00:00")) - timedelta(days=days)
        item["eventTime"] = moment.isoformat().replace("+00:00", "Z")
        for holder in (item.get("run"), item.get("run", {}).get("facets", {}).get("parent", {}).get("run")):
            if holder and "runId" in holder:
                holder["runId"] = str(uuid.uuid5(uuid.NAMESPACE_URL, f"{days}:{holder['runId']}"))
    return found


@pytest.mark.parametrize(("window", "read_at_first"), [(1, 12), (2, 6), (3, 9)])
def test_every_question_reading_a_few_runs_of_each_job_at_first_answers_as_reading_all(
    store_url: str, window: int, read_at_first: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Three jobs of 6, 6 and 9 runs; the newest run of each did not complete, so a window of one reads
    the newest 4 (``GROWTH`` x 1) of each next, which hold a completed one (their current edges start at
    the latest completed run)."""
    world = varied_events()
    store = _store(store_url, _earlier(world, 2) + _earlier(world, 1) + world)
    try:
        _with_window(monkeypatch, EVERY_RUN)
        expected = answers(StoreSource(store))
        graph = StoredGraph(store)
        graph.load_all()
        runs = sum(len(job.runs) for job in graph.jobs.values())
        _with_window(monkeypatch, window)
        windowed = StoredGraph(store)
        windowed.load_all()
        read = sum(len(job.runs) for job in windowed.jobs.values())
        assert (runs, read) == (21, read_at_first)
        assert answers(StoreSource(store)) == expected
    finally:
        store.close()


@pytest.mark.parametrize("window", [1, 2, 15, 20])
def test_what_changed_and_run_histories_read_from_a_window_are_those_of_every_run(
    forty_days: LineageStore, window: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    def ask() -> list[Any]:
        queries = LineageQueries(StoreSource(forty_days))
        return [
            queries.what_changed(STG, 7, 10, now=0),
            queries.what_changed(STG, 3, 10, now=0, as_of=to_micros(at(30.5 * DAY))),
            queries.node_details(job_node("stg_contacts")),
            queries.failed_upstream(STG, 10),
        ]

    expected = ask()
    kinds = sorted(change["kind"] for change in expected[0]["changes"])
    assert kinds == ["bytes", "rowCount", "sql"]
    _with_window(monkeypatch, window)
    assert ask() == expected


def _two_dag_world() -> list[dict[str, Any]]:
    """``etl.load`` ran in DAG ``secret`` once, then in DAG ``open`` four times; ``dbt.model`` (no DAG
    of its own) ran under each of those runs; ``open.report`` reads both their tables."""
    events: list[dict[str, Any]] = []
    for day in range(1, 6):
        dag = "secret" if day == 1 else "open"
        load = f"etl.load-{day}"
        events += with_run_facets(
            run_pair("etl.load", load, day * 10, day * 10 + 1, outputs=[ds("loaded")]),
            airflow_facets(dag, task_id="load"),
        )
        events += with_run_facets(
            run_pair("dbt.model", f"dbt.model-{day}", day * 10 + 2, day * 10 + 3, outputs=[ds("modelled")]),
            {"parent": parent_facet("etl.load", load)},
        )
    events += with_run_facets(
        run_pair(
            "open.report", "report-1", 60, 61, inputs=[ds("loaded"), ds("modelled")], outputs=[ds("report")]
        ),
        airflow_facets("open", task_id="report"),
    )
    return events


def test_a_reader_of_one_dag_sees_no_job_whose_unread_older_runs_belong_to_another(
    store_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    store = _store(store_url, _two_dag_world())
    try:

        def ask() -> list[Any]:
            scoped = LineageQueries(StoreSource(store)).scoped(lambda dag_id: dag_id == "open")
            return [scoped.upstream(dataset_node("report"), 10), scoped.node_details(job_node("open.report"))]

        expected = ask()
        shown = json.dumps(expected)
        assert "open.report" in shown and "etl.load" not in shown and "dbt.model" not in shown
        _with_window(monkeypatch, 2)
        graph = StoredGraph(store)
        graph.load_jobs([job_node("etl.load"), job_node("dbt.model")])
        assert [len(graph.jobs[job_node(name)].runs) for name in ("etl.load", "dbt.model")] == [2, 2]
        assert ask() == expected
    finally:
        store.close()


def _check_skipped_on(days: tuple[int, ...]) -> list[dict[str, Any]]:
    """40 daily runs of DAG ``nightly``; its task ``check`` ran each day but ``days``, when the DAG run's
    tasksState says it was skipped."""
    events: list[dict[str, Any]] = []
    for day in range(1, 41):
        start, skipped = day * 60.0, day in days
        tasks = {"check": "skipped" if skipped else "success"}
        state = {"airflowState": facet(RUN_FACET, dagRunState="success", tasksState=tasks)}
        dag_run = {**airflow_facets("nightly", dag_run=f"scheduled__{day}"), **state}
        events += with_run_facets(run_pair("nightly", f"nightly-{day}", start, start + 10), dag_run)
        if not skipped:
            task = {
                **airflow_facets("nightly", task_id="check"),
                "parent": parent_facet("nightly", f"nightly-{day}"),
            }
            events += with_run_facets(run_pair("nightly.check", f"check-{day}", start + 1, start + 2), task)
    return events


def test_skip_records_older_than_a_jobs_runs_read_are_read_with_its_older_runs(
    store_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    store = _store(store_url, _check_skipped_on((3, 5, 39)))
    check = job_node("nightly.check")
    try:
        _with_window(monkeypatch, EVERY_RUN)
        everything = LineageQueries(StoreSource(store)).node_details(check)
        _with_window(monkeypatch, RUN_WINDOW)
        graph = StoredGraph(store)
        graph.load_jobs([check])
        job = graph.jobs[check]
        not_run = [run for run in graph.state_runs(job) if run.run_id is None]
        assert (len(job.runs), [run.parent_run_id for run in not_run]) == (RUN_WINDOW, [run_id("nightly-39")])
        assert [run.run_id or run.parent_run_id for run in graph.newest_runs(job, 3)][:3] == [
            run_id("check-40"),
            run_id("nightly-39"),
            run_id("check-38"),
        ]
        assert len(list(graph.all_runs(job))) == 37 + 3
        assert LineageQueries(StoreSource(store)).node_details(check) == everything
    finally:
        store.close()


def _every_job_world() -> list[dict[str, Any]]:
    """Jobs whose newest run decides whether they failed: ``fixed`` failed then completed, ``broke``
    completed then failed, ``aborted`` ended ABORTED, ``skipped`` ended ABORT with a skip facet, ``check``
    failed and was then skipped by a later DAG run (its latest run is that not-run run), ``tied`` has two
    runs started together (one FAILED, the other the latest by run id); ``slo.writer`` has a freshness
    target and writes ``fresh``."""
    slo = {"lineagePlus_sloTier": facet(tier="gold", freshnessMinutes=60)}
    events = varied_events()
    events += run_pair("fixed", "fixed-1", 1, 2, "FAIL", outputs=[ds("fixed_out")])
    events += run_pair("fixed", "fixed-2", 3, 4, outputs=[ds("fixed_out")])
    events += run_pair("broke", "broke-1", 1, 2, outputs=[ds("broke_out")])
    events += run_pair("broke", "broke-2", 3, 4, "FAIL", outputs=[ds("broke_out")])
    events += run_pair("aborted", "aborted-1", 5, 6, "ABORT")
    events += run_pair("skipped", "skipped-1", 5, 6, "ABORT", skipped="branch not taken")
    events += run_pair("tied", "tied-1", 7, 8, "FAIL")
    events += run_pair("tied", "tied-2", 7, 9)
    events += with_run_facets(
        run_pair("nightly.check", "check-1", 11, 12, "FAIL"),
        {**airflow_facets("nightly", task_id="check"), "parent": parent_facet("nightly", "nightly-1")},
    )
    events += with_run_facets(run_pair("nightly", "nightly-1", 10, 13), airflow_facets("nightly"))
    tasks = {"airflowState": facet(RUN_FACET, dagRunState="success", tasksState={"check": "skipped"})}
    events += with_run_facets(
        run_pair("nightly", "nightly-2", 20, 23), {**airflow_facets("nightly"), **tasks}
    )
    for item in run_pair("slo.writer", "slo-1", 30, 31, outputs=[ds("fresh")]):
        item["job"]["facets"] = slo
        events.append(item)
    return events


def test_the_store_finds_the_failed_jobs_the_slo_jobs_and_the_recent_writes_a_whole_graph_finds(
    store_url: str,
) -> None:
    store = _store(store_url, _every_job_world())
    try:
        whole = StoredGraph(store)
        whole.load_all()
        failed = [
            j.id for j in whole.jobs.values() if (r := whole.latest_run(j)) and r.state in FAILED_STATES
        ]
        assert sorted(failed) == [
            job_node(name) for name in ("aborted", "broke", "orders.build_fct", "orders.load_orders")
        ]
        lazy = StoredGraph(store)
        assert failed_jobs(lazy) == sorted(failed)
        # only the jobs whose newest run ended badly were read: those, and three whose latest run did not fail
        maybe = [job_node("skipped"), job_node("nightly.check"), job_node("tied")]
        assert sorted(dict.keys(lazy.jobs)) == sorted([*failed, *maybe])
        assert StoredGraph(store).job_ids_with_slo() == LineageGraph.job_ids_with_slo(whole)
        assert whole.job_ids_with_slo() == [job_node("slo.writer")]
        for since in (-1, to_micros(at(3.5)), to_micros(at(30)), to_micros(at(31)), to_micros(at(99))):
            for limit in (1, 3, 1000):
                expected = LineageGraph.written_since(whole, since, limit)
                assert StoredGraph(store).written_since(since, limit) == expected
        newest = StoredGraph(store).written_since(to_micros(at(4)), 10)
        assert newest[:2] == [dataset_node("fresh"), dataset_node("stg_orders")]
        assert newest[-2:] == [dataset_node("broke_out"), dataset_node("fixed_out")]  # both at 4: by id
        assert (len(newest), StoredGraph(store).written_since(to_micros(at(31.5)), 10)) == (6, [])
        assert len(LineageGraph.written_since(whole, -1, 1000)) == len(whole.datasets) - 1  # one only read
    finally:
        store.close()


def _time_range_world() -> list[dict[str, Any]]:
    """DAG ``nightly`` ran daily for 40 days, its task ``check`` skipped on the last (its not-run run has
    that DAG run's times, the latest of the DAG); one run of the ``nightly`` job also names DAG ``secret``,
    so that job is hidden from a reader of ``nightly`` only; ``dbt.model`` ran under check's day-20 run (no
    DAG of its own: check's); ``secret.load`` ran first, ``orphan`` (no DAG, no parent) last."""
    events = _check_skipped_on((40,))
    events += with_run_facets(run_pair("nightly", "nightly-secret", 30, 31), airflow_facets("secret"))
    events += with_run_facets(
        run_pair("dbt.model", "model-20", 1202, 1203), {"parent": parent_facet("nightly.check", "check-20")}
    )
    events += with_run_facets(
        run_pair("secret.load", "load-1", 5, 6), airflow_facets("secret", task_id="load")
    )
    events += run_pair("orphan", "orphan-1", 5000, 5001)
    return events


@pytest.mark.parametrize(("window", "lot"), [(RUN_WINDOW, 500), (2, 1)])
def test_the_time_range_of_a_reader_of_some_dags_spans_the_runs_they_may_see_not_run_runs_included(
    store_url: str, monkeypatch: pytest.MonkeyPatch, window: int, lot: int
) -> None:
    _with_window(monkeypatch, window)
    monkeypatch.setattr(visible_jobs, "JOB_LOT", lot)
    store = _store(store_url, _time_range_world())
    try:
        source = StoreSource(store)

        def span(*dags: str) -> dict[str, Any]:
            return LineageQueries(source).scoped(lambda dag_id: dag_id in dags).time_range()

        # check's day-40 not-run run ends with nightly-40, at 40 * 60 + 10: later than any run of check
        assert span("nightly") == {"from": at(61), "to": at(2410)}
        assert span("nightly", "secret") == {"from": at(5), "to": at(2410)}
        assert span("other") == {"from": None, "to": None}
        assert LineageQueries(source).time_range() == {"from": at(5), "to": at(5001)}
        # a job whose runs name a DAG the reader may not read is decided unread; only jobs with skip
        # records are read for their not-run runs' times
        graph = StoredGraph(store)
        visible = Visibility(graph, lambda dag_id: dag_id == "nightly").jobs(graph.all_job_ids())
        assert visible == [job_node("dbt.model"), job_node("nightly.check")]
        assert job_node("nightly") not in graph.read_job_ids()
        assert job_node("secret.load") not in graph.read_job_ids()
        fresh = StoredGraph(store)
        assert fresh.run_times(visible) == (to_micros(at(61)), to_micros(at(2410)))
        assert fresh.read_job_ids() == {job_node("nightly.check")}
        # the store's count and aggregates answer as the rules over every record read do
        whole = StoredGraph(store)
        whole.run_window = EVERY_RUN
        whole.load_all()
        every = whole.all_job_ids()
        assert StoredGraph(store).run_dag_ids(every) == LineageGraph.run_dag_ids(whole, every)
        assert LineageGraph.run_dag_ids(whole, every) == {
            job_node("nightly"): frozenset({"nightly", "secret"}),
            job_node("nightly.check"): frozenset({"nightly"}),
            job_node("secret.load"): frozenset({"secret"}),
        }
        assert StoredGraph(store).run_times(every) == LineageGraph.run_times(whole, every)
    finally:
        store.close()


def _chain(label: str, hops: int) -> list[dict[str, Any]]:
    """``hops`` jobs in a row, each reading what the one before wrote: {label}_c0 -> {label}.j0 -> ..."""
    return [
        event
        for n in range(hops)
        for event in run_pair(
            f"{label}.j{n}",
            f"{label}-{n}",
            n,
            n + 0.5,
            inputs=[ds(f"{label}_c{n}")],
            outputs=[ds(f"{label}_c{n + 1}")],
        )
    ]


def test_an_upstream_walk_reads_the_store_in_as_many_statements_however_deep_it_goes(store_url: str) -> None:
    store = _store(store_url, _chain("short", 2) + _chain("long", 8))
    statements: list[str] = []

    def count(*args: Any) -> None:
        statements.append(args[2])

    sa.event.listen(store.engine, "before_cursor_execute", count)
    try:
        queries = LineageQueries(StoreSource(store))
        found = {}
        for label, hops in (("short", 2), ("long", 8)):
            statements.clear()
            answer = queries.upstream(dataset_node(f"{label}_c{hops}"), 20)
            found[label] = (len(answer["nodes"]), len(statements))
        assert found["short"][0] == 4 and found["long"][0] == 16  # every job and dataset up the chain
        assert found["short"][1] == found["long"][1]  # read at once, not a level of the walk at a time
    finally:
        sa.event.remove(store.engine, "before_cursor_execute", count)
        store.close()
