"""Work the scheduler must not do itself: handed to the provider's process pool once the run end is committed.

Airflow calls the DAG-run hooks inside the scheduler loop, in the middle of the scheduler's transaction
(``DagRun.update_state``), before the task-instance states it has just set are committed. Reading them from
another session then would miss them, and reading or emitting through the scheduler's session puts our
statements and our transport inside its loop. So :func:`after_commit` waits for that transaction to
commit (a SQLAlchemy ``after_commit`` event on the DAG run's session; nothing is sent if it rolls back)
and :func:`hand_off` then gives the work to the OpenLineage provider's DAG-event process pool, the one
the provider's own DAG-run events go through. If the pool cannot take it, the work is dropped with one
warning: it never runs in the scheduler loop.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from airflow_lineage_plus import _compat
from airflow_lineage_plus.containment import contained, report

_PENDING = "airflow_lineage_plus.after_commit"


def hand_off(what: str, func: Callable[..., Any], *args: Any) -> bool:
    """Run ``func(*args)`` in the provider's process pool; on failure report ``what`` as lost and drop it.

    ``func`` and ``args`` must pickle (a module-level function, plain values). ``what`` should not name
    one DAG run: the warning is logged once per ``what`` and error type (:mod:`..containment`), so a
    pool that stays broken does not flood the scheduler's log. Returns whether the pool took it.
    """
    try:
        _compat.submit_to_openlineage_pool(func, *args)
    except Exception as exc:
        report(f"{what} (not handed to the OpenLineage process pool; dropped, not run in the scheduler)", exc)
        return False
    return True


def after_commit(session: Any, callback: Callable[[], object]) -> None:
    """Call ``callback`` once ``session``'s current transaction commits; now if none is open.

    A rollback (or a close without commit) forgets it. Listeners are registered once per session; the
    pending callbacks live in ``session.info``.
    """
    if session is None or not session.in_transaction():
        callback()
        return
    pending = session.info.get(_PENDING)
    if pending is None:
        from sqlalchemy import event

        pending = session.info[_PENDING] = []
        event.listen(session, "after_commit", _run_pending)
        event.listen(session, "after_transaction_end", _forget_pending)
    pending.append(callback)


def _run_pending(session: Any) -> None:
    if session.in_nested_transaction():  # a savepoint was released; the run end is not committed yet
        return
    pending = session.info.get(_PENDING) or []
    callbacks, pending[:] = list(pending), []
    for callback in callbacks:
        with contained("work handed off after a commit"):  # never into the scheduler's commit
            callback()


def _forget_pending(session: Any, transaction: Any) -> None:
    """The outermost transaction ended: what :func:`_run_pending` did not take was rolled back."""
    if transaction.parent is None:
        pending = session.info.get(_PENDING)
        if pending:
            pending.clear()
