"""Cross-DAG lineage: the upstream DAG runs whose asset events started a job's DAG run.

Airflow 3 starts a DAG run from asset events. The OpenLineage provider puts a ``jobDependencies`` facet
on the events of such a DAG run: one ``upstream`` entry per task run whose asset event the DAG run
consumed (its job and run). The store keeps them (``lineage_plus_run_trigger``), and the graph follows
them as an edge of their own, in state :data:`TRIGGERED`:

* from the DAG job of each triggering task run (the job of its ``parent`` run: the upstream DAG run), or
  from the task's job when its DAG run is not known,
* to a job whose latest run is such a DAG run, or whose latest run's parent is (the tasks of the
  triggered DAG run).

Only walks upstream cross it. An edge names its triggers (:meth:`Trigger.as_json`): the upstream DAG run,
the task run that emitted the asset event and the run it started.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

import attrs

from airflow_lineage_plus.graph.runs import FAILED_STATES

if TYPE_CHECKING:
    from airflow_lineage_plus.graph.model import LineageGraph

#: An edge from an upstream DAG run whose asset event started the destination's DAG run.
TRIGGERED = "triggered"


@attrs.frozen(order=True)
class Trigger:
    """One upstream job run that started ``triggered_run_id``: ``origin`` is the node the edge comes from
    (the upstream DAG's job, or the task's job when its DAG run is not known), ``run_id`` the upstream
    DAG run (None when not known), ``task_job`` and ``task_run_id`` the task run whose asset event it was
    (``task_run_id`` None when the facet names no run)."""

    origin: str
    run_id: str | None
    task_job: str
    task_run_id: str | None
    triggered_run_id: str

    def as_json(self, graph: LineageGraph) -> dict[str, Any]:
        """The trigger as an edge of an answer names it (docs/graph.md, "JSON contract")."""
        upstream = graph.runs.get(self.run_id) if self.run_id is not None else None
        return {
            "runId": self.run_id,
            "state": upstream.state if upstream is not None else None,
            "taskJob": self.task_job,
            "taskRunId": self.task_run_id,
            "triggeredRunId": self.triggered_run_id,
        }


def triggers_of(graph: LineageGraph, job_id: str) -> list[Trigger]:
    """The triggers of the DAG run the job's latest run is, or belongs to (sorted; the nodes they come
    from are in the graph)."""
    job = graph.job_record(job_id)
    latest = graph.latest_run(job) if job is not None else None
    if latest is None:
        return []
    started = [run_id for run_id in (latest.run_id, latest.parent_run_id) if run_id is not None]
    graph.load_triggers(started)
    found = set()
    for run_id in started:
        for task_job, task_run_id in graph.triggers.get(run_id, ()):
            task_run = graph.runs.get(task_run_id) if task_run_id else None
            origin, dag_run_id = task_job, None
            if task_run is not None and task_run.parent_run_id and task_run.parent_job_id:
                origin, dag_run_id = task_run.parent_job_id, task_run.parent_run_id
            if origin != job_id and graph.job_record(origin) is not None:
                found.add(Trigger(origin, dag_run_id, task_job, task_run_id or None, run_id))
    return sorted(found)


def edge_triggers(graph: LineageGraph, edge: tuple[str, str]) -> list[Trigger]:
    """The triggers a ``triggered`` edge (origin, destination) stands for."""
    origin, destination = edge
    return [t for t in triggers_of(graph, destination) if t.origin == origin]


def failed_origins(graph: LineageGraph, edges: Mapping[tuple[str, str], str]) -> set[str]:
    """The origins of ``triggered`` edges whose triggering DAG run FAILED or ABORTED (an asset event is
    recorded only for a task that succeeded, so the DAG run failed after it, in another task)."""
    found = set()
    for edge, state in edges.items():
        for trigger in edge_triggers(graph, edge) if state == TRIGGERED else ():
            run = graph.runs.get(trigger.run_id) if trigger.run_id is not None else None
            if run is not None and run.state in FAILED_STATES:
                found.add(edge[0])
    return found
