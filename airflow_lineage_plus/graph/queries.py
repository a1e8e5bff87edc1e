"""The questions asked of a lineage source, answered as the documented JSON-contract dicts."""

from __future__ import annotations

import functools
from collections import deque
from collections.abc import Callable
from typing import Any, Concatenate, ParamSpec, TypeVar

from airflow_lineage_plus import node_ids as ids
from airflow_lineage_plus.exceptions import NodeNotFound
from airflow_lineage_plus.graph import wire as w
from airflow_lineage_plus.graph.model import LineageGraph
from airflow_lineage_plus.graph.names import lint_names
from airflow_lineage_plus.graph.records import DatasetRecord, JobRecord
from airflow_lineage_plus.graph.runs import FAILED_STATES
from airflow_lineage_plus.graph.schema_diff import diff_fields, parse_proposed
from airflow_lineage_plus.graph.source import LineageSource

_R = TypeVar("_R")
_P = ParamSpec("_P")
Node = dict[str, Any]
Edge = dict[str, str]
#: (origin, destination) -> the edge's state: CURRENT, DECLARED (:mod:`.declared`) or RETIRED
#: (:mod:`.retirement`)
Edges = dict[tuple[str, str], str]
HIGH_ABOVE, MEDIUM_ABOVE = 5, 1


def node_dict(graph: LineageGraph, node_id: str, depth: int) -> Node:
    job = graph.job_record(node_id) if node_id.startswith("job:") else None
    if job is not None:
        latest = graph.latest_run(job)
        node = {
            "id": node_id,
            "type": ids.JOB,
            "namespace": job.namespace,
            "name": job.name,
            "depth": depth,
            "latestRun": latest.summary() if latest is not None else None,
        }
        if graph.declared_only(job):
            node["declared"] = True  # known from its declaration in DAG code only: no run yet
        return node
    dataset = graph.dataset_record(node_id)
    if dataset is None:
        raise NodeNotFound(f"unknown node {node_id}")
    return {
        "id": node_id,
        "type": ids.DATASET,
        "namespace": dataset.namespace,
        "name": dataset.name,
        "depth": depth,
        "fields": [{"name": name, "type": kind} for name, kind, _ in dataset.fields],
    }


def walk(
    graph: LineageGraph,
    start: str,
    depth: int,
    *,
    upstream: bool,
    retired: bool = False,
    declared: bool = True,
) -> tuple[dict[str, int], Edges]:
    """Breadth-first walk: {node id: least edges from start} and {(origin, destination): state} of the
    edges crossed (retired ones only when ``retired``; declared edges of jobs that have not run too, when
    ``declared``)."""
    seen = {start: 0}
    edges: Edges = {}
    queue = deque([start])
    neighbours = graph.neighbours
    while queue:
        node = queue.popleft()
        level = seen[node]
        if level >= depth:
            continue
        for other, edge_state in neighbours(node, upstream=upstream, retired=retired, declared_too=declared):
            edges[(other, node) if upstream else (node, other)] = edge_state
            if other not in seen:
                seen[other] = level + 1
                queue.append(other)
    return seen, edges


def edge_list(edges: Edges) -> list[Edge]:
    """Edges in order, each with its state (retired ones only when they were asked for)."""
    return [{"origin": o, "destination": d, "state": s} for (o, d), s in sorted(edges.items())]


def _nodes(graph: LineageGraph, seen: dict[str, int], start: str) -> list[Node]:
    return [
        node_dict(graph, n, d) for n, d in sorted(seen.items(), key=lambda kv: (kv[1], kv[0])) if n != start
    ]


def _guarded(
    method: Callable[Concatenate[LineageQueries, _P], _R],
) -> Callable[Concatenate[LineageQueries, _P], _R]:
    @functools.wraps(method)
    def wrapper(self: LineageQueries, *args: _P.args, **kwargs: _P.kwargs) -> _R:
        with self.source.guard():
            return method(self, *args, **kwargs)

    return wrapper


