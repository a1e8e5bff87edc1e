"""The benchmark code path on a small generated log, so the 1M-event benchmark script cannot rot."""

from __future__ import annotations

import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO / "benchmarks"))

from generate_events import generate  # noqa: E402
from graph_bench import run  # noqa: E402

from airflow_lineage_plus.graph.eventlog import EventLogSource  # noqa: E402


def test_generator_makes_an_airflow_shaped_log_the_graph_reads_without_problems(tmp_path: Path) -> None:
    log = tmp_path / "events.jsonl"
    plan = generate(log, events=5000, datasets=1000, jobs=200, seed=3)
    source = EventLogSource(log)
    assert source.problems == {} and source.events == plan.events >= 5000
    assert len(source.graph.jobs) == 200 + 10  # tasks + DAG jobs
    states = {source.graph.latest_run(j).state for j in source.graph.jobs.values()}
    assert {"COMPLETED", "FAILED", "SKIPPED"} <= states


def test_benchmark_reports_every_figure_and_picks_up_appended_events(tmp_path: Path) -> None:
    log = tmp_path / "events.jsonl"
    generate(log, events=5000, datasets=1000, jobs=200, seed=3)
    size = log.stat().st_size
    figures = run(log, samples=20, append=300)
    for key in (
        "cold_load_s",
        "cold_load_cpu_s",
        "peak_rss_mib",
        "upstream_d10_p95_ms",
        "downstream_d10_p95_ms",
        "failed_upstream_d10_p95_ms",
        "lineage_d5_limit500_p95_ms",
        "refresh_appended_ms",
        "refresh_nothing_new_ms",
    ):
        assert 0 < figures[key] < 600_000, key  # measured (a figure of 0 was never taken), and finite
    assert figures["peak_rss_mib"] > size / 2**20  # the process held at least the log it read
    # the appended DAG runs: as many events as the seeded generator writes for them, each one picked up
    expected = generate(tmp_path / "appended.jsonl", events=300, datasets=500, jobs=100, seed=1 + 99).events
    assert figures["refresh_appended_events"] == figures["appended_events"] == expected
    # only the appended bytes were read, and the log was left as it was
    assert figures["refresh_read_bytes"] == figures["appended_bytes"] > 0
    assert log.stat().st_size == size
