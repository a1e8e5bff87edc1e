"""Who a lineage change affects: the downstream of each changed dataset in the current lineage graph.

The current graph is what the configured source (event log or Marquez) knows now: the runs, and the
declared lineage published with ``publish-static`` (jobs that have not run yet are included). For each
change that alters what a dataset holds or whether it is refreshed (a schema change, a column whose
lineage changed, an output a task no longer writes, a removed task's outputs), the downstream jobs, the
owners to notify and the impact level come from :meth:`LineageQueries.impact` (HIGH above 5 downstream
jobs, MEDIUM above 1, else LOW). A dataset the current graph does not know has no known impact.
"""

from __future__ import annotations

from typing import Any

from airflow_lineage_plus.exceptions import NodeNotFound
from airflow_lineage_plus.graph import LineageQueries
from airflow_lineage_plus.graph.queries import HIGH_ABOVE, MEDIUM_ABOVE

#: Changes whose downstream is affected; the others change only the task's own lineage.
_IMPACTFUL = {"COLUMN_REMOVED", "TYPE_CHANGED", "COLUMN_ADDED", "COLUMN_LINEAGE_CHANGED", "OUTPUT_REMOVED"}


def targets(change: dict[str, Any]) -> list[str]:
    """The datasets whose downstream a change affects."""
    if change["kind"] == "JOB_REMOVED":
        return list(change["outputs"])
    return [change["dataset"]] if change["kind"] in _IMPACTFUL else []


def add_impact(answer: dict[str, Any], queries: LineageQueries, depth: int = 10) -> None:
    """Give each change of a :func:`.compare.compare` answer its ``impact``, and the answer its totals."""
    cache: dict[str, dict[str, Any] | None] = {}
    affected_jobs: set[str] = set()
    affected_owners: set[str] = set()
    for change in answer["changes"]:
        datasets = targets(change)
        if not datasets:
            continue
        jobs: set[str] = set()
        owners: set[str] = set()
        unknown = []
        for dataset in datasets:
            if dataset not in cache:
                cache[dataset] = _downstream(queries, dataset, depth)
            found = cache[dataset]
            if found is None:
                unknown.append(dataset)
                continue
            jobs.update(found["jobs"])
            owners.update(found["owners"])
        change["impact"] = {
            "level": level(len(jobs)) if len(unknown) < len(datasets) else None,
            "jobs": sorted(jobs),
            "owners": sorted(owners),
            "unknownDatasets": unknown,
        }
        if change["severity"] == "breaking":
            affected_jobs |= jobs
            affected_owners |= owners
    answer["impact"] = {"breakingJobs": sorted(affected_jobs), "breakingOwners": sorted(affected_owners)}


def level(job_count: int) -> str:
    return "HIGH" if job_count > HIGH_ABOVE else "MEDIUM" if job_count > MEDIUM_ABOVE else "LOW"


def _downstream(queries: LineageQueries, dataset: str, depth: int) -> dict[str, Any] | None:
    try:
        found = queries.impact(dataset, depth)
    except NodeNotFound:
        return None
    return {
        "jobs": [node["id"] for node in found["nodes"] if node["type"] == "JOB"],
        "owners": found["owners"],
    }
