"""Where a failed task instance turns into an alert job: the listener hook and the failure callback.

Both build a :class:`~.failure.Failure` from what is at hand (the task instance, the error, the task's
declared outputs) and hand it to a courier process (:mod:`.courier`): the caller's cost is that hand-off.
Retries do not alert (only a try that ends FAILED does). The error is redacted here, in the process whose
secrets masker knows the task's secrets.
"""

from __future__ import annotations

from typing import Any

from airflow_lineage_plus import conf, datasets
from airflow_lineage_plus.act.courier import hand_off
from airflow_lineage_plus.act.failure import Failure, error_text
from airflow_lineage_plus.author.mixins import RESOLVED_ATTRIBUTE, SPEC_ATTRIBUTE
from airflow_lineage_plus.deliver.redaction import scrub
from airflow_lineage_plus.emit.self_skip import state_name
from airflow_lineage_plus.node_ids import dataset_id


def declared_outputs(task: Any) -> list[str]:
    """Ids of the outputs ``task`` declared, as far as they are known without a connection lookup."""
    spec = getattr(task, SPEC_ATTRIBUTE, None)
    if spec is None:
        return []
    resolved = getattr(task, RESOLVED_ATTRIBUTE, None) or {}
    found = []
    for declaration in spec.outputs:
        ref = resolved.get(declaration.dataset, declaration.dataset)
        if isinstance(ref, datasets.DatasetRef):
            found.append(dataset_id(ref.namespace, ref.name))
    return found


def failure_of(task_instance: Any, error: Any) -> Failure:
    """The :class:`Failure` of a task instance (a worker's, the scheduler's or the API server's)."""
    text = error_text(error)
    map_index = getattr(task_instance, "map_index", -1)
    return Failure(
        dag_id=str(task_instance.dag_id),
        task_id=str(task_instance.task_id),
        run_id=str(task_instance.run_id),
        map_index=-1 if map_index is None else int(map_index),
        try_number=int(getattr(task_instance, "try_number", 0) or 0),
        job_namespace=conf.openlineage_namespace(),
        error=scrub(text) if text else None,
        outputs=declared_outputs(getattr(task_instance, "task", None)),
    )


def alert_if_failed(task_instance: Any, error: Any, notifier: str | None = None) -> bool:
    """Hand the failure of ``task_instance`` to a courier when it ended FAILED and alerts are on.

    ``notifier`` (``smtp`` or a dotted path) overrides ``[lineage_plus] alert_notifier``.
    """
    if conf.is_disabled() or not (notifier or conf.alert_notifier()):
        return False
    if state_name(getattr(task_instance, "state", None)) != "failed":
        return False  # up_for_retry: the task will run again
    job: dict[str, Any] = {"kind": "failure", "failure": failure_of(task_instance, error).to_json()}
    if notifier:
        job["notifier"] = notifier
    hand_off(job)
    return True
