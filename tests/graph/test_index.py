"""The index of an event log: opened instead of the log, rebuilt when it no longer fits the log, kept up
to date from appended bytes, safe with readers in other processes while one writes."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

from airflow_lineage_plus.graph import LineageQueries, open_source
from airflow_lineage_plus.graph.eventlog import EventLogSource
from airflow_lineage_plus.graph.index import IndexedEventLog, index_path_for, open_valid
from airflow_lineage_plus.graph.indexed import IndexedGraph
from airflow_lineage_plus.graph.snapshot import MAGIC
from tests.support.graph_builders import (
    dataset_node,
    ds,
    job_node,
    orders_pipeline,
    retirement_events,
    run_pair,
    write_log,
)

EVENTS = orders_pipeline() + retirement_events()
MART = dataset_node("fct_daily_orders")


def _answers(queries: LineageQueries) -> list[dict]:
    return [
        queries.upstream(dataset_node("orders_report"), 10),
        queries.failed_upstream(dataset_node("orders_report"), 10),
        queries.impact(dataset_node("raw_orders"), 10),
        queries.upstream(dataset_node("loaded"), 10, include_retired=True),
        queries.columns(MART, "total_usd", 10),
        queries.node_details(job_node("orders.build_fct")),
        queries.search("orders", 20),
    ]


def test_a_new_reader_answers_from_the_index_reading_only_the_nodes_it_needs(tmp_path: Path) -> None:
    log = write_log(tmp_path / "events.jsonl", EVENTS)
    expected = _answers(LineageQueries(EventLogSource(log)))
    built = IndexedEventLog(log, build="here")
    assert index_path_for(log).is_file() and isinstance(built.graph, IndexedGraph)
    reader = IndexedEventLog(log)
    assert reader.offset == log.stat().st_size and reader.events == len(EVENTS)
    graph = reader.graph
    assert isinstance(graph, IndexedGraph) and graph.read_nodes == set()  # opened: nothing read yet
    LineageQueries(reader).upstream(dataset_node("fct_daily_orders"), 2)
    assert 0 < len(graph.read_nodes) < len(graph.node_ids())
    assert _answers(LineageQueries(reader)) == expected


def test_the_index_is_rebuilt_when_missing_of_another_format_or_for_another_log(tmp_path: Path) -> None:
    log = write_log(tmp_path / "events.jsonl", EVENTS)
    index = index_path_for(log)
    IndexedEventLog(log, build="here")
    written = index.stat().st_mtime_ns
    assert open_valid(index, log) is not None
    data = bytearray(index.read_bytes())
    data[len(MAGIC)] += 1  # another format version
    index.write_bytes(bytes(data))
    assert open_valid(index, log) is None
    IndexedEventLog(log, build="here")
    assert open_valid(index, log) is not None and index.stat().st_mtime_ns != written
    # the log rotated in place (copytruncate) and written again: same inode, other first bytes
    with open(log, "r+") as handle:
        handle.truncate(0)
    write_log(log, run_pair("new.job", "n", 0, 1, outputs=[ds("fresh")]) * 30)
    assert open_valid(index, log) is None
    source = IndexedEventLog(log, build="here")
    assert source.graph.node_ids() and set(source.graph.node_ids("job:")) == {job_node("new.job")}
    os.replace(write_log(tmp_path / "other.jsonl", EVENTS), log)  # replaced by another file
    assert open_valid(index, log) is None


def test_appended_events_are_folded_on_top_and_a_rewrite_keeps_every_answer(tmp_path: Path) -> None:
    log = write_log(tmp_path / "events.jsonl", EVENTS[:12])
    reader = IndexedEventLog(log, build="here", rewrite_bytes=10**9)
    with open(log, "a") as handle:
        handle.write("".join(json.dumps(e) + "\n" for e in EVENTS[12:]))
    assert reader.refresh() == len(EVENTS) - 12
    expected = _answers(LineageQueries(EventLogSource(log)))
    assert _answers(LineageQueries(reader)) == expected
    index = index_path_for(log)
    before = Snapshot_offset(index)
    assert reader.rewrite() is True and Snapshot_offset(index) == log.stat().st_size > before
    assert reader.base_offset == reader.offset  # reopened: the appended runs no longer held apart
    assert _answers(LineageQueries(reader)) == expected
    assert _answers(LineageQueries(IndexedEventLog(log))) == expected
    assert reader.rewrite() is False  # nothing new: the index is up to date


def Snapshot_offset(index: Path) -> int:  # noqa: N802 - reads like the header field it returns
    from airflow_lineage_plus.graph.snapshot import Snapshot

    snapshot = Snapshot(index)
    try:
        return int(snapshot.header["log"]["offset"])
    finally:
        snapshot.close()


def test_a_reader_rewrites_the_index_once_enough_was_appended(tmp_path: Path) -> None:
    log = write_log(tmp_path / "events.jsonl", EVENTS)
    size = log.stat().st_size
    reader = IndexedEventLog(log, build="here", rewrite_bytes=size // 2)
    with open(log, "a") as handle:
        for i in range(40):
            handle.write(
                "".join(json.dumps(e) + "\n" for e in run_pair(f"more.job_{i}", f"m{i}", 90 + i, 91 + i))
            )
    reader.refresh()
    assert Snapshot_offset(index_path_for(log)) == log.stat().st_size == reader.base_offset


READER = textwrap.dedent(
    """
    import sys, time
    from airflow_lineage_plus.graph import LineageQueries
    from airflow_lineage_plus.graph.index import IndexedEventLog
    log, seen = sys.argv[1], 0
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        source = IndexedEventLog(log)
        answer = LineageQueries(source).downstream("dataset:warehouse:raw_orders", 1)
        seen = max(seen, len(answer["nodes"]))
        source.close()
        if seen == int(sys.argv[2]):
            break
    print(seen)
    """
)


def test_readers_in_other_processes_keep_answering_while_one_writer_appends_and_rewrites(
    tmp_path: Path,
) -> None:
    log = write_log(tmp_path / "events.jsonl", orders_pipeline())
    writer = IndexedEventLog(log, build="here", rewrite_bytes=1)  # rewrites after every append
    rounds = 12
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)}
    readers = [
        subprocess.Popen(
            [sys.executable, "-c", READER, str(log), str(1 + rounds)],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            env=env,
        )
        for _ in range(3)
    ]
    try:
        for i in range(rounds):
            with open(log, "a") as handle:
                for item in run_pair(f"extra.job_{i}", f"x{i}", 40 + i, 41 + i, inputs=[ds("raw_orders")]):
                    handle.write(json.dumps(item) + "\n")
            writer.refresh()
            time.sleep(0.05)
        outputs = [reader.communicate(timeout=120) for reader in readers]
    finally:
        for reader in readers:
            reader.kill()
    assert [(reader.returncode, err) for reader, (_, err) in zip(readers, outputs, strict=True)] == [
        (0, "")
    ] * 3
    assert [int(out) for out, _ in outputs] == [1 + rounds] * 3  # each saw the last rewrite
    assert not list(tmp_path.glob(".*.tmp"))  # no temporary file left behind


def test_open_source_with_an_index_builds_it_in_a_process_of_its_own(tmp_path: Path) -> None:
    log = write_log(tmp_path / "events.jsonl", EVENTS)
    source = open_source(events=log, index=True)
    assert isinstance(source, IndexedEventLog) and index_path_for(log).is_file()
    assert LineageQueries(source).failed_upstream(MART)["nodes"][0]["name"] == "orders.build_fct"


def test_a_build_process_ends_once_the_index_is_written_without_freeing_its_graph(tmp_path: Path) -> None:
    log = write_log(tmp_path / "events.jsonl", EVENTS)
    script = textwrap.dedent(
        f"""
        import atexit, sys
        from airflow_lineage_plus.graph import index
        atexit.register(print, "torn down")  # runs only when the process ends the ordinary way
        code = index.main([{str(log)!r}], exit_when_built=True)
        print("returned", code)
        """
    )
    built = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=120)
    assert (built.returncode, built.stdout, built.stderr) == (0, "", "")
    assert open_valid(index_path_for(log), log) is not None
    again = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=120)
    assert (again.returncode, again.stdout) == (0, "returned 0\ntorn down\n")  # nothing built: returns


def test_an_index_goes_where_asked_and_where_none_can_be_written_the_log_is_read_whole(
    tmp_path: Path,
) -> None:
    log = write_log(tmp_path / "events.jsonl", EVENTS)
    index = tmp_path / "cache" / "my.lpindex"
    index.parent.mkdir()
    source = open_source(events=log, index=index)
    assert isinstance(source, IndexedEventLog) and index.is_file()
    nowhere = open_source(events=log, index=tmp_path / "no-such-directory" / "x.lpindex")
    assert type(nowhere) is EventLogSource
    assert LineageQueries(nowhere).failed_upstream(MART)["nodes"][0]["name"] == "orders.build_fct"


def test_events_past_4_gib_of_log_keep_their_place_in_the_index(tmp_path: Path) -> None:
    from airflow_lineage_plus.graph import logfile
    from airflow_lineage_plus.graph.indexed import save
    from airflow_lineage_plus.graph.snapshot import Snapshot

    log = write_log(tmp_path / "events.jsonl", EVENTS)
    source = EventLogSource(log)
    far = logfile.ref_of(200 * 2**30, logfile.MAX_LINE)  # 200 GiB into a log, the longest event kept
    assert logfile.split_ref(far) == (200 * 2**30, logfile.MAX_LINE)
    job = source.graph.jobs[job_node("orders.build_fct")]
    job.refs.append(far)
    index = tmp_path / "far.lpindex"
    save(index, source.graph, {"log": {}, "events": 0, "problems": {}})
    snapshot = Snapshot(index)
    assert snapshot.refs(snapshot.position(job.id))[-1] == far
    with pytest.raises(ValueError, match="rotate it"):
        logfile.check_size(log, logfile.MAX_LOG_BYTES)
