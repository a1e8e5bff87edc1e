"""Declared lineage (JobEvents, no run) in the graph: declared edges until the job runs, then the run wins."""

from __future__ import annotations

import random
from pathlib import Path
from typing import Any

from airflow_lineage_plus.graph import LineageQueries, open_source
from tests.support.graph_builders import dataset_node, ds, facet, job_event, job_node, run_pair, write_log

RAW, STG, FCT, FX = (dataset_node(n) for n in ("raw_orders", "stg_orders", "fct_daily_orders", "fx_rates"))
LOAD, BUILD = job_node("orders.load_orders"), job_node("orders.build_fct")


def _declared_pipeline() -> list[dict[str, Any]]:
    """load_orders ran (raw -> stg); build_fct is declared only (stg + fx -> fct), declared twice."""
    return [
        *run_pair(
            "orders.load_orders", "load-1", 0, 1, inputs=[ds("raw_orders")], outputs=[ds("stg_orders")]
        ),
        # an older declaration of load_orders that its run replaced: it read fx_rates too
        job_event(
            "orders.load_orders", 5, inputs=[ds("raw_orders"), ds("fx_rates")], outputs=[ds("stg_orders")]
        ),
        job_event(
            "orders.build_fct",
            2,
            inputs=[ds("stg_orders")],
            outputs=[ds("fct_daily_orders", fields=[("day", "DATE"), ("total", "DECIMAL")])],
        ),
        job_event(
            "orders.build_fct",
            3,
            inputs=[ds("stg_orders"), ds("fx_rates")],
            outputs=[
                ds(
                    "fct_daily_orders",
                    fields=[("day", "DATE"), ("total_usd", "DECIMAL")],
                    owners=["team:finance"],
                    columns={"total_usd": [("stg_orders", "amount", "AGGREGATION")]},
                )
            ],
            job_facets={"ownership": facet(owners=[{"name": "team:finance"}])},
        ),
    ]


def _queries(tmp_path: Path, events: list[dict[str, Any]]) -> LineageQueries:
    return LineageQueries(open_source(events=write_log(tmp_path / "events.jsonl", events)))


def _edges(answer: dict[str, Any]) -> set[tuple[str, str, str]]:
    return {(e["origin"], e["destination"], e["state"]) for e in answer["edges"]}


def test_a_job_that_never_ran_shows_its_latest_declaration_as_declared_edges(tmp_path: Path) -> None:
    queries = _queries(tmp_path, _declared_pipeline())
    answer = queries.upstream(FCT, 4)
    assert _edges(answer) == {
        (BUILD, FCT, "declared"),
        (STG, BUILD, "declared"),
        (FX, BUILD, "declared"),
        (LOAD, STG, "current"),
        (RAW, LOAD, "current"),
    }
    build = next(n for n in answer["nodes"] if n["id"] == BUILD)
    assert build["declared"] is True and build["latestRun"] is None
    assert "declared" not in next(n for n in answer["nodes"] if n["id"] == LOAD)
    # the declared output's schema, owners and column lineage are known before any run
    assert answer["target"]["fields"] == [
        {"name": "day", "type": "DATE"},
        {"name": "total_usd", "type": "DECIMAL"},
    ]
    assert queries.impact(STG, 3)["owners"] == ["team:finance"]
    assert queries.columns(FCT, "total_usd", 1)["upstream"][0]["column"] == "amount"
    details = queries.node_details(BUILD)
    assert (details["declared"], details["inputs"], details["outputs"]) == (True, [FX, STG], [FCT])


def test_without_declared_edges_only_what_runs_reported_is_walked(tmp_path: Path) -> None:
    queries = _queries(tmp_path, _declared_pipeline())
    assert queries.upstream(FCT, 4, include_declared=False)["nodes"] == []
    assert _edges(queries.downstream(RAW, 4, include_declared=False)) == {
        (RAW, LOAD, "current"),
        (LOAD, STG, "current"),
    }


def test_once_the_job_runs_its_runs_lineage_replaces_the_declaration(tmp_path: Path) -> None:
    ran = run_pair(
        "orders.build_fct",
        "fct-1",
        1,  # earlier than both declarations: the run wins whatever the times
        1.5,
        inputs=[ds("stg_orders")],
        outputs=[ds("fct_daily_orders", fields=[("day", "DATE"), ("revenue", "DECIMAL")])],
    )
    queries = _queries(tmp_path, _declared_pipeline() + ran)
    answer = queries.upstream(FCT, 2)
    assert _edges(answer) == {(BUILD, FCT, "current"), (STG, BUILD, "current")}
    assert "declared" not in answer["nodes"][0]
    assert answer["target"]["fields"] == [
        {"name": "day", "type": "DATE"},
        {"name": "revenue", "type": "DECIMAL"},
    ]
    # declared schemas are not versions once a run reported one
    assert queries.schema_diff(FCT)["changes"] == []
    # load_orders ran before its (later) declaration was published: the run still wins
    assert _edges(queries.upstream(STG, 2)) == {(LOAD, STG, "current"), (RAW, LOAD, "current")}


def test_declarations_fold_the_same_in_any_order(tmp_path: Path) -> None:
    """(The fold itself is checked with declarations in ``test_fold_order.py``.)"""
    events = _declared_pipeline()
    expected = _queries(tmp_path, events).upstream(FCT, 4)
    for seed in range(5):
        shuffled = events[:]
        random.Random(seed).shuffle(shuffled)
        assert _queries(tmp_path, shuffled).upstream(FCT, 4) == expected


def test_a_later_declaration_drops_edges_the_earlier_one_had(tmp_path: Path) -> None:
    events = [
        job_event(
            "orders.build_fct", 1, inputs=[ds("stg_orders"), ds("fx_rates")], outputs=[ds("fct_daily_orders")]
        ),
        job_event("orders.build_fct", 2, inputs=[ds("stg_orders")], outputs=[ds("fct_daily_orders")]),
    ]
    queries = _queries(tmp_path, list(reversed(events)))
    assert _edges(queries.downstream(BUILD, 1)) == {(BUILD, FCT, "declared")}
    assert _edges(queries.upstream(BUILD, 1)) == {(STG, BUILD, "declared")}
    assert queries.downstream(FX, 2)["nodes"] == []
