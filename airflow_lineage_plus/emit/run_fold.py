"""Fold events that tasks emit themselves into the task instance's own run.

Many tutorials show a task building its own ``OpenLineageClient`` and emitting ``RunEvent``\\ s with a
fresh ``uuid4`` runId for a job of their own. Next to the provider's events that is a second run for
one task instance. :class:`FoldIntoTaskRun` is a transformer for the client's ``transform`` transport:
inside a running task it rewrites such an event to the task instance's run (the provider's
deterministic runId, job ``<dag_id>.<task_id>``, the DAG run as parent) as a ``RUNNING`` event, the same
shape the provider's ``emit_dataset_lineage`` produces, so consumers merge its datasets and facets
into the one run. The original job and run are kept in a ``lineagePlus_foldedFrom`` run facet.
Events of the task run itself, child runs that already name a parent, and events outside a running
task pass through untouched.

Configure it in one line (the client reads it both in the provider and in tasks)::

    OPENLINEAGE__TRANSPORT='{"type": "transform",
      "transformer_class": "airflow_lineage_plus.fold.FoldIntoTaskRun",
      "transport": {"type": "file", "log_file_path": "/path/events.jsonl", "append": true}}'
"""

from __future__ import annotations

from typing import Any

import attr
from openlineage.client.event_v2 import Job, Run, RunEvent, RunState
from openlineage.client.facet_v2 import parent_run
from openlineage.client.transport.transform.transform import EventTransformer

from airflow_lineage_plus import _compat
from airflow_lineage_plus.containment import contained
from airflow_lineage_plus.custom_facets import FoldedFromRunFacet


@attr.frozen
class TaskRun:
    """The provider's identity of the running task instance's run."""

    namespace: str
    job_name: str
    run_id: str
    dag_id: str
    dag_run_id: str


def current_task_run() -> TaskRun | None:
    """The run the provider reports for the task instance running in this process, if any."""
    try:
        from airflow.sdk import get_current_context

        ti = get_current_context()["ti"]
    except Exception:
        return None
    from airflow.providers.openlineage.plugins.macros import (
        lineage_job_name,
        lineage_job_namespace,
        lineage_run_id,
    )

    dag_run = ti.get_template_context()["dag_run"]
    logical_date = dag_run.logical_date or dag_run.run_after
    return TaskRun(
        namespace=lineage_job_namespace(),
        job_name=lineage_job_name(ti),
        run_id=lineage_run_id(ti),
        dag_id=ti.dag_id,
        dag_run_id=_compat.dag_run_id(ti.dag_id, logical_date, dag_run.clear_number or 0),
    )


class FoldIntoTaskRun(EventTransformer):
    """Rewrite self-emitted run events of a running task into that task instance's run."""

    def transform(self, event: Any) -> Any:
        folded = event
        with contained("folding a self-emitted event into its task run"):
            folded = self._fold(event)
        return folded

    def _fold(self, event: Any) -> Any:
        if not isinstance(event, RunEvent):
            return event
        task = current_task_run()
        if task is None or event.run.runId == task.run_id:
            return event
        facets = dict(event.run.facets or {})
        if "parent" in facets:
            return event  # a child run (for example a query) that already points at its parent
        facets["parent"] = parent_run.ParentRunFacet(
            run=parent_run.Run(runId=task.dag_run_id),
            job=parent_run.Job(namespace=task.namespace, name=task.dag_id),
        )
        facets[FoldedFromRunFacet.key] = FoldedFromRunFacet(
            jobNamespace=event.job.namespace,
            jobName=event.job.name,
            runId=event.run.runId,
            eventType=event.eventType.value if event.eventType is not None else None,
        )
        return attr.evolve(
            event,
            eventType=RunState.RUNNING,
            run=Run(runId=task.run_id, facets=facets),
            job=Job(namespace=task.namespace, name=task.job_name, facets=event.job.facets),
        )
