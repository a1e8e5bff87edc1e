"""The event-log source: bad input is skipped or trimmed and counted; appended bytes are read as they come."""

from __future__ import annotations

import gc
import json
import os
import subprocess
import sys
import threading
from pathlib import Path

import pytest

from airflow_lineage_plus.graph import LineageQueries, SourceUnavailable, open_source
from airflow_lineage_plus.graph.eventlog import EventLogSource
from tests.support.graph_builders import dataset_node, ds, job_node, orders_pipeline, run_pair, write_log
from tests.support.marquez_spec import example_files


def test_every_marquez_example_event_is_accepted(tmp_path: Path) -> None:
    files = example_files("open_lineage__", "apples__")
    assert len(files) == 23
    source = EventLogSource(write_log(tmp_path / "e.jsonl", (json.loads(f.read_text()) for f in files)))
    assert source.problems == {}
    assert source.events == len(files)
    queries = LineageQueries(source)
    pie = queries.upstream(dataset_node("apple.pie", "grandmas.kitchen"), 10)
    assert job_node("gather_apples", "grandmas.kitchen") in {n["id"] for n in pie["nodes"]}
    unicode_job = job_node("myjob.buggy_task🕷", "my-scheduler-namespace")
    assert queries.downstream(unicode_job, 1)["target"]["id"] == unicode_job
    # the dataset-only event keeps its schema
    assert (
        queries.node_details(dataset_node("my-dataset-name", "my-dataset-namespace"))["fields"][0]["name"]
        == "col_a"
    )


def test_bad_lines_are_skipped_and_counted_never_a_crash(tmp_path: Path) -> None:
    good = [json.dumps(e) for e in orders_pipeline()]
    bad_facet = run_pair("odd.job", "odd", 0, 1, outputs=[ds("odd_out")])
    bad_facet[1]["outputs"][0]["facets"] = {
        "schema": {"fields": "not a list"},
        "ownership": 5,
        "unknownFacet": {"x": [1, 2]},
    }
    bad_facet[1]["run"]["facets"]["errorMessage"] = ["not", "an", "object"]
    lines = [
        *good[:3],
        "this is not json",
        '{"eventType": "START", "eventTime": "2026-03-01T00:00:00Z", "run": {"runId": "x"}, "job": {"namesp',
        "[1, 2, 3]",
        json.dumps(
            {"eventType": "START", "run": {"runId": "no-time"}, "job": {"namespace": "a", "name": "b"}}
        ),
        json.dumps(
            {
                "eventType": "START",
                "eventTime": "yesterday",
                "run": {"runId": "r"},
                "job": {"namespace": "a", "name": "b"},
            }
        ),
        json.dumps({"eventType": "START", "eventTime": "2026-03-01T00:00:00Z", "run": {"runId": "r"}}),
        "",
        *(json.dumps(e) for e in bad_facet),
        *good[3:],
    ]
    path = tmp_path / "e.jsonl"
    path.write_text("\n".join(lines) + "\n")
    source = EventLogSource(path)
    assert source.problems == {"malformed": 3, "invalid": 3, "salvaged": 1}
    queries = LineageQueries(source)
    assert queries.failed_upstream(dataset_node("fct_daily_orders"))["nodes"][0]["name"] == "orders.build_fct"
    odd = queries.upstream(dataset_node("odd_out"), 1)
    assert odd["nodes"][0]["latestRun"]["state"] == "COMPLETED" and odd["target"]["fields"] == []


def test_very_large_events_are_kept_or_skipped_by_size_budget(tmp_path: Path) -> None:
    wide = ds("wide", fields=[(f"c{i}", "VARCHAR") for i in range(20000)])
    path = write_log(tmp_path / "e.jsonl", run_pair("big.job", "b", 0, 1, outputs=[wide]))
    assert path.stat().st_size > 500_000
    kept = LineageQueries(open_source(events=path))
    assert len(kept.upstream(dataset_node("wide"), 1)["target"]["fields"]) == 20000
    small_budget = EventLogSource(path, max_event_bytes=100_000)
    assert small_budget.problems == {"too_large": 1}
    assert small_budget.graph.datasets[dataset_node("wide")].fields == ()


