"""The questions asked of a lineage source, answered as the documented JSON-contract dicts."""

from __future__ import annotations

import functools
import time
from collections.abc import Callable
from typing import Any, Concatenate, ParamSpec, TypeVar

import attrs

from airflow_lineage_plus import node_ids as ids
from airflow_lineage_plus.exceptions import NodeNotFound
from airflow_lineage_plus.graph import changes as rules
from airflow_lineage_plus.graph import failed, visible_jobs
from airflow_lineage_plus.graph import what_changed as changes
from airflow_lineage_plus.graph.ancestry import descendant_jobs, ran_by_nodes
from airflow_lineage_plus.graph.columns import column_walk
from airflow_lineage_plus.graph.model import LineageGraph
from airflow_lineage_plus.graph.names import lint_names
from airflow_lineage_plus.graph.records import DatasetRecord
from airflow_lineage_plus.graph.schema_diff import diff_fields, parse_proposed
from airflow_lineage_plus.graph.source import LineageSource
from airflow_lineage_plus.graph.triggers import TRIGGERED, edge_triggers, failed_origins
from airflow_lineage_plus.graph.visibility import (
    DagPredicate,
    Visibility,
    restricted_edge,
    restricted_node,
    visible_details,
    visible_ran_by,
    visible_run_details,
)
from airflow_lineage_plus.graph.walk import Edges, Walk, walk
from airflow_lineage_plus.store import wire as w

_R = TypeVar("_R")
_P = ParamSpec("_P")
Node = dict[str, Any]
Edge = dict[str, Any]
HIGH_ABOVE, MEDIUM_ABOVE = 5, 1
#: how many search hits a reader's search looks through to find the ones they may see
MAX_SEARCH_SCAN = 2_000


def node_dict(graph: LineageGraph, node_id: str, depth: int) -> Node:
    job = graph.job_record(node_id) if node_id.startswith("job:") else None
    record = job if job is not None else graph.dataset_record(node_id)
    if record is None:
        raise NodeNotFound(f"unknown node {node_id}")
    kind = ids.JOB if job is not None else ids.DATASET
    node: Node = {
        "id": node_id,
        "type": kind,
        "namespace": record.namespace,
        "name": record.name,
        "depth": depth,
    }
    if isinstance(record, DatasetRecord):
        node["fields"] = [{"name": name, "type": type_} for name, type_, _ in record.fields]
        return node
    latest = graph.latest_run(record)
    node["latestRun"] = latest.summary() if latest is not None else None
    ran = ran_by_nodes(graph, latest)
    if ran:  # the latest run was run by other runs (a dbt model by dbt, by an Airflow task)
        node["ranBy"] = ran
    if graph.declared_only(record):
        node["declared"] = True  # known from its declaration in DAG code only: no run yet
    return node


def _edge_list(graph: LineageGraph, edges: Edges) -> list[Edge]:
    """The edges of an answer, sorted; a ``triggered`` edge names its triggers (:mod:`.triggers`)."""
    found: list[Edge] = []
    for (origin, destination), state in sorted(edges.items()):
        edge: Edge = {"origin": origin, "destination": destination, "state": state}
        if state == TRIGGERED:
            edge["triggers"] = [t.as_json(graph) for t in edge_triggers(graph, (origin, destination))]
        found.append(edge)
    return found


def _nodes(graph: LineageGraph, seen: dict[str, int], start: str) -> list[Node]:
    graph.prefetch_records(seen)
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
    edge_list = _edge_list(graph, edges)
    for walked, upstream in walks:
        for node, level in sorted(walked.restricted.items()):
            if node in seen:
                nodes.append(restricted_node(node, upstream=upstream, depth=level))
                edge_list.append(restricted_edge(node, upstream=upstream))
    answer: Node = {"target": node_dict(graph, start, 0), "nodes": nodes, "edges": edge_list}
    if truncated:
        answer["truncated"] = dict(sorted(truncated.items()))
    return answer


