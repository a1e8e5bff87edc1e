"""The breadth-first walk every graph answer takes: nearest first, through what one reader may see, with a
bounded cost."""

from __future__ import annotations

from collections import deque
from collections.abc import Callable

import attrs

from airflow_lineage_plus.graph.model import LineageGraph
from airflow_lineage_plus.graph.triggers import TRIGGERED, triggers_of

#: (origin, destination) -> the edge's state: CURRENT, DECLARED (:mod:`.declared`) or RETIRED
#: (:mod:`.retirement`)
Edges = dict[tuple[str, str], str]
#: every walk stops after this many nodes (the rest is counted in ``truncated``): a query has a bounded cost
MAX_WALK_NODES = 20_000


@attrs.frozen
class Walk:
    """What one breadth-first walk reached.

    ``seen``: {node id: least edges from the start}; ``edges``: {(origin, destination): state} of the
    edges crossed; ``restricted``: {reached node: depth} for the nodes with neighbours the reader may not
    see (the walk does not enter them); ``cut``: {reached node: how many neighbours the node cap left out}.
    """

    seen: dict[str, int]
    edges: Edges
    restricted: dict[str, int]
    cut: dict[str, int]


def walk(
    graph: LineageGraph,
    start: str,
    depth: int,
    *,
    upstream: bool,
    declared: bool = True,
    retired: bool = False,
    visible: Callable[[str], bool] | None = None,
    cap: int | None = None,
) -> Walk:
    """Breadth-first walk, nearest first, through visible nodes only, stopping at ``cap`` nodes (default
    :data:`MAX_WALK_NODES`); declared edges of jobs that have not run are followed too when ``declared``,
    retired edges when ``retired``; upstream, the ``triggered`` edges of cross-DAG lineage too
    (:mod:`.triggers`)."""
    cap = MAX_WALK_NODES if cap is None else cap
    seen = {start: 0}
    edges: Edges = {}
    restricted: dict[str, int] = {}
    cut: dict[str, int] = {}
    queue = deque([start])
    neighbours = graph.neighbours
    graph.prefetch_reach(start, depth, upstream=upstream, limit=cap)
    ready = -1  # the deepest level whose nodes the graph was told about at once (a store reads them so)
    while queue:
        node = queue.popleft()
        level = seen[node]
        if level >= depth:
            continue
        if level > ready:
            graph.prefetch([node, *(n for n in queue if seen[n] == level)], upstream=upstream)
            ready = level
        found = neighbours(node, upstream=upstream, retired=retired, declared_too=declared)
        if upstream and node.startswith("job:"):
            known = {other for other, _ in found}
            found += [(t.origin, TRIGGERED) for t in triggers_of(graph, node) if t.origin not in known]
            found = list(dict.fromkeys(found))
        for other, edge_state in found:
            if visible is not None and not visible(other):
                restricted[node] = level + 1
                continue
            if other not in seen:
                if len(seen) >= cap:
                    cut[node] = cut.get(node, 0) + 1
                    continue
                seen[other] = level + 1
                queue.append(other)
            edges[(other, node) if upstream else (node, other)] = edge_state
    return Walk(seen, edges, restricted, cut)
