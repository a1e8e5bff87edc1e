"""A short session of this package's own on Airflow's metadata database, every statement time-bounded.

The skip records read the metadata database after the scheduler committed a DAG run's end, never through
the scheduler's session: a statement of ours that fails (a timeout, a lock, a bug) can then only end our
own transaction, never leave the scheduler's transaction aborted (on PostgreSQL the next statement of an
aborted transaction fails too). Each transaction of the session starts by bounding its statements:

- PostgreSQL: ``statement_timeout`` for this transaction only (``set_config(..., true)``, i.e. ``SET
  LOCAL``), so it ends with the transaction and never sticks to a pooled connection;
- MySQL: ``max_execution_time`` (reads) and ``innodb_lock_wait_timeout`` (the claim insert) for the
  session, put back to the server defaults before the connection returns to the pool;
- SQLite: the driver's busy timeout (a single-machine, single-scheduler database).
"""

from __future__ import annotations

import contextlib
import math
from collections.abc import Iterator
from typing import Any

from airflow_lineage_plus import _compat

_MYSQL_RESET = "SET SESSION max_execution_time = DEFAULT, innodb_lock_wait_timeout = DEFAULT"


def timeout_statements(dialect: str, seconds: float) -> list[str]:
    """The statements that bound every later statement of a transaction to ``seconds``."""
    millis = max(1, int(seconds * 1000))
    if dialect == "postgresql":
        return [f"SELECT set_config('statement_timeout', '{millis}ms', true)"]
    if dialect in {"mysql", "mariadb"}:
        return [
            f"SET SESSION max_execution_time = {millis}",
            f"SET SESSION innodb_lock_wait_timeout = {max(1, math.ceil(seconds))}",
        ]
    return []


@contextlib.contextmanager
def short_session(seconds: float) -> Iterator[Any]:
    """An ORM session bound to the metadata engine; statements bounded; rolled back and closed at the end.

    Whatever the caller did not commit is rolled back. Nothing here touches Airflow's scoped session.
    """
    from sqlalchemy import event
    from sqlalchemy.orm import Session

    engine = _compat.metadata_engine()
    session = Session(bind=engine, expire_on_commit=False)
    statements = timeout_statements(engine.dialect.name, seconds)

    def bound(_session: Any, _transaction: Any, connection: Any) -> None:
        for statement in statements:
            connection.exec_driver_sql(statement)

    event.listen(session, "after_begin", bound)
    try:
        yield session
    finally:
        try:
            session.rollback()
            if engine.dialect.name in {"mysql", "mariadb"}:
                session.connection().exec_driver_sql(_MYSQL_RESET)
                session.commit()
        finally:
            session.close()