def _stamp(
    answer: dict[str, Any], graph: LineageGraph, as_of: int | None, visibility: Visibility | None = None
) -> dict[str, Any]:
    """``exact`` (whether the source could answer exactly what was asked) and ``asOf`` when given (with
    ``retainedFrom`` when that is before the source's retention window); the nodes' ``ranBy`` without the
    runs of jobs the reader may not see."""
    for node in (answer["target"], *answer.get("nodes", ())):
        if visibility is not None and "ranBy" in node:
            node["ranBy"] = visible_ran_by(node["ranBy"], visibility)
            if not node["ranBy"]:
                del node["ranBy"]
    answer["exact"] = graph.exact
    if as_of is not None:
        answer["asOf"] = w.format_micros(as_of)
        retained_from = getattr(graph, "retained_from", None)  # a store whose old history was deleted
        if retained_from is not None and as_of < retained_from:
            answer["retainedFrom"] = w.format_micros(retained_from)
    return answer


@attrs.frozen
class Way:
    """How a question walks: its ``as_of``, ``include_retired`` and ``include_declared`` (see
    :class:`LineageQueries`)."""

    as_of: int | None = None
    retired: bool = False
    declared: bool = True

    def walk(self, graph: LineageGraph, seen_by: Visibility | None, start: str, depth: int, up: bool) -> Walk:
        """:func:`.walk.walk` from ``start`` this way, through what ``seen_by`` lets the reader see."""
        node = seen_by.node if seen_by is not None else None
        return walk(
            graph, start, depth, upstream=up, declared=self.declared, retired=self.retired, visible=node
        )


def _guarded(
    method: Callable[Concatenate[LineageQueries, _P], _R],
) -> Callable[Concatenate[LineageQueries, _P], _R]:
    """A question holds the source's guard, and reads one graph however many steps and parts it has
    (its walk, the runs' histories, the latest assertions; :meth:`LineageSource.one_view`): one
    snapshot of a store, through one connection, each record read once."""

    @functools.wraps(method)
    def wrapper(self: LineageQueries, *args: _P.args, **kwargs: _P.kwargs) -> _R:
        with self.source.guard(), self.source.one_view():
            return method(self, *args, **kwargs)

    return wrapper


