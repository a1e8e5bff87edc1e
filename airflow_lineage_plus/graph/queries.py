"""The questions asked of a lineage source, answered as the documented JSON-contract dicts."""

from __future__ import annotations

import functools
from collections import deque
from collections.abc import Callable
from typing import Any, Concatenate, ParamSpec, TypeVar

import attrs

from airflow_lineage_plus import node_ids as ids
from airflow_lineage_plus.exceptions import NodeNotFound
from airflow_lineage_plus.graph.ancestry import descendant_jobs, ran_by_nodes
from airflow_lineage_plus.graph.model import LineageGraph
from airflow_lineage_plus.graph.names import lint_names
from airflow_lineage_plus.graph.runs import FAILED_STATES
from airflow_lineage_plus.graph.schema_diff import diff_fields, parse_proposed
from airflow_lineage_plus.graph.source import LineageSource
from airflow_lineage_plus.graph.visibility import (
    DagPredicate,
    Visibility,
    restricted_edge,
    restricted_node,
    visible_details,
    visible_run_details,
)

_R = TypeVar("_R")
_P = ParamSpec("_P")
Node = dict[str, Any]
Edge = dict[str, str]
#: (origin, destination) -> the edge's state (:mod:`.declared`)
Edges = dict[tuple[str, str], str]
HIGH_ABOVE, MEDIUM_ABOVE = 5, 1
#: every walk stops after this many nodes (the rest is counted in ``truncated``): a query has a bounded cost
MAX_WALK_NODES = 20_000
#: how many search hits a reader's search looks through to find the ones they may see
MAX_SEARCH_SCAN = 2_000


def node_dict(graph: LineageGraph, node_id: str, depth: int) -> Node:
    job = graph.jobs.get(node_id)
    if job is not None:
        latest = graph.latest_run(job)
        node: Node = {
            "id": node_id,
            "type": ids.JOB,
            "namespace": job.namespace,
            "name": job.name,
            "depth": depth,
            "latestRun": latest.summary() if latest is not None else None,
        }
        ran = ran_by_nodes(graph, latest)
        if ran:  # the latest run was run by other runs (a dbt model by dbt, by an Airflow task)
            node["ranBy"] = ran
        if graph.declared_only(job):
            node["declared"] = True  # known from its declaration in DAG code only: no run yet
        return node
    dataset = graph.datasets[node_id]
    return {
        "id": node_id,
        "type": ids.DATASET,
        "namespace": dataset.namespace,
        "name": dataset.name,
        "depth": depth,
        "fields": [{"name": name, "type": kind} for name, kind, _ in dataset.fields],
    }


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
    visible: Callable[[str], bool] | None = None,
    cap: int | None = None,
) -> Walk:
    """Breadth-first walk, nearest first, through visible nodes only, stopping at ``cap`` nodes (default
    :data:`MAX_WALK_NODES`); declared edges of jobs that have not run are followed too when ``declared``."""
    cap = MAX_WALK_NODES if cap is None else cap
    seen = {start: 0}
    edges: Edges = {}
    restricted: dict[str, int] = {}
    cut: dict[str, int] = {}
    queue = deque([start])
    neighbours = graph.neighbours
    while queue:
        node = queue.popleft()
        level = seen[node]
        if level >= depth:
            continue
        for other, edge_state in neighbours(node, upstream=upstream, declared_too=declared):
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


def _edge_list(edges: Edges) -> list[Edge]:
    return [{"origin": o, "destination": d, "state": s} for (o, d), s in sorted(edges.items())]


def _nodes(graph: LineageGraph, seen: dict[str, int], start: str) -> list[Node]:
    return [
        node_dict(graph, n, d) for n, d in sorted(seen.items(), key=lambda kv: (kv[1], kv[0])) if n != start
    ]


def _keep_nearest(
    start: str, seen: dict[str, int], edges: Edges, limit: int
) -> tuple[dict[str, int], Edges, dict[str, int]]:
    """At most ``limit`` nodes besides ``start``, the farthest cut; {kept node: neighbours cut}."""
    ordered = sorted((kv for kv in seen.items() if kv[0] != start), key=lambda kv: (kv[1], kv[0]))
    kept = {start, *(n for n, _ in ordered[:limit])}
    cut_from: dict[str, set[str]] = {}
    for origin, destination in edges:
        if origin in kept and destination not in kept:
            cut_from.setdefault(origin, set()).add(destination)
        elif destination in kept and origin not in kept:
            cut_from.setdefault(destination, set()).add(origin)
    truncated = {n: len(c) for n, c in sorted(cut_from.items())}
    return (
        {n: d for n, d in seen.items() if n in kept},
        {(o, d): s for (o, d), s in edges.items() if o in kept and d in kept},
        truncated,
    )


