"""Pieces of the JSON answers that every lineage source builds the same way (the event log's and
Marquez's): run summaries, column-lineage inputs, search ranking, failed jobs."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from airflow_lineage_plus import facet_keys as fk
from airflow_lineage_plus.graph import failed
from airflow_lineage_plus.graph.records import Transform
from airflow_lineage_plus.graph.runs import RunRecord

if TYPE_CHECKING:
    from airflow_lineage_plus.graph.model import LineageGraph


def run_summary(run: RunRecord) -> dict[str, Any]:
    return {**run.summary(), "skipReason": run.skip_reason, "executionMode": run.exec_mode}


def task_instance_ids(facets: Any) -> dict[str, Any] | None:
    """Airflow ids of the task instance behind a run, from its run facets (the provider's ``airflow``
    facet): dag_id, run_id, task_id, try_number, map_index; None when the run has no such facet."""
    airflow = facets.get(fk.AIRFLOW_RUN) if isinstance(facets, dict) else None
    if not isinstance(airflow, dict):
        return None
    task_instance = _dict(airflow.get("taskInstance"))
    return {
        "dag_id": _dict(airflow.get("dag")).get("dag_id"),
        "run_id": _dict(airflow.get("dagRun")).get("run_id"),
        "task_id": _dict(airflow.get("task")).get("task_id"),
        "try_number": task_instance.get("try_number"),
        "map_index": task_instance.get("map_index"),
    }


def _dict(value: Any) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


def column_input(namespace: str, name: str, field: str, transforms: tuple[Transform, ...]) -> dict[str, Any]:
    return {
        "namespace": namespace,
        "name": name,
        "column": field,
        "transformations": [{"type": t, "subtype": s, "description": d} for t, s, d in transforms],
    }


def rank_search(found: list[tuple[str, str, str]], needle: str) -> list[tuple[str, str, str]]:
    def key(item: tuple[str, str, str]) -> tuple[int, int, str, str, str]:
        name = item[2].lower()
        rank = 0 if name == needle else 1 if name.startswith(needle) else 2 if needle in name else 3
        return (rank, len(name), item[2], item[1], item[0])

    return sorted(found, key=key)


def failed_jobs(graph: LineageGraph) -> list[str]:
    """Ids of the graph's jobs whose latest run FAILED or ABORTED, sorted (of those the graph finds may
    have: :meth:`~.model.LineageGraph.maybe_failed_job_ids`)."""
    return sorted(failed.failed_jobs(graph, graph.maybe_failed_job_ids()))
