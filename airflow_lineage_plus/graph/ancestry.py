"""Who ran a run: the chain of parent runs an event's ``parent`` facet records.

A dbt model's run is a child of ``dbt-ol``'s run of the command, which is a child of the Airflow task
that ran dbt, which is a child of the DAG run (the root: it has no parent of its own). The graph keeps
each run's parent run id (:attr:`RunRecord.parent_run_id`); this module follows them, so an answer can
name, next to a failed dbt model, the Airflow task that ran it; a child run can be attributed to the task
(and DAG) it ran in; and a task's view can show the jobs it ran.

Downwards, :meth:`LineageGraph.child_jobs` names the jobs with a run under a run (a store's graph asks
the store; a graph as of a time asks its catalog, then folds those jobs up to its time).
"""

from __future__ import annotations

from typing import Any

from airflow_lineage_plus.graph.model import LineageGraph
from airflow_lineage_plus.graph.runs import RunRecord

#: Parent links followed at most (a guard against malformed or cyclic parent facets).
MAX_CHAIN = 16


def parent_chain(graph: LineageGraph, run: RunRecord) -> list[RunRecord]:
    """The parent runs of ``run``, nearest first, up to the root; stops at a parent the graph lacks."""
    chain: list[RunRecord] = []
    seen = {run.run_id}
    while run.parent_run_id not in seen and len(chain) < MAX_CHAIN:
        parent = parent_run(graph, run)  # None when there is no parent run, or the graph lacks it
        if parent is None:
            break
        chain.append(parent)
        seen.add(run.parent_run_id)
        run = parent
    return chain


def parent_run(graph: LineageGraph, run: RunRecord) -> RunRecord | None:
    """The run that ran ``run`` (its parent facet's run), when the graph has it. A graph folded where a
    question looks (:mod:`.focus`) reads the parent job first, so that its runs are there."""
    if run.parent_run_id is None:
        return None
    found = graph.runs.get(run.parent_run_id)
    if found is None and run.parent_job_id is not None:
        graph.job_record(run.parent_job_id)  # a focused graph folds the job's events here
        found = graph.runs.get(run.parent_run_id)
    return found


def ran_by(graph: LineageGraph, run: RunRecord) -> list[RunRecord]:
    """The runs that ran ``run``, nearest first: its parent chain without the root (the DAG run, which
    every task of the DAG has as parent). Empty for a task run of a DAG run."""
    chain = parent_chain(graph, run)
    if chain and chain[-1].parent_run_id is None:
        chain.pop()
    return chain


def ran_by_nodes(graph: LineageGraph, run: RunRecord | None) -> list[dict[str, Any]]:
    """:func:`ran_by` as JSON: the job (id, namespace, name) and the run (id, state) of each."""
    if run is None or run.parent_run_id is None:
        return []
    nodes = []
    for parent in ran_by(graph, run):
        job = graph.job_record(parent.job_id)
        if job is None:
            continue
        nodes.append(
            {
                "id": job.id,
                "namespace": job.namespace,
                "name": job.name,
                "runId": parent.run_id,
                "state": parent.state,
            }
        )
    return nodes


def child_runs(graph: LineageGraph, run_id: str) -> list[RunRecord]:
    """The runs whose parent run is ``run_id``, by job id."""
    found: list[RunRecord] = []
    for job_id in sorted(graph.child_jobs(run_id)):
        job = graph.job_record(job_id)
        if job is not None:
            found.extend(r for r in graph.all_runs(job) if r.parent_run_id == run_id and r.run_id is not None)
    return found


def descendant_jobs(graph: LineageGraph, job_id: str, limit: int = 200) -> list[str]:
    """Ids of the jobs whose runs the job's latest run ran, children first (a task's ``dbt-run-<project>``,
    then dbt's model and test jobs), at most ``limit``."""
    job = graph.job_record(job_id)
    latest = graph.latest_run(job) if job is not None else None
    found: list[str] = []
    frontier = [latest] if latest is not None and latest.run_id is not None else []
    seen_runs = {run.run_id for run in frontier}
    while frontier and len(found) < limit:
        following: list[RunRecord] = []
        for run in frontier:
            for child_run in child_runs(graph, run.run_id or ""):
                if child_run.job_id not in found and child_run.job_id != job_id:
                    found.append(child_run.job_id)
                if child_run.run_id not in seen_runs:
                    seen_runs.add(child_run.run_id)
                    following.append(child_run)
        frontier = following
    return found[:limit]