def _stamp(answer: dict[str, Any], graph: LineageGraph, as_of: int | None) -> dict[str, Any]:
    """``exact`` (whether the source could answer exactly what was asked) and ``asOf`` when given."""
    answer["exact"] = graph.exact
    if as_of is not None:
        answer["asOf"] = w.format_micros(as_of)
    return answer


class LineageQueries:
    """Queries over one :class:`LineageSource`; every answer is JSON-ready. Safe to share between threads
    while another thread calls ``source.refresh()``.

    ``as_of`` (epoch microseconds) answers from what the events up to that time said; ``include_retired``
    also follows edges the job no longer reports (:mod:`.retirement`), in state ``"retired"``;
    ``include_declared`` (the default) follows the declared edges of jobs that have not run
    (:mod:`.declared`), in state ``"declared"``."""

    def __init__(self, source: LineageSource) -> None:
        self.source = source

    def _graph(
        self, node_id: str, depth: int, as_of: int | None = None, retired: bool = False
    ) -> LineageGraph:
        ids.node_type(node_id)
        graph = self.source.graph_for(node_id, depth, as_of=as_of, retired=retired)
        if not graph.has_node(node_id):
            raise NodeNotFound(f"unknown node {node_id}")
        return graph

    def _dataset_graph(
        self, dataset_id: str, depth: int, as_of: int | None = None, retired: bool = False
    ) -> LineageGraph:
        if ids.node_type(dataset_id) != ids.DATASET:
            raise NodeNotFound(f"{dataset_id} is not a dataset")
        return self._graph(dataset_id, depth, as_of, retired)

    def _directed(
        self, node_id: str, depth: int, as_of: int | None, retired: bool, declared: bool, *, upstream: bool
    ) -> dict[str, Any]:
        graph = self._graph(node_id, depth, as_of, retired)
        seen, edges = walk(graph, node_id, depth, upstream=upstream, retired=retired, declared=declared)
        answer = {
            "target": node_dict(graph, node_id, 0),
            "nodes": _nodes(graph, seen, node_id),
            "edges": edge_list(edges),
        }
        return _stamp(answer, graph, as_of)

    @_guarded
    def upstream(
        self,
        node_id: str,
        depth: int = 10,
        *,
        as_of: int | None = None,
        include_retired: bool = False,
        include_declared: bool = True,
    ) -> dict[str, Any]:
        return self._directed(node_id, depth, as_of, include_retired, include_declared, upstream=True)

    @_guarded
    def downstream(
        self,
        node_id: str,
        depth: int = 10,
        *,
        as_of: int | None = None,
        include_retired: bool = False,
        include_declared: bool = True,
    ) -> dict[str, Any]:
        return self._directed(node_id, depth, as_of, include_retired, include_declared, upstream=False)

    @_guarded
    def lineage(
        self,
        node_id: str,
        depth: int = 5,
        limit: int | None = None,
        *,
        as_of: int | None = None,
        include_retired: bool = False,
        include_declared: bool = True,
    ) -> dict[str, Any]:
        """Both directions (for a graph view); past ``limit`` nodes the farthest are cut and counted."""
        graph = self._graph(node_id, depth, as_of, include_retired)
        way = {"retired": include_retired, "declared": include_declared}
        up, up_edges = walk(graph, node_id, depth, upstream=True, **way)
        down, down_edges = walk(graph, node_id, depth, upstream=False, **way)
        seen = dict(up)
        for node, level in down.items():
            seen[node] = min(level, seen.get(node, level))
        edges = {**up_edges, **down_edges}
        truncated: dict[str, int] = {}
        if limit is not None and len(seen) - 1 > limit:
            seen, edges, truncated = _cut(node_id, seen, edges, limit)
        answer = {
            "target": node_dict(graph, node_id, 0),
            "nodes": _nodes(graph, seen, node_id),
            "edges": edge_list(edges),
        }
        if truncated:
            answer["truncated"] = truncated
        return _stamp(answer, graph, as_of)

    @_guarded
    def failed_upstream(
        self,
        dataset_id: str,
        depth: int = 10,
        *,
        as_of: int | None = None,
        include_retired: bool = False,
        include_declared: bool = True,
    ) -> dict[str, Any]:
        """Upstream jobs whose latest run FAILED or ABORTED, and the edges from them to the target."""
        graph = self._dataset_graph(dataset_id, depth, as_of, include_retired)
        seen, edges = walk(
            graph, dataset_id, depth, upstream=True, retired=include_retired, declared=include_declared
        )
        failed = set()
        for node in seen:
            job = graph.job_record(node) if node.startswith("job:") else None
            run = graph.latest_run(job) if job is not None else None
            if run is not None and run.state in FAILED_STATES:
                failed.add(node)
        forward: dict[str, list[str]] = {}
        for origin, destination in edges:
            forward.setdefault(origin, []).append(destination)
        on_path = set(failed)
        queue = deque(failed)
        while queue:
            for nxt in forward.get(queue.popleft(), ()):
                if nxt not in on_path:
                    on_path.add(nxt)
                    queue.append(nxt)
        path_edges = {(o, d): s for (o, d), s in edges.items() if o in on_path and d in on_path}
        answer = {
            "target": node_dict(graph, dataset_id, 0),
            "nodes": _nodes(graph, {n: seen[n] for n in failed}, dataset_id),
            "edges": edge_list(path_edges),
        }
        return _stamp(answer, graph, as_of)

    @_guarded
    def impact(
        self,
        dataset_id: str,
        depth: int = 10,
        *,
        as_of: int | None = None,
        include_retired: bool = False,
        include_declared: bool = True,
    ) -> dict[str, Any]:
        """Downstream jobs and datasets, their owners, and HIGH (>5 jobs) / MEDIUM (>1) / LOW."""
        graph = self._dataset_graph(dataset_id, depth, as_of, include_retired)
        seen, edges = walk(
            graph, dataset_id, depth, upstream=False, retired=include_retired, declared=include_declared
        )
        nodes = _nodes(graph, seen, dataset_id)
        answer = {"target": node_dict(graph, dataset_id, 0), "nodes": nodes, "edges": edge_list(edges)}
        jobs = [n for n in nodes if n["type"] == ids.JOB]
        owners: set[str] = set()
        for node in nodes:
            record: JobRecord | DatasetRecord | None = (
                graph.job_record(node["id"]) if node["type"] == ids.JOB else graph.dataset_record(node["id"])
            )
            owners.update(record.owners if record is not None else ())
        level = "HIGH" if len(jobs) > HIGH_ABOVE else "MEDIUM" if len(jobs) > MEDIUM_ABOVE else "LOW"
        return _stamp({**answer, "level": level, "owners": sorted(owners)}, graph, as_of)

    @_guarded
    def schema_diff(
        self, dataset_id: str, proposed: Any = None, *, as_of: int | None = None
    ) -> dict[str, Any]:
        """Changes between the last two schema versions, or from the current one to ``proposed``."""
        graph = self._dataset_graph(dataset_id, 0, as_of)
        versions = self.source.schema_versions(dataset_id, as_of=as_of)
        if proposed is not None:
            current = versions[0] if versions else ()
            changes = diff_fields(current, parse_proposed(proposed))
        else:
            changes = diff_fields(versions[1], versions[0]) if len(versions) > 1 else []
        versions_json = [[{"name": n, "type": t} for n, t in v] for v in versions[:2]]
        answer = {"target": node_dict(graph, dataset_id, 0), "changes": changes, "versions": versions_json}
        return _stamp(answer, graph, as_of)

    @_guarded
    def columns(
        self, dataset_id: str, column: str, depth: int = 10, *, as_of: int | None = None
    ) -> dict[str, Any]:
        """Upstream columns feeding ``column`` and downstream columns it feeds, with transformations."""
        if ids.node_type(dataset_id) != ids.DATASET:
            raise NodeNotFound(f"{dataset_id} is not a dataset")
        graph = self.source.column_graph(dataset_id, column, depth, as_of=as_of)
        record = graph.dataset_record(dataset_id)
        if record is None:
            raise NodeNotFound(f"unknown node {dataset_id}")
        known = {name for name, _, _ in record.fields} | set(record.columns)
        if column not in known and not graph.column_readers_of(dataset_id, column):
            raise NodeNotFound(f"{dataset_id} has no column {column!r}")
        upstream, up_hops = _column_walk(graph, dataset_id, column, depth, upstream=True)
        downstream, down_hops = _column_walk(graph, dataset_id, column, depth, upstream=False)
        answer = {
            "target": node_dict(graph, dataset_id, 0),
            "column": column,
            "upstream": upstream,
            "downstream": downstream,
            "paths": [
                {"from": {"dataset": a[0], "column": a[1]}, "to": {"dataset": b[0], "column": b[1]}}
                for a, b in sorted(up_hops | down_hops)
            ],
        }
        return _stamp(answer, graph, as_of)

    @_guarded
    def lint_names(self) -> dict[str, Any]:
        return lint_names(self.source.dataset_names())

    @_guarded
    def search(self, text: str, limit: int = 20) -> list[Node]:
        return [
            {
                "id": (ids.dataset_id if kind == ids.DATASET else ids.job_id)(ns, name),
                "type": kind,
                "namespace": ns,
                "name": name,
                "depth": 0,
            }
            for kind, ns, name in self.source.search(text, limit)
        ]

    @_guarded
    def node_details(self, node_id: str, *, as_of: int | None = None) -> dict[str, Any]:
        ids.node_type(node_id)
        return self.source.node_details(node_id, as_of=as_of)

    @_guarded
    def run_details(self, run_id: str) -> dict[str, Any]:
        return self.source.run_details(run_id)

    @_guarded
    def time_range(self) -> dict[str, Any]:
        """``{"from", "to"}``: the earliest and the latest event time the source knows (null: unknown)."""
        first, last = self.source.time_range()
        return {"from": w.format_micros(first), "to": w.format_micros(last)}


