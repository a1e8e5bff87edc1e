"""``failed-upstream``: what failed upstream of a dataset and the paths from it to the dataset.

Two things count as failed: a job whose latest run FAILED or ABORTED, and a dataset (the target
included) whose latest assertions failed: for each assertion (name and column), the newest result any job
next to the dataset recorded on it (a writer's ``runtime.assertion``, a Great Expectations checkpoint
through ``runtime.record_expectations``, a dbt test reading it), failed. Only the runs of jobs the reader
may see are looked at (:mod:`.visibility`).
"""

from __future__ import annotations

from collections import deque
from collections.abc import Callable, Iterable, Mapping
from typing import Any

from airflow_lineage_plus.graph.history import LatestAssertions
from airflow_lineage_plus.graph.model import LineageGraph
from airflow_lineage_plus.graph.runs import FAILED_STATES
from airflow_lineage_plus.store import wire as w

#: at most this many failed assertions are named per dataset (the rest are counted)
MAX_NAMED = 50
Edges = Mapping[tuple[str, str], str]


def failed_jobs(graph: LineageGraph, nodes: Iterable[str]) -> set[str]:
    """The jobs among ``nodes`` whose latest run FAILED or ABORTED."""
    failed = set()
    for node in nodes:
        job = graph.job_record(node) if node.startswith("job:") else None
        run = graph.latest_run(job) if job is not None else None
        if run is not None and run.state in FAILED_STATES:
            failed.add(node)
    return failed


def failed_assertions(
    latest: Mapping[str, list[LatestAssertions]], visible_job: Callable[[str], bool] | None = None
) -> dict[str, list[dict[str, Any]]]:
    """{dataset: its failed assertions}, each ``{"assertion", "column", "job", "at"}`` (the job whose run
    recorded the failure, when it ended), by assertion then column, at most :data:`MAX_NAMED`; from
    ``latest`` (:meth:`LineageSource.latest_assertions`), newest first per dataset, the runs of jobs
    ``visible_job`` refuses left out."""
    found: dict[str, list[dict[str, Any]]] = {}
    for dataset, entries in latest.items():
        newest: dict[tuple[str, str | None], tuple[bool, LatestAssertions]] = {}
        for entry in entries:
            if visible_job is not None and not visible_job(entry.job_id):
                continue
            for name, column, ok in entry.assertions:
                newest.setdefault((name, column), (ok, entry))
        failed = sorted(
            ((key, entry) for key, (ok, entry) in newest.items() if not ok),
            key=lambda item: (item[0][0], item[0][1] or ""),
        )
        named = [
            {"assertion": name, "column": column, "job": entry.job_id, "at": w.format_micros(entry.at)}
            for (name, column), entry in failed[:MAX_NAMED]
        ]
        if named:
            found[dataset] = named
    return found


def paths_from(failed: set[str], edges: Edges) -> dict[tuple[str, str], str]:
    """The edges of every path from a failed node downstream, within the walk's ``edges``."""
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
    return {(o, d): s for (o, d), s in edges.items() if o in on_path and d in on_path}
