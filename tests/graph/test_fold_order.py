"""The fold is order-independent: shuffled and repeated events fold to the state of the ordered stream."""

from __future__ import annotations

import json
from typing import Any

import sqlalchemy as sa
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from airflow_lineage_plus.graph.stored_graph import StoredGraph
from airflow_lineage_plus.store import LineageStore, schema
from airflow_lineage_plus.store.database import SCRATCH
from airflow_lineage_plus.store.facts import Facts
from tests.support.graph_builders import (
    cross_dag_world,
    dataset_node,
    job_node,
    run_id,
    tie_events,
    varied_events,
)

LINES = [json.dumps(e).encode() for e in varied_events() + tie_events() + cross_dag_world()]


def _fold(order: list[int]) -> LineageStore:
    """A scratch store holding the folded state of ``LINES`` in this order (each event's ref is its place
    in ``LINES``), one event per write as the transport writes them."""
    store = LineageStore(SCRATCH)
    for index in order:
        facts = Facts()
        assert facts.add_bytes(LINES[index], index)
        store.fold(facts)
    return store


def _fingerprint(store: LineageStore) -> dict[str, list[tuple[Any, ...]]]:
    """Every row of the folded state, in a comparable order."""
    with store.read() as connection:
        return {
            table.name: sorted(tuple(row) for row in connection.execute(sa.select(table)).all())
            for table in schema.FOLDED
        }


def _graph(store: LineageStore) -> StoredGraph:
    graph = StoredGraph(store)
    graph.load_all()
    return graph


def test_the_tricky_events_exercise_the_tie_rules() -> None:
    graph = _graph(_fold(list(range(len(LINES)))))
    skippy = graph.runs[run_id("skip-1")]
    assert skippy.state == "SKIPPED" and skippy.skip_reason == "r-a"
    assert graph.runs[run_id("err-1")].error == "b"
    assert graph.datasets[dataset_node("tie_ds")].fields == (("a", "INT", None),)
    assert graph.dag_run_skips[run_id("dag-1")].job_ids == (job_node("orders.x"), job_node("orders.y"))
    assert graph.dag_run_skips[run_id("dag-1")].upstream_failed == (job_node("orders.y"),)
    graph.load_triggers([run_id("xdag_report-run")])
    assert graph.triggers == {
        run_id("xdag_report-run"): {(job_node("xdag_orders.extract"), run_id("orders-extract"))}
    }
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
)
def test_shuffled_and_repeated_events_fold_to_the_state_of_the_ordered_stream(
    order: list[int], repeats: list[int]
) -> None:
    ordered = _fingerprint(_fold(list(range(len(LINES)))))
    assert _fingerprint(_fold(order + repeats)) == ordered