def _cut(
    node_id: str, seen: dict[str, int], edges: Edges, limit: int
) -> tuple[dict[str, int], Edges, dict[str, int]]:
    """Keep the ``limit`` nearest nodes; count, per kept node, the neighbours that were cut."""
    ordered = sorted((kv for kv in seen.items() if kv[0] != node_id), key=lambda kv: (kv[1], kv[0]))
    kept = {node_id, *(n for n, _ in ordered[:limit])}
    cut_from: dict[str, set[str]] = {}
    for origin, destination in edges:
        if origin in kept and destination not in kept:
            cut_from.setdefault(origin, set()).add(destination)
        elif destination in kept and origin not in kept:
            cut_from.setdefault(destination, set()).add(origin)
    truncated = {n: len(c) for n, c in sorted(cut_from.items())}
    seen = {n: d for n, d in seen.items() if n in kept}
    edges = {(o, d): state for (o, d), state in edges.items() if o in kept and d in kept}
    return seen, edges, truncated


def _column_walk(
    graph: LineageGraph, dataset_id: str, column: str, depth: int, *, upstream: bool
) -> tuple[list[dict[str, Any]], set[tuple[tuple[str, str], tuple[str, str]]]]:
    """Rows of the columns ``depth`` column hops up- or downstream, and the hops crossed
    ((from dataset, column), (to dataset, column)), always pointing the way the data flows."""
    start = (dataset_id, column)
    best: dict[tuple[str, str], tuple[int, set[tuple[Any, ...]], str, str]] = {}
    hops: set[tuple[tuple[str, str], tuple[str, str]]] = set()
    queue = deque([(start, 0)])
    done = {start}
    while queue:
        (ds, col), level = queue.popleft()
        if level >= depth:
            continue
        for namespace, name, field, transforms in _column_neighbours(graph, ds, col, upstream=upstream):
            key = (ids.dataset_id(namespace, name), field)
            hops.add((key, (ds, col)) if upstream else ((ds, col), key))
            if key == start:
                continue
            entry = best.get(key)
            if entry is None:
                best[key] = (level + 1, set(transforms), namespace, name)
            elif entry[0] == level + 1:
                entry[1].update(transforms)
            if key not in done:
                done.add(key)
                queue.append((key, level + 1))
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


def _column_neighbours(graph: LineageGraph, ds: str, col: str, *, upstream: bool) -> list[tuple[Any, ...]]:
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
