"""Who a failure or a stale dataset affects: the datasets now stale, the jobs downstream, their owners.

Read from any lineage source (the event log or Marquez) through the graph layer; nothing here imports
Airflow. The level uses the thresholds of ``lineage-plus impact`` (HIGH above 5 downstream jobs, MEDIUM
above 1, else LOW), so an alert and the CLI say the same.
"""

from __future__ import annotations

from typing import Any

import attr

from airflow_lineage_plus import node_ids as ids
from airflow_lineage_plus.exceptions import NodeNotFound
from airflow_lineage_plus.graph import LineageSource
from airflow_lineage_plus.graph.model import LineageGraph
from airflow_lineage_plus.graph.queries import HIGH_ABOVE, MEDIUM_ABOVE, node_dict
from airflow_lineage_plus.graph.visibility import DagPredicate, Visibility, visible_ran_by
from airflow_lineage_plus.graph.walk import walk

#: How many edges downstream an impact is followed (as ``lineage-plus impact``'s default).
DEPTH = 10

Node = dict[str, Any]


def level_of(downstream_jobs: int) -> str:
    """HIGH above 5 downstream jobs, MEDIUM above 1, else LOW (``lineage-plus impact``'s rule)."""
    return "HIGH" if downstream_jobs > HIGH_ABOVE else "MEDIUM" if downstream_jobs > MEDIUM_ABOVE else "LOW"


@attr.frozen
class Impact:
    """Everything downstream of some datasets that went stale.

    Attributes:
        stale: the datasets now stale (the starting ones, then those downstream), as graph nodes with
            their ``owners``.
        jobs: the downstream jobs (graph nodes with ``latestRun`` and ``owners``), nearest first.
        level: HIGH, MEDIUM or LOW.
        owners: owner -> ids of the stale datasets and downstream jobs they own.
    """

    stale: tuple[Node, ...]
    jobs: tuple[Node, ...]
    level: str
    owners: dict[str, tuple[str, ...]]
    #: node id -> the graph it was found in (where a reader's visibility of it is decided)
    graphs: dict[str, LineageGraph] = attr.field(factory=dict, eq=False, repr=False)
    #: whether lineage a reader may not see was left out (:meth:`seen_by`)
    hidden: bool = False

    def nodes_of(self, owner: str) -> list[Node]:
        """The stale datasets and downstream jobs ``owner`` owns."""
        mine = set(self.owners.get(owner, ()))
        return [n for n in (*self.stale, *self.jobs) if n["id"] in mine]

    def seen_by(self, may_read_dag: DagPredicate | None) -> Impact:
        """The impact as a reader of the DAGs ``may_read_dag`` allows sees it (the Lineage view's rule,
        :mod:`airflow_lineage_plus.graph.visibility`): what they may not see is left out, and the level
        counts the jobs they see. ``None``: a reader of everything."""
        if may_read_dag is None:
            return self
        seen: dict[int, Visibility] = {}

        def shown(node: Node) -> bool:
            graph = self.graphs.get(node["id"])
            if graph is None:
                return False
            visibility = seen.setdefault(id(graph), Visibility(graph, may_read_dag))
            return visibility.node(node["id"])

        def cleaned(node: Node) -> Node:
            if "ranBy" not in node:
                return node
            graph = self.graphs[node["id"]]
            return {**node, "ranBy": visible_ran_by(node["ranBy"], seen[id(graph)])}

        stale = tuple(cleaned(n) for n in self.stale if shown(n))
        jobs = tuple(cleaned(n) for n in self.jobs if shown(n))
        kept = {n["id"] for n in (*stale, *jobs)}
        owners = {o: tuple(i for i in ns if i in kept) for o, ns in self.owners.items()}
        return Impact(
            stale=stale,
            jobs=jobs,
            level=level_of(len(jobs)),
            owners={o: ns for o, ns in owners.items() if ns},
            graphs=self.graphs,
            hidden=len(kept) < len(self.stale) + len(self.jobs),
        )


def _owners(graph: LineageGraph, node_id: str) -> tuple[str, ...]:
    record = graph.jobs.get(node_id) or graph.datasets.get(node_id)
    return tuple(record.owners) if record is not None else ()


def outputs_of(source: LineageSource, job_id: str) -> list[str]:
    """Ids of the datasets a job writes (its current edges; none for an unknown job)."""
    with source.guard():
        try:
            graph = source.graph_for(job_id, 1)
        except NodeNotFound:
            return []
        found = graph.neighbours(job_id, upstream=False, declared_too=False)
        return sorted(n for n, _ in found if n in graph.datasets)


def downstream_impact(source: LineageSource, datasets: list[str], *, skip: str | None = None) -> Impact:
    """The impact of ``datasets`` going stale; ``skip`` is a job left out (the one that failed)."""
    found: dict[str, Node] = {}
    graphs: dict[str, LineageGraph] = {}
    with source.guard():
        for start in datasets:
            try:
                graph = source.graph_for(start, DEPTH)
            except NodeNotFound:
                continue
            seen = walk(graph, start, DEPTH, upstream=False).seen
            for node_id, depth in seen.items():
                known = found.get(node_id)
                if node_id == skip or (known is not None and known["depth"] <= depth):
                    continue
                found[node_id] = {**node_dict(graph, node_id, depth), "owners": list(_owners(graph, node_id))}
                graphs[node_id] = graph
    ordered = sorted(found.values(), key=lambda n: (n["depth"], n["id"]))
    stale = tuple(n for n in ordered if n["type"] == ids.DATASET)
    jobs = tuple(n for n in ordered if n["type"] == ids.JOB)
    owners: dict[str, list[str]] = {}
    for node in ordered:
        for owner in node["owners"]:
            owners.setdefault(owner, []).append(node["id"])
    return Impact(
        stale=stale,
        jobs=jobs,
        level=level_of(len(jobs)),
        owners={owner: tuple(node_ids) for owner, node_ids in sorted(owners.items())},
        graphs=graphs,
    )
