"""Put on the ``PYTHONPATH`` of ``collector_bench.py``'s DAG runs: two figures of the ``dags test`` process
on its stderr, where the benchmark reads them.

* ``lineage-plus-bench full-gc <start, UTC> <ms>``: each full garbage collection;
* ``lineage-plus-bench wait <callable> <ms>``: each time the task waited for the provider to send one of
  its events (the listener's ``_execute``: the fork and the wait for the forked process, or the thread
  and the join under ``[openlineage] execute_in_thread``), wrapped once the listener's module is loaded.
"""

from __future__ import annotations

import datetime
import gc
import importlib.abc
import importlib.machinery
import sys
import time
from collections.abc import Sequence
from types import ModuleType
from typing import Any

LISTENER = "airflow.providers.openlineage.plugins.listener"
_gc_started: list[Any] = []


def _full_gc(phase: str, info: dict[str, int]) -> None:
    if info["generation"] != 2:
        return
    if phase == "start":
        _gc_started[:] = [time.perf_counter(), datetime.datetime.now(datetime.timezone.utc)]
    elif _gc_started:
        took = (time.perf_counter() - _gc_started[0]) * 1e3
        sys.stderr.write(f"lineage-plus-bench full-gc {_gc_started[1].isoformat()} {took:.1f}\n")


def _timed_execute(module: ModuleType) -> None:
    listener = module.OpenLineageListener
    execute = listener._execute

    def _execute(self: Any, callable: Any, callable_name: str, use_fork: bool = False) -> Any:
        started = time.perf_counter()
        try:
            return execute(self, callable, callable_name, use_fork=use_fork)
        finally:
            took = (time.perf_counter() - started) * 1e3
            sys.stderr.write(f"lineage-plus-bench wait {callable_name} {took:.2f}\n")

    listener._execute = _execute


class _ListenerHook(importlib.abc.MetaPathFinder):
    """Finds the listener's module with the other finders and wraps its ``_execute`` once it is run."""

    def find_spec(
        self, fullname: str, path: Sequence[str] | None, target: ModuleType | None = None
    ) -> importlib.machinery.ModuleSpec | None:
        if fullname != LISTENER:
            return None
        for finder in sys.meta_path:
            spec = None if finder is self else finder.find_spec(fullname, path, target)
            if spec is not None and spec.loader is not None:
                _wrap(spec.loader)
                return spec
        return None


def _wrap(loader: Any) -> None:
    run = loader.exec_module

    def exec_module(module: ModuleType) -> None:
        run(module)
        _timed_execute(module)

    loader.exec_module = exec_module


gc.callbacks.append(_full_gc)
sys.meta_path.insert(0, _ListenerHook())
