"""Worker side of skip state: the skip facet on the provider's own COMPLETE of a self-skip.

A task that raises ``AirflowSkipException`` gets a COMPLETE event from the provider with nothing saying it
was skipped. :func:`run_facets` is the ``[openlineage] custom_run_facets`` function that adds
``lineagePlus_skipState`` to that very event (same runId, no extra event), and the execution mode a task
set (``lineagePlus_executionMode``)::

    AIRFLOW__OPENLINEAGE__CUSTOM_RUN_FACETS=airflow_lineage_plus.skip.run_facets

The exception message comes from :func:`watch_for_self_skip`, which the listener calls when a task instance
starts running on the worker: it notes the message of an ``AirflowSkipException`` leaving ``execute()`` (or
the method a deferred task resumes in) in the task registry and re-raises it untouched.
"""

from __future__ import annotations

from collections.abc import Callable
from functools import wraps
from typing import Any

from openlineage.client.facet_v2 import RunFacet

from airflow_lineage_plus import conf
from airflow_lineage_plus.containment import contain, contained
from airflow_lineage_plus.custom_facets import SELF_SKIP, SkipStateRunFacet
from airflow_lineage_plus.emit import registry

_WRAPPED_MARK = "_lineage_plus_skip_watch"
_KEY_ATTR = "_lineage_plus_skip_key"


def state_name(state: Any) -> str:
    """An Airflow state (enum or string) as its lower-case name; ``""`` for None."""
    return str(getattr(state, "value", state) or "").lower()


def _is_skip_exception(exc: BaseException) -> bool:
    return any(cls.__name__ == "AirflowSkipException" for cls in type(exc).__mro__)


def _watching(task: Any, method: Callable[..., Any]) -> Callable[..., Any]:
    @wraps(method)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        try:
            return method(*args, **kwargs)
        except BaseException as exc:
            key = getattr(task, _KEY_ATTR, None)
            if key is not None and _is_skip_exception(exc):
                with contained("the self-skip message"):
                    message = str(exc.args[0]) if exc.args and exc.args[0] is not None else None
                    registry.entry(key).self_skip_message = message
            raise

    setattr(wrapper, _WRAPPED_MARK, True)
    return wrapper


@contain("the self-skip message watch", default=lambda: None)
def watch_for_self_skip(task_instance: Any) -> None:
    """Note the message of an ``AirflowSkipException`` the task instance raises (called on the worker).

    Wraps ``execute`` and ``resume_execution`` (the entry point after a deferral) of this task
    instance's operator object only; the exception is re-raised unchanged. The wrapper files the message
    under the task instance that most recently started on that object.
    """
    task = getattr(task_instance, "task", None)
    if task is None:
        return
    object.__setattr__(task, _KEY_ATTR, registry.task_key(task_instance))
    for name in ("execute", "resume_execution"):
        method = getattr(task, name, None)
        if method is None or getattr(method, _WRAPPED_MARK, False):
            continue
        object.__setattr__(task, name, _watching(task, method))


def _no_facets() -> dict[str, RunFacet]:
    return {}


@contain("the skip-state and execution-mode run facets", default=_no_facets)
def run_facets(task_instance: Any, ti_state: Any) -> dict[str, RunFacet]:
    """``[openlineage] custom_run_facets`` function: the skip facet on a self-skip, and the execution mode.

    The provider calls it for every task event with the task instance state; on a self-skip that is
    SKIPPED on the provider's COMPLETE event.
    """
    facets: dict[str, RunFacet] = {}
    if conf.is_disabled():
        return facets
    entry = registry.find(task_instance)
    if state_name(ti_state) == "skipped":
        map_index = getattr(task_instance, "map_index", -1)
        facets[SkipStateRunFacet.key] = SkipStateRunFacet(
            skipped=True,
            reason=SELF_SKIP,
            message=(entry.self_skip_message if entry else None) or "the task raised AirflowSkipException",
            state="skipped",
            mapIndex=-1 if map_index is None else int(map_index),
            tryNumber=int(getattr(task_instance, "try_number", 0) or 0),
        )
    mode = entry.execution_mode if entry else None
    if mode is not None and state_name(ti_state) != "running":
        facets[mode.key] = mode
    return facets
