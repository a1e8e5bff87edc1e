"""Impact alerts of a failed task: one per owner of what its failure makes stale downstream.

The stale datasets are the task's declared outputs plus those the lineage saw it write; everything
downstream of them (to :data:`~.impact.DEPTH` edges) is affected, and each owner of an affected dataset or
job gets one alert listing all of it, theirs marked.
"""

from __future__ import annotations

from airflow_lineage_plus.act.failure import Failure
from airflow_lineage_plus.act.impact import downstream_impact, outputs_of
from airflow_lineage_plus.act.message import FAILURE, Alert, lineage_link, make_alerts
from airflow_lineage_plus.graph import LineageSource


def failure_alerts(
    source: LineageSource, failure: Failure, *, base_url: str, recipients: dict[str, list[str]]
) -> list[Alert]:
    """The alerts for ``failure``, one per affected owner (none when nothing downstream is owned)."""
    outputs = sorted(set(failure.outputs) | set(outputs_of(source, failure.job_id)))
    impact = downstream_impact(source, outputs, skip=failure.job_id)
    task = f"{failure.dag_id}.{failure.task_id}"
    map_part = f", map index {failure.map_index}" if failure.map_index >= 0 else ""
    head = [
        f"Task {task} failed.",
        f"  DAG run: {failure.run_id}, try {failure.try_number}{map_part}",
        f"  Error: {failure.error or '(no error message)'}",
    ]
    subject = f"[lineage-plus] {impact.level} impact: {task} failed, {len(impact.stale)} dataset(s) stale"
    facts = {"kind": FAILURE, "failure": failure.to_json()}
    link = lineage_link(base_url, failure.job_id)
    return make_alerts(FAILURE, failure.key, subject, head, impact, link, facts, recipients)
