"""The fold is order-independent: shuffled and repeated events fold to the graph of the ordered stream."""

from __future__ import annotations

import json
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from airflow_lineage_plus.graph import wire as w
from airflow_lineage_plus.graph.model import LineageGraph
from tests.support.graph_builders import dataset_node, job_node, run_id, tie_events, varied_events

#: what a run record knows (its caches aside, and the places of its events, which depend on the order)
RUN_FIELDS = (
    "run_id",
    "job_id",
    "start",
    "first_seen",
    "state",
    "end",
    "error",
    "error_key",
    "skipped",
    "skip_reason",
    "exec_mode",
    "exec_mode_time",
    "parent_run_id",
    "io",
    "upstream_failed",
    "parent_job_id",
    "dag_id",
)
LINES = [json.dumps(e).encode() for e in varied_events() + tie_events()]


def _fold(order: list[int]) -> LineageGraph:
    """The graph of ``LINES`` in this order (each event's ref is its place in ``LINES``)."""
    graph = LineageGraph()
    for index in order:
        decoded, micros, _ = w.decode(LINES[index])
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
                j.ref_time,
                sorted(j.sources),
                sorted(j.targets),
                sorted(r.run_id for r in j.runs),
                (j.slo_minutes, j.slo_key),
            )
            for key, j in graph.jobs.items()
        },
        "runs": {key: tuple(getattr(r, name) for name in RUN_FIELDS) for key, r in graph.runs.items()},
        "datasets": {
            key: (
                sorted(d.schemas.items()),
                d.fields,
                d.fields_key,
                d.owners,
                d.owners_key,
                d.columns,
                d.columns_key,
                (d.ref_time, d.write_time),
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
        "times": (graph.first_time, graph.last_time),
    }


def test_the_tricky_events_exercise_the_tie_rules() -> None:
    graph = _fold(list(range(len(LINES))))
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
)
def test_shuffled_and_repeated_events_fold_to_the_graph_of_the_ordered_stream(
    order: list[int], repeats: list[int]
) -> None:
    ordered = _fold(list(range(len(LINES))))
    assert _fingerprint(_fold(order + repeats)) == _fingerprint(ordered)