def test_refresh_reads_only_appended_events_and_waits_for_a_complete_line(tmp_path: Path) -> None:
    events = orders_pipeline()
    path = write_log(tmp_path / "e.jsonl", events[:6])
    source = EventLogSource(path)
    queries = LineageQueries(source)
    assert queries.failed_upstream(dataset_node("fct_daily_orders"))["nodes"] == []
    assert source.refresh() == 0
    rest = "".join(json.dumps(e) + "\n" for e in events[6:])
    with open(path, "a") as handle:
        handle.write(rest[:-40])  # the last line is still being written
    picked = source.refresh()
    assert picked == len(events) - 6 - 1 and source.problems == {}
    with open(path, "a") as handle:
        handle.write(rest[-40:])
    assert source.refresh() == 1
    assert source.offset == path.stat().st_size
    assert queries.failed_upstream(dataset_node("fct_daily_orders"))["nodes"][0]["name"] == "orders.build_fct"


def test_refresh_reloads_a_truncated_or_replaced_file(tmp_path: Path) -> None:
    path = write_log(tmp_path / "e.jsonl", orders_pipeline())
    source = EventLogSource(path)
    replacement = write_log(tmp_path / "new.jsonl", run_pair("other.job", "o", 0, 1, outputs=[ds("other")]))
    os.replace(replacement, path)
    assert source.refresh() == 2
    assert set(source.graph.jobs) == {job_node("other.job")}


def test_a_refresh_waits_until_the_questions_of_one_view_have_read_their_snapshot(tmp_path: Path) -> None:
    log = write_log(tmp_path / "events.jsonl", orders_pipeline())
    source = EventLogSource(log)
    try:
        queries = LineageQueries(source)
        refreshed = threading.Event()
        with source.one_view():
            before = queries.search("o", 100)
            with open(log, "w") as handle:  # replaced: the refresh starts a new store
                handle.write(json.dumps(run_pair("other", "o-1", 1, 2)[0]) + "\n")
            worker = threading.Thread(target=lambda: (source.refresh(), refreshed.set()))
            worker.start()
            assert not refreshed.wait(1.0)  # held off while the view is open
            assert queries.search("o", 100) == before  # the same snapshot, the store still there
        worker.join(timeout=60)
        assert refreshed.is_set()
        assert queries.search("o", 100) != before
    finally:
        source.close()


def _replaced_and_dropped(path: Path, replacement: Path) -> tuple[Path, Path]:
    """The private store directories of a source before and after its log was replaced; the source
    is then dropped without being closed (made here, so no frame of the test keeps it)."""
    source = EventLogSource(path)
    first = Path(source._directory or "")
    os.replace(replacement, path)
    assert source.refresh() == 2
    return first, Path(source._directory or "")


def test_the_private_store_is_removed_on_close_on_replacement_when_dropped_and_at_exit(
    tmp_path: Path,
) -> None:
    path = write_log(tmp_path / "e.jsonl", orders_pipeline())
    closed = EventLogSource(path)
    directory = Path(closed._directory or "")
    assert (directory / "folded.db").is_file()
    closed.close()
    assert not directory.exists()

    replacement = write_log(tmp_path / "new.jsonl", run_pair("other.job", "o", 0, 1))
    first, second = _replaced_and_dropped(path, replacement)
    assert not first.exists()
    gc.collect()  # a source is in reference cycles (its run reader holds its bound method)
    assert not second.exists()

    script = (
        "import sys; from airflow_lineage_plus.graph.eventlog import EventLogSource; "
        "kept = EventLogSource(sys.argv[1]); print(kept._directory)"
    )
    exited = subprocess.run(
        [sys.executable, "-c", script, str(path)], capture_output=True, text=True, timeout=60, check=True
    )
    assert not Path(exited.stdout.strip()).exists()


FORK_THEN_EXIT = """
import os, sys
from airflow_lineage_plus.graph.eventlog import EventLogSource
source = EventLogSource(sys.argv[1])
child = os.fork()
if child == 0:
    sys.exit(0)  # through the interpreter: its finalizers run
os.waitpid(child, 0)
print(os.path.isdir(source._directory), source._directory)
"""


def test_a_forked_child_exiting_leaves_its_parents_private_store(tmp_path: Path) -> None:
    path = write_log(tmp_path / "e.jsonl", orders_pipeline())
    done = subprocess.run(
        [sys.executable, "-c", FORK_THEN_EXIT, str(path)],
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    )
    present, directory = done.stdout.split()
    assert present == "True"  # while the parent ran
    assert not Path(directory).exists()  # and removed as the parent exited