def _shape(graph: LineageGraph, start: str, walks: list[tuple[Walk, bool]], limit: int | None) -> Node:
    """The answer for a node's neighbourhood: the walks merged, cut to ``limit`` nodes (nearest kept),
    with a ``RESTRICTED`` placeholder per direction for kept nodes whose neighbours are hidden."""
    seen: dict[str, int] = {}
    edges: Edges = {}
    for walked, _ in walks:
        for node, level in walked.seen.items():
            seen[node] = min(level, seen.get(node, level))
        edges.update(walked.edges)
    truncated: dict[str, int] = {}
    if limit is not None and len(seen) - 1 > limit:
        seen, edges, truncated = _keep_nearest(start, seen, edges, limit)
    for walked, _ in walks:
        for node, count in walked.cut.items():
            if node in seen:
                truncated[node] = truncated.get(node, 0) + count
    nodes = _nodes(graph, seen, start)
    edge_list = _edge_list(edges)
    for walked, upstream in walks:
        for node, level in sorted(walked.restricted.items()):
            if node in seen:
                nodes.append(restricted_node(node, upstream=upstream, depth=level))
                edge_list.append(restricted_edge(node, upstream=upstream))
    answer: Node = {"target": node_dict(graph, start, 0), "nodes": nodes, "edges": edge_list}
    if truncated:
        answer["truncated"] = dict(sorted(truncated.items()))
    return answer


def _guarded(
    method: Callable[Concatenate[LineageQueries, _P], _R],
) -> Callable[Concatenate[LineageQueries, _P], _R]:
    @functools.wraps(method)
    def wrapper(self: LineageQueries, *args: _P.args, **kwargs: _P.kwargs) -> _R:
        with self.source.guard():
            return method(self, *args, **kwargs)

    return wrapper


