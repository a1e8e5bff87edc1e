"""A column's trace: the columns it comes from (upstream) and the columns it feeds (downstream), hop by
hop through column lineage (``columnLineage`` facets), with the transformations of each hop."""

from __future__ import annotations

from collections import deque
from collections.abc import Callable
from typing import Any

from airflow_lineage_plus import node_ids as ids
from airflow_lineage_plus.graph.model import LineageGraph

#: columns one trace reaches at most (the nearest are kept): a question has a bounded cost
MAX_COLUMNS = 20_000

Column = tuple[str, str]  # (dataset id, column)


def column_walk(
    graph: LineageGraph,
    dataset_id: str,
    column: str,
    depth: int,
    *,
    upstream: bool,
    visible: Callable[[str], bool] | None = None,
) -> tuple[list[dict[str, Any]], set[tuple[Column, Column]]]:
    """Rows of the columns ``depth`` column hops up- or downstream, and the hops crossed
    ((from dataset, column), (to dataset, column)), always pointing the way the data flows. With
    ``visible`` (a dataset id predicate), columns of datasets it refuses are neither shown nor walked
    through."""
    start = (dataset_id, column)
    best: dict[Column, tuple[int, set[tuple[Any, ...]], str, str]] = {}
    hops: set[tuple[Column, Column]] = set()
    queue = deque([(start, 0)])
    while queue:
        (ds, col), level = queue.popleft()
        if level >= depth:
            continue
        for namespace, name, field, transforms in _neighbours(graph, ds, col, upstream=upstream):
            key = (ids.dataset_id(namespace, name), field)
            if visible is not None and not visible(key[0]):
                continue
            hops.add((key, (ds, col)) if upstream else ((ds, col), key))
            if key == start:
                continue
            entry = best.get(key)
            if entry is None:
                if len(best) >= MAX_COLUMNS:
                    continue  # a bounded answer: the nearest columns are kept
                best[key] = (level + 1, set(transforms), namespace, name)
                queue.append((key, level + 1))
            elif entry[0] == level + 1:
                entry[1].update(transforms)
    rows = [
        {
            "namespace": namespace,
            "name": name,
            "column": key[1],
            "depth": level,
            "transformations": [
                {"type": t, "subtype": s, "description": d} for t, s, d in sorted(transforms, key=repr)
            ],
        }
        for key, (level, transforms, namespace, name) in best.items()
    ]
    rows.sort(key=lambda r: (r["depth"], r["namespace"], r["name"], r["column"]))
    return rows, hops


def _neighbours(graph: LineageGraph, ds: str, col: str, *, upstream: bool) -> list[tuple[Any, ...]]:
    if upstream:
        return list(graph.column_inputs(ds, col))
    out = []
    for reader_id, reader_col in sorted(graph.column_readers_of(ds, col)):
        reader = graph.dataset_record(reader_id)
        if reader is None:
            continue
        transforms: list[Any] = []
        for namespace, name, field, t in reader.columns.get(reader_col, ()):
            if ids.dataset_id(namespace, name) == ds and field == col:
                transforms.extend(t)
        out.append((reader.namespace, reader.name, reader_col, tuple(transforms)))
    return out
