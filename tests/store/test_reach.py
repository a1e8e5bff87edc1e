"""What a walk may reach: every node within a depth by any edge ever reported or declared, up- or
downstream, on SQLite and PostgreSQL."""

from __future__ import annotations

import json

import pytest

from airflow_lineage_plus.store import LineageStore
from airflow_lineage_plus.store.reach import reach
from tests.support.graph_builders import dataset_node, ds, job_event, job_node, run_pair

pytestmark = pytest.mark.timeout(120)


def _world() -> list[bytes]:
    """src -> j1 -> mid -> j2 -> out; j1 read old_src before (a retired edge), j2 declares plan; j3 reads
    and writes loop."""
    events = run_pair("j1", "j1-old", 1, 2, inputs=[ds("old_src")], outputs=[ds("mid")])
    events += run_pair("j1", "j1-new", 3, 4, inputs=[ds("src")], outputs=[ds("mid")])
    events += run_pair("j2", "j2-1", 5, 6, inputs=[ds("mid")], outputs=[ds("out")])
    events.append(job_event("j2", 0, inputs=[ds("plan")]))
    events += run_pair("j3", "j3-1", 7, 8, inputs=[ds("loop")], outputs=[ds("loop")])  # a cycle
    return [json.dumps(e).encode() for e in events]


def test_a_walk_may_reach_every_node_within_its_depth_by_retired_and_declared_edges_too(
    store_url: str,
) -> None:
    store = LineageStore(store_url)
    try:
        store.append(_world())
        out, src = dataset_node("out"), dataset_node("src")
        near = reach(store, out, 2, upstream=True, limit=100)
        assert sorted(near or ()) == sorted([out, job_node("j2"), dataset_node("mid"), dataset_node("plan")])
        far = reach(store, out, 4, upstream=True, limit=100)
        assert sorted(far or ()) == sorted([*(near or ()), job_node("j1"), src, dataset_node("old_src")])
        down = reach(store, src, 10, upstream=False, limit=100)
        assert sorted(down or ()) == sorted([src, job_node("j1"), dataset_node("mid"), job_node("j2"), out])
        assert reach(store, out, 4, upstream=True, limit=6) is None  # 7 nodes: more than the limit
        assert reach(store, dataset_node("nowhere"), 4, upstream=True, limit=6) == [dataset_node("nowhere")]
    finally:
        store.close()


def test_a_walk_of_any_depth_round_a_cycle_is_reached_in_bounded_levels(store_url: str) -> None:
    store = LineageStore(store_url)
    try:
        store.append(_world())
        loop = dataset_node("loop")
        assert sorted(reach(store, loop, 10**9, upstream=True, limit=100) or ()) == sorted(
            [job_node("j3"), loop]
        )
    finally:
        store.close()
