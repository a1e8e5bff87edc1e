"""The one process-local registry of running task instances.

A task records lineage facts (:mod:`airflow_lineage_plus.author.runtime`), its execution mode, and the
message of an ``AirflowSkipException`` it raised (:mod:`.self_skip`) while it runs; the provider builds the
task's COMPLETE or FAIL event afterwards in the same memory image (a forked child or a thread), where the
operator lineage methods and the ``custom_run_facets`` function read them back from here. Entries are keyed
by the task instance try: (dag_id, task_id, run_id, map_index, try_number).
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Any, TypeVar

import attr

from airflow_lineage_plus.custom_facets import ExecutionModeRunFacet

T = TypeVar("T")
TaskKey = tuple[str, str, str, int, int]


@attr.define
class TaskEntry:
    """What this process knows about one task instance try.

    Attributes:
        facts: what the task recorded through the runtime API (``author.runtime.TaskFacts``).
        self_skip_message: the message of the ``AirflowSkipException`` it raised, once seen.
        execution_mode: the mode it set with ``runtime.set_execution_mode``.
    """

    facts: Any = None
    self_skip_message: str | None = None
    execution_mode: ExecutionModeRunFacet | None = None


_lock = threading.Lock()
_entries: dict[TaskKey, TaskEntry] = {}


def task_key(task_instance: Any) -> TaskKey:
    """Registry key of a task instance: (dag_id, task_id, run_id, map_index, try_number)."""
    map_index = getattr(task_instance, "map_index", -1)
    return (
        str(task_instance.dag_id),
        str(task_instance.task_id),
        str(task_instance.run_id),
        -1 if map_index is None else int(map_index),
        int(getattr(task_instance, "try_number", 0) or 0),
    )


def current_task_key() -> TaskKey:
    """The key of the task instance running in this process (Airflow's current context)."""
    from airflow.sdk import get_current_context

    return task_key(get_current_context()["ti"])


def find(task_instance: Any) -> TaskEntry | None:
    """The entry of ``task_instance``, if the task recorded anything."""
    key = task_key(task_instance)
    with _lock:
        return _entries.get(key)


def _get_or_create(key: TaskKey) -> TaskEntry:
    found = _entries.get(key)
    if found is None:
        found = _entries[key] = TaskEntry()
    return found


def entry(key: TaskKey) -> TaskEntry:
    """The entry of ``key``, created empty on first use."""
    with _lock:
        return _get_or_create(key)


def facts(key: TaskKey, factory: Callable[[], T]) -> T:
    """The facts object of ``key``, created with ``factory`` on first use."""
    with _lock:
        found = _get_or_create(key)
        if found.facts is None:
            found.facts = factory()
        return found.facts  # type: ignore[no-any-return]