def test_missing_event_log_is_source_unavailable(tmp_path: Path) -> None:
    with pytest.raises(SourceUnavailable):
        open_source(events=tmp_path / "missing.jsonl")


def test_refresh_in_another_thread_while_querying_picks_up_every_new_run(tmp_path: Path) -> None:
    import threading

    path = write_log(tmp_path / "e.jsonl", orders_pipeline())
    source = EventLogSource(path)
    queries = LineageQueries(source)
    errors: list[BaseException] = []
    stop = threading.Event()

    def append_and_refresh() -> None:
        try:
            for i in range(200):
                with open(path, "a") as handle:
                    for item in run_pair(
                        f"extra.job_{i}",
                        f"x{i}",
                        20 + i,
                        21 + i,
                        inputs=[ds("raw_orders")],
                        outputs=[ds(f"extra_{i}")],
                    ):
                        handle.write(json.dumps(item) + "\n")
                source.refresh()
        except BaseException as exc:  # pragma: no cover - reported below
            errors.append(exc)
        finally:
            stop.set()

    writer = threading.Thread(target=append_and_refresh)
    writer.start()
    while not stop.is_set():
        answer = queries.impact(dataset_node("raw_orders"), 10)
        assert all(n["id"] != answer["target"]["id"] for n in answer["nodes"])
    writer.join()
    assert errors == []
    assert len(queries.impact(dataset_node("raw_orders"), 1)["nodes"]) == 1 + 200


def test_a_log_that_does_not_exist_yet_is_read_once_it_appears_when_missing_is_ok(tmp_path: Path) -> None:
    path = tmp_path / "later.jsonl"
    source = EventLogSource(path, missing_ok=True)
    assert source.events == 0 and source.refresh() == 0
    write_log(path, orders_pipeline())
    assert source.refresh() == len(orders_pipeline())
    assert LineageQueries(source).failed_upstream(dataset_node("fct_daily_orders"))["nodes"][0]["depth"] == 1
    path.unlink()
    assert source.refresh() == 0 and source.graph.jobs == {}


@pytest.mark.parametrize("chunk", [4096, 5000, 3 * 4096])
def test_small_read_chunks_read_lines_across_and_longer_than_a_chunk(tmp_path: Path, chunk: int) -> None:
    wide = ds("wide", fields=[(f"column_{i}", "VARCHAR") for i in range(400)])  # one line > 8 KiB
    events = orders_pipeline() + run_pair("wide.job", "w", 30, 31, outputs=[wide])
    path = write_log(tmp_path / "e.jsonl", events)
    source = EventLogSource(path, chunk_bytes=chunk)
    assert source.problems == {} and source.events == len(events)
    assert source.offset == path.stat().st_size
    assert len(source.graph.datasets[dataset_node("wide")].fields) == 400
    reference = LineageQueries(EventLogSource(path))
    assert LineageQueries(source).upstream(dataset_node("orders_report")) == reference.upstream(
        dataset_node("orders_report")
    )
    with open(path, "a") as handle:
        handle.write(json.dumps(events[-1])[:5000])  # an incomplete long line at the end
    assert source.refresh() == 0 and source.offset == len(path.read_bytes()) - 5000


def test_an_output_of_the_same_name_in_another_namespace_is_a_new_edge(tmp_path: Path) -> None:
    """Consecutive runs' output lists are compared by dataset, namespace included (a list naming the same
    datasets as the last is not linked again)."""
    first = ds("orders", namespace="postgres://old", fields=[("id", "INTEGER")])
    moved = ds("orders", namespace="postgres://new", fields=[("id", "INTEGER")])
    events = run_pair("load", "r1", 1, 2, outputs=[first]) + run_pair("load", "r2", 3, 4, outputs=[moved])
    graph = EventLogSource(write_log(tmp_path / "events.jsonl", events)).graph
    assert sorted(graph.succ[job_node("load")]) == [
        dataset_node("orders", "postgres://new"),
        dataset_node("orders", "postgres://old"),
    ]
    assert graph.current_io(graph.jobs[job_node("load")]) == {
        (job_node("load"), dataset_node("orders", "postgres://new"))
    }
