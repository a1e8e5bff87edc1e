"""Property: shuffling and repeating events changes no answer."""

from __future__ import annotations

import json
import tempfile
from pathlib import Path
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from airflow_lineage_plus.graph import LineageQueries, open_source
from tests.support.graph_builders import dataset_node, ds, job_node, run_pair, varied_events, write_log

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


def _mart(fields: list[tuple[str, str]], owner: str, source: str) -> dict[str, Any]:
    return ds("mart", fields=fields, owners=[owner], columns={"total": [(source, "amount", "SUM")]})


def _mart_answers(events: list[dict[str, Any]]) -> dict[str, Any]:
    with tempfile.TemporaryDirectory() as tmp:
        q = LineageQueries(open_source(events=write_log(Path(tmp) / "events.jsonl", events)))
        details = q.node_details(dataset_node("mart"))
        return {
            "columns": q.columns(dataset_node("mart"), "total", 5),
            "schema": q.schema_diff(dataset_node("mart")),
            "owners": details.get("owners"),
            "fields": details.get("fields"),
        }


def test_facets_seen_again_later_win_over_newer_ones_that_arrived_in_between() -> None:
    """The facets a dataset had last are folded again without comparisons when they come back later
    than anything seen: they must still replace a newer lineage that an older event displaced as "last"."""
    old = _mart([("total", "INTEGER")], "team:old", "orders")
    new = _mart([("total", "DECIMAL(12,2)"), ("day", "DATE")], "team:new", "payments")
    runs = [
        run_pair("build_mart", f"r{n}", minute, minute + 1, outputs=[mart])
        for n, minute, mart in ((1, 10, old), (2, 20, new), (3, 30, old))
    ]
    in_order = _mart_answers(runs[0] + runs[1] + runs[2])
    shuffled = _mart_answers(runs[1] + runs[0] + runs[2])  # old comes in after new, then old again, later
    assert shuffled == in_order
    assert [c["name"] for c in in_order["columns"]["upstream"]] == ["orders"]
    assert in_order["owners"] == ["team:old"] and [f["type"] for f in in_order["fields"]] == ["INTEGER"]
