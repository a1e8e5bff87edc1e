"""A log folded in parts (in worker processes) and merged gives the graph one sequential fold gives."""

from __future__ import annotations

import itertools
import json
import multiprocessing
import os
import sys
import threading
from pathlib import Path
from typing import Any, BinaryIO

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from airflow_lineage_plus.graph import LineageQueries, SourceUnavailable, state
from airflow_lineage_plus.graph import wire as w
from airflow_lineage_plus.graph.eventlog import EventLogSource, idle_cpus
from airflow_lineage_plus.graph.model import _RUN_STATE, LineageGraph
from tests.support.graph_builders import dataset_node, job_node, merge_into, run_id, tie_events, varied_events

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO / "benchmarks"))

from generate_events import generate  # noqa: E402

LINES = [json.dumps(e).encode() for e in varied_events() + tie_events()]


def _fold(lines: list[bytes], indices: range) -> LineageGraph:
    graph = LineageGraph()
    for index in indices:
        decoded, micros, _ = w.decode(lines[index])
        graph.apply(decoded, micros, index)
    return graph


def _fingerprint(graph: LineageGraph) -> dict[str, Any]:
    """Everything the graph knows (caches aside), in a form that compares equal for equal graphs."""

    def sets(mapping: dict[Any, set[Any]]) -> dict[Any, list[Any]]:
        return {key: sorted(value) for key, value in mapping.items() if value}

    return {
        "jobs": {
            key: (
                j.owners,
                j.owners_key,
                j.ref,
                j.ref_time,
                sorted(j.sources),
                sorted(j.targets),
                [r.run_id for r in j.runs],
                list(j.refs),
                (j.slo_minutes, j.slo_key),
            )
            for key, j in graph.jobs.items()
        },
        "runs": {key: tuple(getattr(r, name) for name in _RUN_STATE) for key, r in graph.runs.items()},
        "datasets": {
            key: (
                sorted(d.schemas.items()),
                d.fields,
                d.fields_key,
                d.owners,
                d.owners_key,
                d.columns,
                d.columns_key,
                (d.ref, d.ref_time, d.write_ref, d.write_time),
                d.dataset_refs,
            )
            for key, d in graph.datasets.items()
        },
        "succ": sets(graph.succ),
        "pred": sets(graph.pred),
        "children": sets(graph.children),
        "edge_first": graph.edge_first,
        "column_readers_ever": sets(graph.column_readers_ever),
        "skips": {key: (s.key, s.job_ids, s.upstream_failed) for key, s in graph.dag_run_skips.items()},
        "skipped_by": sets(graph.skipped_by),
        "column_readers": sets(graph.column_readers),
        "declared": {key: j.declared for key, j in graph.jobs.items() if j.declared is not None},
        "declared_succ": sets(graph.declared_succ),
        "declared_pred": sets(graph.declared_pred),
        "version": graph.version,
        "times": (graph.first_time, graph.last_time),
    }


def test_the_tricky_events_exercise_the_tie_rules() -> None:
    graph = _fold(LINES, range(len(LINES)))
    skippy = graph.runs[run_id("skip-1")]
    assert skippy.state == "SKIPPED" and skippy.skip_reason == "r-a"
    assert graph.runs[run_id("err-1")].error == "b"
    assert graph.datasets[dataset_node("tie_ds")].fields == (("a", "INT", None),)
    assert graph.dag_run_skips[run_id("dag-1")].job_ids == (job_node("orders.x"), job_node("orders.y"))
    assert graph.dag_run_skips[run_id("dag-1")].upstream_failed == (job_node("orders.y"),)
    after = graph.runs[run_id("after-1")]
    assert (after.state, after.dag_id, after.parent_job_id) == (
        "UPSTREAM_FAILED",
        "orders",
        job_node("orders"),
    )
    # a declaration never wins over a run's facts, even a later one
    assert graph.datasets[dataset_node("tie_ds")].owners == ("team:b",)
    assert graph.declared_succ[dataset_node("stg_orders")] == {job_node("orders.planned")}
    # the earlier declaration's input is remembered (an earlier time may show it) but not declared now
    assert graph.declared_succ[dataset_node("fx_rates")] == {job_node("orders.planned")}
    assert graph.neighbours(dataset_node("fx_rates"), upstream=False) == []
    assert graph.neighbours(job_node("orders.planned"), upstream=True) == [
        (dataset_node("stg_orders"), "declared")
    ]
    assert graph.datasets[dataset_node("plan")].fields == (("b", "INT", None),)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    order=st.permutations(range(len(LINES))),
    repeats=st.lists(st.integers(min_value=0, max_value=len(LINES) - 1), max_size=6),
    cuts=st.lists(st.integers(min_value=0, max_value=len(LINES) + 6), min_size=1, max_size=3),
)
def test_folding_parts_and_merging_them_equals_one_fold(
    order: list[int], repeats: list[int], cuts: list[int]
) -> None:
    lines = [LINES[i] for i in order] + [LINES[i] for i in repeats]
    points = [0, *sorted(min(c, len(lines)) for c in cuts), len(lines)]
    parts = [_fold(lines, range(begin, end)) for begin, end in itertools.pairwise(points)]
    merged = parts[0]
    for part in parts[1:]:
        merge_into(merged, part)
    assert _fingerprint(merged) == _fingerprint(_fold(lines, range(len(lines))))


def _generated_log(path: Path) -> Path:
    generate(path, events=4000, datasets=800, jobs=160, seed=5)
    with open(path, "ab") as handle:  # bad lines in the last part, and a line still being written
        handle.write(b"not json\n" + b'{"eventTime": "2026-01-01T00:00:00Z"}\n' + b'{"eventType": "STA')
    return path


