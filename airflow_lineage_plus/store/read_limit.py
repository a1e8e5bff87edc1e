"""How long one statement reading the lineage store may run (``[lineage_plus] store_read_timeout``).

A question reads the store in a few quick statements (docs/graph.md). One that goes wrong (a store under
load, a plan gone bad, a store kept in Airflow's own metadata database while the scheduler needs it) is
stopped rather than left to hold a thread of the Lineage view, a connection and the database's time:

* PostgreSQL: ``statement_timeout`` for the read transaction only (``set_config(..., true)``): the server
  cancels the statement;
* SQLite: a progress handler interrupts the statement once it has run longer (looked at every
  :data:`STEPS` steps of SQLite's virtual machine, so also inside a statement that never returns a row);
* MySQL (untested): not bounded.

A stopped read is :class:`~airflow_lineage_plus.exceptions.StoreUnavailable` saying so (the view answers
503, the CLI exits with the message). Writes are never bounded here.
"""

from __future__ import annotations

import contextlib
import math
import time
from collections.abc import Iterator
from typing import Any

import sqlalchemy as sa

#: how many steps of SQLite's virtual machine run between two looks at the clock
STEPS = 20_000
_LIMIT = "lineage_plus_read_limit"
_DEADLINE = "lineage_plus_deadline"


class _Deadline:
    """When the running statement of one SQLite connection is interrupted (monotonic seconds)."""

    __slots__ = ("at",)

    def __init__(self) -> None:
        self.at = math.inf

    def passed(self) -> bool:
        return time.monotonic() > self.at


def watch_sqlite(engine: sa.Engine) -> None:
    """Give every connection of a SQLite ``engine`` the handler that stops a read past its limit."""

    @sa.event.listens_for(engine, "connect")
    def _connect(dbapi_connection: Any, record: Any) -> None:
        deadline = record.info[_DEADLINE] = _Deadline()
        dbapi_connection.set_progress_handler(deadline.passed, STEPS)

    @sa.event.listens_for(engine, "before_cursor_execute")
    def _before(connection: sa.Connection, *_: Any) -> None:
        limit = connection.info.get(_LIMIT)
        deadline = connection.info.get(_DEADLINE)
        if deadline is not None:
            deadline.at = math.inf if limit is None else time.monotonic() + limit


@contextlib.contextmanager
def bounded(connection: sa.Connection, seconds: float | None) -> Iterator[None]:
    """Each statement of the read transaction ``connection`` is in stops after ``seconds`` (None, 0: no
    limit); call it inside the transaction."""
    if not seconds:
        yield
        return
    if connection.dialect.name == "postgresql":
        millis = f"{max(1, round(seconds * 1000))}ms"
        connection.exec_driver_sql("SELECT set_config('statement_timeout', %(t)s, true)", {"t": millis})
        yield
        return
    connection.info[_LIMIT] = seconds
    try:
        yield
    finally:
        connection.info.pop(_LIMIT, None)
        deadline = connection.info.get(_DEADLINE)
        if deadline is not None:
            deadline.at = math.inf


def stopped(error: BaseException) -> bool:
    """Whether a database error is a read stopped by its limit (PostgreSQL's statement timeout, SQLite's
    interrupt)."""
    original = getattr(error, "orig", error)
    if getattr(original, "sqlstate", None) == "57014":  # query_canceled
        return "statement timeout" in str(original)
    return str(original) == "interrupted"
