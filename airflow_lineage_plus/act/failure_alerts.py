"""Impact alerts of a failed task: one per owner of what its failure makes stale downstream.

The stale datasets are the task's declared outputs plus those the lineage saw it write; everything
downstream of them (to :data:`~.alert_impact.DEPTH` edges) is affected, and each owner of an affected
dataset or job gets one alert listing all of it, theirs marked, as far as the recipient may see it: a
recipient whose Airflow user may not read the failed task's DAG is told only that an upstream job they may
not see failed, and sees of the impact what the Lineage view shows them (:mod:`.audience`).
"""

from __future__ import annotations

from airflow_lineage_plus.act.alert_impact import Impact, downstream_impact, outputs_of
from airflow_lineage_plus.act.failure import Failure
from airflow_lineage_plus.act.message import FAILURE, Alert, Telling, first_node, lineage_link, make_alerts
from airflow_lineage_plus.graph import LineageSource
from airflow_lineage_plus.graph.visibility import DagAccess

#: The head of an alert to a recipient with no Airflow user.
UPSTREAM_FAILED = "An upstream job failed."
#: The head of an alert to a user who may not read the DAG of the job that failed.
HIDDEN_UPSTREAM_FAILED = "An upstream job you may not see failed."


def failure_alerts(
    source: LineageSource, failure: Failure, *, base_url: str, recipients: dict[str, list[str]]
) -> list[Alert]:
    """The alerts for ``failure``, one per affected owner and recipient (none when nothing downstream is
    owned), each telling what the recipient may read (docs/alerts.md)."""
    outputs = sorted(set(failure.outputs) | set(outputs_of(source, failure.job_id)))
    impact = downstream_impact(source, outputs, skip=failure.job_id)
    task = f"{failure.dag_id}.{failure.task_id}"
    map_part = f", map index {failure.map_index}" if failure.map_index >= 0 else ""

    def tell(access: DagAccess | None, shown: Impact, owner: str) -> Telling:
        stale = f"{len(shown.stale)} dataset(s) stale"
        if access is None:  # no Airflow user: that an upstream failed, and their datasets' names
            link = lineage_link(base_url, first_node(shown, owner))
            return Telling(f"[lineage-plus] an upstream job failed: {stale}", [UPSTREAM_FAILED], link, {})
        if not access.may_read_dag(failure.dag_id):  # what the view shows: an upstream they may not see
            link = lineage_link(base_url, first_node(shown, owner))
            head = [HIDDEN_UPSTREAM_FAILED]
            return Telling(
                f"[lineage-plus] {shown.level} impact: an upstream job failed, {stale}", head, link, {}
            )
        head = [
            f"Task {task} failed.",
            f"  DAG run: {failure.run_id}, try {failure.try_number}{map_part}",
            f"  Error: {failure.error or '(no error message)'}",
        ]
        subject = f"[lineage-plus] {shown.level} impact: {task} failed, {stale}"
        facts = {"kind": FAILURE, "failure": failure.to_json()}
        return Telling(subject, head, lineage_link(base_url, failure.job_id), facts)

    return make_alerts(FAILURE, failure.key, impact, recipients, tell)
