"""Property: shuffling and repeating events changes no answer."""

from __future__ import annotations

import json
import tempfile
from pathlib import Path
from typing import Any

from graph_builders import dataset_node, job_node, varied_events
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from airflow_lineage_plus.graph import LineageQueries, open_source

BASE = varied_events()


def _answers(events: list[dict[str, Any]]) -> dict[str, Any]:
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "events.jsonl"
        path.write_text("".join(json.dumps(e) + "\n" for e in events))
        q = LineageQueries(open_source(events=path))
        return {
            "up": q.upstream(dataset_node("orders_report"), 10),
            "down": q.downstream(dataset_node("raw_orders"), 10),
            "failed": q.failed_upstream(dataset_node("orders_report"), 10),
            "impact": q.impact(dataset_node("raw_orders"), 10),
            "schema": q.schema_diff(dataset_node("stg_orders")),
            "columns": q.columns(dataset_node("fct_daily_orders"), "total_usd", 10),
            "lint": q.lint_names(),
            "lineage": q.lineage(dataset_node("stg_orders"), 5, limit=3),
            "job": {k: v for k, v in q.node_details(job_node("orders.build_fct")).items() if k != "sql"},
        }


EXPECTED = _answers(BASE)


def test_the_reference_answers_are_not_trivial() -> None:
    assert [n["latestRun"]["state"] for n in EXPECTED["failed"]["nodes"]] == ["FAILED", "ABORTED"]
    assert EXPECTED["schema"]["changes"] and EXPECTED["columns"]["upstream"]
    assert EXPECTED["job"]["runs"][0]["executionMode"] == "cached"


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    order=st.permutations(range(len(BASE))),
    repeats=st.lists(st.integers(min_value=0, max_value=len(BASE) - 1), max_size=10),
)
def test_shuffled_and_repeated_events_give_the_same_answers(order: list[int], repeats: list[int]) -> None:
    events = [BASE[i] for i in order]
    for position, index in enumerate(repeats):
        events.insert((position * 7) % (len(events) + 1), BASE[index])
    assert _answers(events) == EXPECTED