class LineageQueries:
    """Queries over one :class:`LineageSource`; every answer is JSON-ready. Safe to share between threads
    while another thread calls ``source.refresh()``.

    ``may_read_dag`` limits every answer to what one reader may see (:mod:`.visibility`); ``None`` shows
    everything. :meth:`scoped` gives a reader's view of the same source.

    ``as_of`` (epoch microseconds) answers from what the events up to that time said; ``include_retired``
    also follows edges the job no longer reports (:mod:`.retirement`), in state ``"retired"``;
    ``include_declared`` (the default) follows the declared edges of jobs that have not run
    (:mod:`.declared`), in state ``"declared"``. Every graph answer says whether it is ``exact``.
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
        if found is None or found.graph is not graph:  # a new graph: the last one's answers go
            found = Visibility(graph, self.may_read_dag)
            self._visibility = {key: found}
        return found

    def _graph(self, node_id: str, depth: int, way: Way = Way()) -> tuple[LineageGraph, Visibility | None]:
        """The graph around a node the reader may see; NodeNotFound for one they may not."""
        ids.node_type(node_id)
        graph = self.source.graph_for(node_id, depth, as_of=way.as_of, retired=way.retired)
        visibility = self.visibility(graph)
        if not graph.has_node(node_id) or (visibility is not None and not visibility.node(node_id)):
            raise NodeNotFound(f"unknown node {node_id}")
        return graph, visibility

    def _dataset_graph(
        self, dataset_id: str, depth: int, way: Way = Way()
    ) -> tuple[LineageGraph, Visibility | None]:
        if ids.node_type(dataset_id) != ids.DATASET:
            raise NodeNotFound(f"{dataset_id} is not a dataset")
        return self._graph(dataset_id, depth, way)

    def _around(self, node_id: str, depth: int, limit: int | None, way: Way, ups: tuple[bool, ...]) -> Node:
        graph, visibility = self._graph(node_id, depth, way)
        walks = [(way.walk(graph, visibility, node_id, depth, up), up) for up in ups]
        return _stamp(_shape(graph, node_id, walks, limit), graph, way.as_of, visibility)

    @_guarded
    def upstream(
        self,
        node_id: str,
        depth: int = 10,
        limit: int | None = None,
        *,
        as_of: int | None = None,
        include_retired: bool = False,
        include_declared: bool = True,
    ) -> dict[str, Any]:
        return self._around(node_id, depth, limit, Way(as_of, include_retired, include_declared), (True,))

    @_guarded
    def downstream(
        self,
        node_id: str,
        depth: int = 10,
        limit: int | None = None,
        *,
        as_of: int | None = None,
        include_retired: bool = False,
        include_declared: bool = True,
    ) -> dict[str, Any]:
        return self._around(node_id, depth, limit, Way(as_of, include_retired, include_declared), (False,))

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
        way = Way(as_of, include_retired, include_declared)
        return self._around(node_id, depth, limit, way, (True, False))

    def _failed_assertions(
        self, walked: dict[str, int], as_of: int | None, visibility: Visibility | None
    ) -> dict[str, list[dict[str, Any]]]:
        """:func:`.failed.failed_assertions` of the walked datasets (``walked``: {node: depth}), asked of the
        source nearest first, as the reader may see them."""
        datasets = sorted((n for n in walked if n.startswith("dataset:")), key=lambda n: (walked[n], n))
        latest = self.source.latest_assertions(datasets, as_of=as_of)
        return failed.failed_assertions(latest, visibility.job if visibility is not None else None)

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
        """Upstream jobs whose latest run FAILED or ABORTED, upstream DAGs whose run that started a DAG run
        upstream FAILED or ABORTED (cross-DAG lineage, :mod:`.triggers`), and datasets (the target included)
        whose latest assertions failed (``failedAssertions``: :mod:`.failed`), and the edges from them to
        the target."""
        way = Way(as_of, include_retired, include_declared)
        graph, visibility = self._dataset_graph(dataset_id, depth, way)
        walked = way.walk(graph, visibility, dataset_id, depth, True)
        seen, edges = walked.seen, walked.edges
        asserted = self._failed_assertions(seen, as_of, visibility)
        bad = failed.failed_jobs(graph, seen) | failed_origins(graph, edges) | set(asserted)
        answer: dict[str, Any] = {
            "target": node_dict(graph, dataset_id, 0),
            "nodes": _nodes(graph, {n: seen[n] for n in bad}, dataset_id),
            "edges": _edge_list(graph, failed.paths_from(bad, edges)),
        }
        for node in (answer["target"], *answer["nodes"]):
            if node["id"] in asserted:
                node["failedAssertions"] = asserted[node["id"]]
        return _stamp(answer, graph, as_of, visibility)

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
        """Downstream jobs and datasets, their owners, and HIGH (>5 jobs) / MEDIUM (>1) / LOW (visible
        jobs only; hidden ones are ``RESTRICTED`` placeholders)."""
        way = Way(as_of, include_retired, include_declared)
        graph, visibility = self._dataset_graph(dataset_id, depth, way)
        walked = way.walk(graph, visibility, dataset_id, depth, False)
        answer = _stamp(_shape(graph, dataset_id, [(walked, False)], None), graph, as_of, visibility)
        nodes = answer["nodes"]
        jobs = [n for n in nodes if n["type"] == ids.JOB]
        records = [
            (graph.job_record if n["type"] == ids.JOB else graph.dataset_record)(n["id"]) for n in nodes
        ]
        owners = {owner for record in records if record is not None for owner in record.owners}
        level = "HIGH" if len(jobs) > HIGH_ABOVE else "MEDIUM" if len(jobs) > MEDIUM_ABOVE else "LOW"
        return {**answer, "level": level, "owners": sorted(owners)}

    @_guarded
    def what_changed(
        self,
        dataset_id: str,
        baseline_runs: int = 7,
        depth: int = 10,
        *,
        as_of: int | None = None,
        thresholds: changes.Thresholds | None = None,
        now: int | None = None,
        max_nodes: int | None = changes.MAX_NODES,
    ) -> dict[str, Any]:
        """What changed upstream of a dataset, the dataset included: each node's latest run against its
        last ``baseline_runs`` completed runs, the likely cause first, and the datasets whose latest
        assertions failed (``failedAssertions``, as in :meth:`failed_upstream`; docs/what-changed.md). ``now``
        (epoch microseconds) is when freshness is judged: default ``as_of``, else the clock. Only the
        ``max_nodes`` walked nodes nearest the target are compared (None: all); the answer's
        ``notCompared`` says how many farther ones were not."""
        if baseline_runs < 1 or depth < 0:
            raise ValueError("baseline_runs must be 1 or more and depth 0 or more")
        way = Way(as_of)
        graph, visibility = self._dataset_graph(dataset_id, depth, way)
        walked = way.walk(graph, visibility, dataset_id, depth, True)
        seen, not_compared = changes.nearest(walked.seen, max_nodes)
        histories = self.source.run_history(
            sorted(seen),
            rules.job_runs(baseline_runs),
            as_of=as_of,
            dataset_runs=rules.dataset_runs(baseline_runs),
        )
        if visibility is not None:
            histories = changes.visible_histories(histories, visibility)
        moment = now if now is not None else as_of if as_of is not None else time.time_ns() // 1000
        asserted = self._failed_assertions(seen, as_of, visibility)
        return changes.answer(
            node_dict(graph, dataset_id, 0),
            seen,
            walked.edges,
            histories,
            baseline_runs=baseline_runs,
            thresholds=thresholds or changes.Thresholds(),
            now=moment,
            as_of=as_of,
            failed_assertions=asserted,
            not_compared=not_compared,
        )

    @_guarded
    def schema_diff(
        self, dataset_id: str, proposed: Any = None, *, as_of: int | None = None
    ) -> dict[str, Any]:
        """Changes between the last two schema versions, or from the current one to ``proposed``."""
        graph, _ = self._dataset_graph(dataset_id, 1, Way(as_of))
        versions = self.source.schema_versions(dataset_id, as_of=as_of)
        if proposed is not None:
            changes = diff_fields(versions[0] if versions else (), parse_proposed(proposed))
        else:
            changes = diff_fields(versions[1], versions[0]) if len(versions) > 1 else []
        versions_json = [[{"name": n, "type": t} for n, t in v] for v in versions[:2]]
        answer = {"target": node_dict(graph, dataset_id, 0), "changes": changes, "versions": versions_json}
        return _stamp(answer, graph, as_of)

    @_guarded
    def columns(
        self, dataset_id: str, column: str, depth: int = 10, *, as_of: int | None = None
    ) -> dict[str, Any]:
        """Upstream columns feeding ``column`` and downstream columns it feeds, with transformations, and
        the column hops crossed (columns of datasets the reader may not see are left out)."""
        if ids.node_type(dataset_id) != ids.DATASET:
            raise NodeNotFound(f"{dataset_id} is not a dataset")
        graph = self.source.column_graph(dataset_id, column, depth, as_of=as_of)
        visibility = self.visibility(graph)
        record = graph.dataset_record(dataset_id)
        if record is None or (visibility is not None and not visibility.dataset(dataset_id)):
            raise NodeNotFound(f"unknown node {dataset_id}")
        known = {name for name, _, _ in record.fields} | set(record.columns)
        if column not in known and not graph.column_readers_of(dataset_id, column):
            raise NodeNotFound(f"{dataset_id} has no column {column!r}")
        shown = visibility.dataset if visibility is not None else None
        upstream, up_hops = column_walk(graph, dataset_id, column, depth, upstream=True, visible=shown)
        downstream, down_hops = column_walk(graph, dataset_id, column, depth, upstream=False, visible=shown)
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
        """Datasets and jobs whose name contains ``text``, best match first (visible ones only)."""
        scan = limit if self.may_read_dag is None else min(limit * 10 + 100, MAX_SEARCH_SCAN)
        found: list[Node] = []
        for kind, ns, name in self.source.search(text, scan):
            node_id = (ids.dataset_id if kind == ids.DATASET else ids.job_id)(ns, name)
            if self.may_read_dag is None or self._shown(node_id):
                found.append({"id": node_id, "type": kind, "namespace": ns, "name": name, "depth": 0})
                if self.may_read_dag is not None and len(found) >= limit:
                    break
        return found

    def _shown(self, node_id: str) -> bool:
        try:
            self._graph(node_id, 1)
        except NodeNotFound:
            return False
        return True

    @_guarded
    def descendants(self, job_id: str, limit: int = 200, *, as_of: int | None = None) -> list[str]:
        """Ids of the jobs the job's latest run (as of ``as_of``) ran (dbt's runs under the task that ran
        dbt), children first; empty for a job that ran none, or a dataset."""
        if ids.node_type(job_id) != ids.JOB:
            return []
        graph, visibility = self._graph(job_id, 1, Way(as_of))
        found = descendant_jobs(graph, job_id, limit)
        return found if visibility is None else [child for child in found if visibility.job(child)]

    @_guarded
    def node_details(self, node_id: str, *, as_of: int | None = None) -> dict[str, Any]:
        depth = 2 if ids.node_type(node_id) == ids.DATASET else 1  # ValueError for a malformed id
        if self.may_read_dag is None:
            return self.source.node_details(node_id, as_of=as_of)
        _, visibility = self._graph(node_id, depth, Way(as_of, retired=True))
        assert visibility is not None
        return visible_details(self.source.node_details(node_id, as_of=as_of), visibility)

    @_guarded
    def airflow_runs(self, job_id: str, airflow_run_id: str) -> list[str]:
        """Ids of the job's runs in one Airflow DAG run (its ``run_id``), newest first: a task instance's
        tries, however old the DAG run; none for a job the reader may not see."""
        if ids.node_type(job_id) != ids.JOB or (self.may_read_dag is not None and not self._shown(job_id)):
            return []
        return self.source.airflow_runs(job_id, airflow_run_id)

    @_guarded
    def run_details(self, run_id: str) -> dict[str, Any]:
        """Inputs, outputs and facets of one run; a run of a job the reader may not see is "not found",
        decided before its details are read (a hidden run costs what a missing one does)."""
        if self.may_read_dag is None:
            return self.source.run_details(run_id)
        jobs = self.source.jobs_of_run(run_id)
        if jobs is not None and not (jobs and all(self._shown(job_id) for job_id in jobs)):
            raise NodeNotFound(f"unknown run {run_id}")
        details = self.source.run_details(run_id)
        job_id = str((details.get("job") or {}).get("id") or "")
        try:
            _, visibility = self._graph(job_id, 1)
        except (NodeNotFound, ValueError):
            raise NodeNotFound(f"unknown run {run_id}") from None
        assert visibility is not None
        return visible_run_details(details, visibility)

    @_guarded
    def time_range(self) -> dict[str, Any]:
        """``{"from", "to"}``: the earliest and the latest event time the source knows (null: unknown); for a
        reader of some DAGs only, the earliest and the latest time of the runs they may see."""
        first, last = self.source.time_range()
        if self.may_read_dag is not None and (first, last) != (None, None):
            first, last = visible_jobs.time_range(self.source, self.may_read_dag)
        return {"from": w.format_micros(first), "to": w.format_micros(last)}

    def written_since(self, since: int, limit: int) -> list[str]:
        """Ids of up to ``limit`` datasets this reader may see, last written at or after ``since`` (epoch
        microseconds), newest first (a reader of some DAGs: :func:`.visible_jobs.written_since`)."""
        if self.may_read_dag is None:
            return self.source.whole_graph().written_since(since, limit)
        return visible_jobs.written_since(self.source, self.may_read_dag, since, limit)

    def may_read(self, dag_id: str) -> bool:
        """Whether this reader may read the DAG ``dag_id`` (always, unscoped)."""
        return self.may_read_dag is None or bool(self.may_read_dag(dag_id))
