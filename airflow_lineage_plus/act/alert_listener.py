"""The Airflow listener of the act stage: a task instance that ends FAILED hands its impact alert off.

The hook fires in the task process on the worker (a task that raised), in the API server (a task marked
failed by hand) and in the scheduler (a task it fails itself); claims make each alert go out once
whichever of them see it (:mod:`airflow_lineage_plus.claims`). The hook never raises.
"""

from __future__ import annotations

from typing import Any

from airflow.listeners import hookimpl

from airflow_lineage_plus.act.trigger import alert_if_failed
from airflow_lineage_plus.containment import contained


@hookimpl
def on_task_instance_failed(previous_state: Any, task_instance: Any, error: Any = None) -> None:
    with contained("the impact alert of a failed task"):
        alert_if_failed(task_instance, error)
