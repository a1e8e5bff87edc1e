"""The one place that contains runtime errors of lineage code, so lineage never changes a task's outcome.

Everything else in the package lets errors rise; the entry points Airflow calls at run time (operator
lineage methods, the runtime API, the listener, custom run facet functions) run their body inside
:func:`contained`. A contained error is logged once per (what was lost, error type) and process, as a
warning that says which lineage was lost; repeats go to DEBUG so a failing backend cannot flood logs.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from functools import wraps
from typing import Any, ParamSpec, TypeVar

log = logging.getLogger("airflow_lineage_plus")

P = ParamSpec("P")
R = TypeVar("R")

_seen: set[tuple[str, str]] = set()
_seen_lock = threading.Lock()
_counts: dict[str, int] = {}


def _first_time(what: str, exc: BaseException) -> bool:
    key = (what, type(exc).__name__)
    with _seen_lock:
        _counts[what] = _counts.get(what, 0) + 1
        if key in _seen:
            return False
        _seen.add(key)
        return True


def lost_counts() -> dict[str, int]:
    """How many times each kind of lineage was lost in this process (for tests and diagnostics)."""
    with _seen_lock:
        return dict(_counts)


def report(what: str, exc: BaseException) -> None:
    """Log that ``what`` was lost because of ``exc``: a warning the first time, DEBUG afterwards."""
    if _first_time(what, exc):
        log.warning(
            "airflow-lineage-plus: %s was lost: %s: %s. The task itself is not affected.",
            what,
            type(exc).__name__,
            exc,
            exc_info=log.isEnabledFor(logging.DEBUG),
        )
    else:
        log.debug("airflow-lineage-plus: %s was lost again", what, exc_info=True)


@contextmanager
def contained(what: str) -> Iterator[None]:
    """Run a block whose failure must not reach the task; ``what`` names the lineage lost if it fails."""
    try:
        yield
    except Exception as exc:
        report(what, exc)


def call_within(seconds: float, what: str, func: Callable[P, R], *args: P.args, **kwargs: P.kwargs) -> R:
    """``func(*args, **kwargs)``, or :class:`TimeoutError` naming ``what`` if it takes over ``seconds``.

    The one deadline of the package, for calls that can hang in the provider's forked emitter (a
    connection fetched through the execution API, a backend that does not answer): the call runs in a
    daemon thread, which is left behind when the time is up (the emitter process exits right after,
    taking it along). Whatever ``func`` raises is raised here.
    """
    outcome: list[tuple[bool, Any]] = []

    def run() -> None:
        try:
            outcome.append((True, func(*args, **kwargs)))
        except BaseException as exc:  # re-raised in the caller's thread
            outcome.append((False, exc))

    thread = threading.Thread(target=run, name="lineage-plus-deadline", daemon=True)
    thread.start()
    thread.join(seconds)
    if not outcome:
        raise TimeoutError(f"{what}: no answer within {seconds:g} s")
    ok, value = outcome[0]
    if not ok:
        raise value
    return value  # type: ignore[no-any-return]


def contain(what: str, default: Callable[[], R]) -> Callable[[Callable[P, R]], Callable[P, R]]:
    """Decorator form of :func:`contained`: on error, log and return ``default()``."""

    def decorate(func: Callable[P, R]) -> Callable[P, R]:
        @wraps(func)
        def wrapper(*args: P.args, **kwargs: P.kwargs) -> R:
            try:
                return func(*args, **kwargs)
            except Exception as exc:
                report(what, exc)
                return default()

        return wrapper

    return decorate