@pytest.mark.single_threaded
def test_a_log_folded_by_worker_processes_equals_the_sequential_load(tmp_path: Path) -> None:
    log = _generated_log(tmp_path / "events.jsonl")
    sequential = EventLogSource(log, workers=1)
    for workers in (2, 3):
        parallel = EventLogSource(log, workers=workers, parallel_min_bytes=0)
        assert parallel.worker_parts == workers - 1
        assert _fingerprint(parallel.graph) == _fingerprint(sequential.graph)
        assert (parallel.events, parallel.problems, parallel.offset) == (
            sequential.events,
            sequential.problems,
            sequential.offset,
        )
        assert parallel.problems == {"malformed": 1, "invalid": 1}
        target = sorted(sequential.graph.datasets)[7]
        for query in ("upstream", "downstream", "impact", "failed_upstream"):
            assert getattr(LineageQueries(parallel), query)(target, 10) == getattr(
                LineageQueries(sequential), query
            )(target, 10)


@pytest.mark.single_threaded
def test_a_worker_part_exported_in_many_records_equals_the_sequential_load(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    log = _generated_log(tmp_path / "events.jsonl")
    sequential = EventLogSource(log, workers=1)
    monkeypatch.setattr(state, "RUNS_PER_RECORD", 7)  # ~140 records of runs (the worker is forked after)
    parallel = EventLogSource(log, workers=2, parallel_min_bytes=0)
    assert parallel.worker_parts == 1
    assert len(parallel.graph.runs) == len(sequential.graph.runs) > 7 * 100
    assert _fingerprint(parallel.graph) == _fingerprint(sequential.graph)


class _WorkerThatDies(EventLogSource):
    def _fold_part(self, start: int, stop: int, sender: Any, spool: BinaryIO) -> None:
        sender.close()  # exits without sending its part


@pytest.mark.single_threaded
def test_a_part_whose_worker_fails_is_read_by_the_parent(tmp_path: Path) -> None:
    log = _generated_log(tmp_path / "events.jsonl")
    sequential = EventLogSource(log, workers=1)
    parallel = _WorkerThatDies(log, workers=2, parallel_min_bytes=0)
    assert parallel.worker_parts == 0 and parallel.workers == 2
    assert _fingerprint(parallel.graph) == _fingerprint(sequential.graph)
    assert (parallel.events, parallel.problems, parallel.offset) == (
        sequential.events,
        sequential.problems,
        sequential.offset,
    )


@pytest.mark.single_threaded
def test_small_reads_and_appends_stay_in_one_process(tmp_path: Path) -> None:
    log = _generated_log(tmp_path / "events.jsonl")
    size = log.stat().st_size
    source = EventLogSource(log, workers=2, parallel_min_bytes=size + 1)
    assert source.worker_parts == 0 and source.events > 4000
    with open(log, "ab") as handle:
        handle.write(b'RT"}\n' + log.read_bytes()[: size // 2].rsplit(b"\n", 1)[0] + b"\n")
    source.parallel_min_bytes = size // 2 + 100  # the appended bytes are fewer
    assert source.refresh() > 1000 and source.worker_parts == 0
    assert source.problems == {"malformed": 1, "invalid": 2}


def test_threads_running_keep_the_load_in_one_process(tmp_path: Path) -> None:
    log = _generated_log(tmp_path / "events.jsonl")
    stop = threading.Event()
    other = threading.Thread(target=stop.wait)
    other.start()
    try:
        source = EventLogSource(log, workers=2, parallel_min_bytes=0)
    finally:
        stop.set()
        other.join()
    assert source.worker_parts == 0 and source.events > 4000


def test_idle_cpus_is_the_idle_share_of_the_ticks_between_two_readings_times_the_cpus(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from airflow_lineage_plus.graph import eventlog

    cpus = os.cpu_count() or 1
    readings = iter([(1000, 400), (1200, 450)])  # (all ticks, idle + iowait ticks): 50 of 200 idle
    monkeypatch.setattr(eventlog, "_cpu_ticks", lambda: next(readings))
    assert idle_cpus(0.0) == cpus * 50 / 200
    monkeypatch.setattr(eventlog, "_cpu_ticks", lambda: (1000, 400))  # no tick between the readings
    assert idle_cpus(0.0) == 0.0


def test_idle_cpus_without_proc_stat_is_the_cpus_less_the_load_average(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from airflow_lineage_plus.graph import eventlog

    def unreadable() -> tuple[int, int]:
        raise OSError("no /proc/stat")

    monkeypatch.setattr(eventlog, "_cpu_ticks", unreadable)
    monkeypatch.setattr(eventlog.os, "getloadavg", lambda: (0.75, 0.5, 0.25))
    assert idle_cpus(0.0) == (os.cpu_count() or 1) - 0.75


class _ReaderThatFailsHere(EventLogSource):
    def _read_events(self, start: int, stop: int | None = None) -> int:
        if os.getpid() == PARENT_PID and start == 0:
            raise SourceUnavailable("the disk went away")
        return super()._read_events(start, stop)


PARENT_PID = os.getpid()


@pytest.mark.single_threaded
def test_an_error_while_folding_here_leaves_no_worker_behind(tmp_path: Path) -> None:
    log = _generated_log(tmp_path / "events.jsonl")
    with pytest.raises(SourceUnavailable, match="the disk went away"):
        _ReaderThatFailsHere(log, workers=2, parallel_min_bytes=0)
    assert multiprocessing.active_children() == []