class LineageQueries:
    """Queries over one :class:`LineageSource`; every answer is JSON-ready. Safe to share between threads
    while another thread calls ``source.refresh()``.

    ``may_read_dag`` limits every answer to what one reader may see (:mod:`.visibility`); ``None`` shows
    everything. :meth:`scoped` gives a reader's view of the same source.
    """

    def __init__(self, source: LineageSource, may_read_dag: DagPredicate | None = None) -> None:
        self.source = source
        self.may_read_dag = may_read_dag
        self._visibility: dict[tuple[int, int], Visibility] = {}

    def scoped(self, may_read_dag: DagPredicate | None) -> LineageQueries:
        """The same source, answering only with what ``may_read_dag`` lets one reader see."""
        return LineageQueries(self.source, may_read_dag)

    def visibility(self, graph: LineageGraph) -> Visibility | None:
        """What this reader may see of ``graph`` (None: everything)."""
        if self.may_read_dag is None:
            return None
        key = (id(graph), graph.version)
        found = self._visibility.get(key)
        if found is None or found.graph is not graph:
            found = self._visibility[key] = Visibility(graph, self.may_read_dag)
        return found

    def _graph(self, node_id: str, depth: int) -> tuple[LineageGraph, Visibility | None]:
        """The graph around a node the reader may see; NodeNotFound for one they may not."""
        ids.node_type(node_id)
        graph = self.source.graph_for(node_id, depth)
        visibility = self.visibility(graph)
        if not graph.has_node(node_id) or (visibility is not None and not visibility.node(node_id)):
            raise NodeNotFound(f"unknown node {node_id}")
        return graph, visibility

    def _dataset_graph(self, dataset_id: str, depth: int) -> tuple[LineageGraph, Visibility | None]:
        if ids.node_type(dataset_id) != ids.DATASET:
            raise NodeNotFound(f"{dataset_id} is not a dataset")
        return self._graph(dataset_id, depth)

    def _walk(
        self,
        graph: LineageGraph,
        visibility: Visibility | None,
        start: str,
        depth: int,
        upstream: bool,
        declared: bool = True,
    ) -> Walk:
        return walk(
            graph,
            start,
            depth,
            upstream=upstream,
            declared=declared,
            visible=visibility.node if visibility is not None else None,
        )

    @_guarded
    def upstream(
        self, node_id: str, depth: int = 10, limit: int | None = None, *, include_declared: bool = True
    ) -> dict[str, Any]:
        graph, visibility = self._graph(node_id, depth)
        walked = self._walk(graph, visibility, node_id, depth, True, include_declared)
        return _shape(graph, node_id, [(walked, True)], limit)

    @_guarded
    def downstream(
        self, node_id: str, depth: int = 10, limit: int | None = None, *, include_declared: bool = True
    ) -> dict[str, Any]:
        graph, visibility = self._graph(node_id, depth)
        walked = self._walk(graph, visibility, node_id, depth, False, include_declared)
        return _shape(graph, node_id, [(walked, False)], limit)

    @_guarded
    def lineage(
        self, node_id: str, depth: int = 5, limit: int | None = None, *, include_declared: bool = True
    ) -> dict[str, Any]:
        """Both directions (for a graph view); past ``limit`` nodes the farthest are cut and counted."""
        graph, visibility = self._graph(node_id, depth)
        walks = [
            (self._walk(graph, visibility, node_id, depth, up, include_declared), up) for up in (True, False)
        ]
        return _shape(graph, node_id, walks, limit)

    @_guarded
    def failed_upstream(
        self, dataset_id: str, depth: int = 10, *, include_declared: bool = True
    ) -> dict[str, Any]:
        """Upstream jobs whose latest run FAILED or ABORTED, and the edges from them to the target."""
        graph, visibility = self._dataset_graph(dataset_id, depth)
        walked = self._walk(graph, visibility, dataset_id, depth, True, include_declared)
        seen, edges = walked.seen, walked.edges
        failed = {
            n
            for n in seen
            if n in graph.jobs
            and (run := graph.latest_run(graph.jobs[n])) is not None
            and run.state in FAILED_STATES
        }
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
        return {
            "target": node_dict(graph, dataset_id, 0),
            "nodes": _nodes(graph, {n: seen[n] for n in failed}, dataset_id),
            "edges": _edge_list(path_edges),
        }

    @_guarded
    def impact(self, dataset_id: str, depth: int = 10, *, include_declared: bool = True) -> dict[str, Any]:
        """Downstream jobs and datasets, their owners, and HIGH (>5 jobs) / MEDIUM (>1) / LOW (visible
        jobs only; hidden ones are ``RESTRICTED`` placeholders)."""
        graph, visibility = self._dataset_graph(dataset_id, depth)
        walked = self._walk(graph, visibility, dataset_id, depth, False, include_declared)
        answer = _shape(graph, dataset_id, [(walked, False)], None)
        nodes = answer["nodes"]
        jobs = [n for n in nodes if n["type"] == ids.JOB]
        owners: set[str] = set()
        for node in nodes:
            record = graph.jobs.get(node["id"]) or graph.datasets.get(node["id"])
            owners.update(record.owners if record is not None else ())
        level = "HIGH" if len(jobs) > HIGH_ABOVE else "MEDIUM" if len(jobs) > MEDIUM_ABOVE else "LOW"
        return {**answer, "level": level, "owners": sorted(owners)}

    @_guarded
    def schema_diff(self, dataset_id: str, proposed: Any = None) -> dict[str, Any]:
        """Changes between the last two schema versions, or from the current one to ``proposed``."""
        graph, _ = self._dataset_graph(dataset_id, 1)
        versions = self.source.schema_versions(dataset_id)
        if proposed is not None:
            current = versions[0] if versions else ()
            changes = diff_fields(current, parse_proposed(proposed))
        else:
            changes = diff_fields(versions[1], versions[0]) if len(versions) > 1 else []
        return {"target": node_dict(graph, dataset_id, 0), "changes": changes}

    @_guarded
    def columns(self, dataset_id: str, column: str, depth: int = 10) -> dict[str, Any]:
        """Upstream columns feeding ``column`` and downstream columns it feeds, with transformations
        (columns of datasets the reader may not see are left out)."""
        if ids.node_type(dataset_id) != ids.DATASET:
            raise NodeNotFound(f"{dataset_id} is not a dataset")
        graph = self.source.column_graph(dataset_id, column, depth)
        visibility = self.visibility(graph)
        record = graph.datasets.get(dataset_id)
        if record is None or (visibility is not None and not visibility.dataset(dataset_id)):
            raise NodeNotFound(f"unknown node {dataset_id}")
        known = {name for name, _, _ in record.fields} | set(record.columns)
        if column not in known and (dataset_id, column) not in graph.column_readers:
            raise NodeNotFound(f"{dataset_id} has no column {column!r}")
        answer: dict[str, Any] = {
            "target": node_dict(graph, dataset_id, 0),
            "column": column,
            "upstream": _column_walk(graph, dataset_id, column, depth, upstream=True),
            "downstream": _column_walk(graph, dataset_id, column, depth, upstream=False),
        }
        if visibility is not None:
            for direction in ("upstream", "downstream"):
                answer[direction] = [
                    row
                    for row in answer[direction]
                    if visibility.dataset(ids.dataset_id(row["namespace"], row["name"]))
                ]
        return answer

    @_guarded
    def lint_names(self) -> dict[str, Any]:
        return lint_names(self.source.dataset_names())

    @_guarded
    def search(self, text: str, limit: int = 20) -> list[Node]:
        """Datasets and jobs whose name contains ``text``, best match first (visible ones only)."""
        if self.may_read_dag is None:
            found = self.source.search(text, limit)
        else:
            found = []
            for kind, ns, name in self.source.search(text, min(limit * 10 + 100, MAX_SEARCH_SCAN)):
                node_id = (ids.dataset_id if kind == ids.DATASET else ids.job_id)(ns, name)
                if self._shown(node_id):
                    found.append((kind, ns, name))
                    if len(found) >= limit:
                        break
        return [
            {
                "id": (ids.dataset_id if kind == ids.DATASET else ids.job_id)(ns, name),
                "type": kind,
                "namespace": ns,
                "name": name,
                "depth": 0,
            }
            for kind, ns, name in found
        ]

    def _shown(self, node_id: str) -> bool:
        try:
            self._graph(node_id, 1)
        except NodeNotFound:
            return False
        return True

    @_guarded
    def descendants(self, job_id: str, limit: int = 200) -> list[str]:
        """Ids of the jobs the job's latest run ran (dbt's runs under the task that ran dbt), children
        first; empty for a job that ran none, or a dataset."""
        if ids.node_type(job_id) != ids.JOB:
            return []
        graph, visibility = self._graph(job_id, 1)
        found = descendant_jobs(graph, job_id, limit)
        return found if visibility is None else [child for child in found if visibility.job(child)]

    @_guarded
    def node_details(self, node_id: str) -> dict[str, Any]:
        ids.node_type(node_id)
        if self.may_read_dag is None:
            return self.source.node_details(node_id)
        _, visibility = self._graph(node_id, 2 if ids.node_type(node_id) == ids.DATASET else 1)
        assert visibility is not None
        return visible_details(self.source.node_details(node_id), visibility)

    @_guarded
    def run_details(self, run_id: str) -> dict[str, Any]:
        details = self.source.run_details(run_id)
        if self.may_read_dag is None:
            return details
        job_id = str((details.get("job") or {}).get("id") or "")
        try:
            _, visibility = self._graph(job_id, 1)
        except (NodeNotFound, ValueError):
            raise NodeNotFound(f"unknown run {run_id}") from None
        assert visibility is not None
        return visible_run_details(details, visibility)

    def may_read(self, dag_id: str) -> bool:
        """Whether this reader may read the DAG ``dag_id`` (always, unscoped)."""
        return self.may_read_dag is None or bool(self.may_read_dag(dag_id))


def _column_walk(
    graph: LineageGraph, dataset_id: str, column: str, depth: int, *, upstream: bool
) -> list[dict]:
    start = (dataset_id, column)
    best: dict[tuple[str, str], tuple[int, set[tuple[Any, ...]], str, str]] = {}
    queue = deque([(start, 0)])
    done = {start}
    while queue:
        (ds, col), level = queue.popleft()
        if level >= depth:
            continue
        for namespace, name, field, transforms in _column_neighbours(graph, ds, col, upstream=upstream):
            key = (ids.dataset_id(namespace, name), field)
            if key == start:
                continue
            entry = best.get(key)
            if entry is None:
                if len(best) >= MAX_WALK_NODES:
                    continue  # a bounded answer: the nearest columns are kept
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
    return rows


def _column_neighbours(graph: LineageGraph, ds: str, col: str, *, upstream: bool) -> list[tuple[Any, ...]]:
    if upstream:
        record = graph.datasets.get(ds)
        return list(record.columns.get(col, ())) if record is not None else []
    out = []
    for reader_id, reader_col in graph.column_readers.get((ds, col), ()):
        reader = graph.datasets[reader_id]
        transforms: list[Any] = []
        for namespace, name, field, t in reader.columns.get(reader_col, ()):
            if ids.dataset_id(namespace, name) == ds and field == col:
                transforms.extend(t)
        out.append((reader.namespace, reader.name, reader_col, tuple(transforms)))
    return out
