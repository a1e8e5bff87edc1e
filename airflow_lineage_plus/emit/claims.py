"""The "emitted once" claims of skip records: one row per runId in a table of Airflow's metadata database.

Every component that can report a DAG run's end (each scheduler of a high-availability pair, the API
server when a person marks a run, ``airflow dags test``) talks to the same metadata database, so a claim
written there is seen by all of them, on every host. A record goes out only after its runId was
inserted by this process: the insert is atomic, so of two schedulers reporting the same DAG run at the
same moment exactly one wins each runId, and a late or repeated report inserts nothing and sends nothing.

The table belongs to this package, not to Airflow, and needs no migration of its own: it is created on
first use (``CREATE TABLE IF NOT EXISTS``, once per process) under the name ``[lineage_plus]
skip_claims_table`` (default ``lineage_plus_skip_claims``). Airflow's own migrations, ``airflow db
clean`` and ``airflow db reset`` do not know it; ``DROP TABLE lineage_plus_skip_claims`` removes it
(docs/deployment.md). The insert-if-absent is one statement per dialect Airflow supports:
``INSERT ... ON CONFLICT DO NOTHING RETURNING`` on PostgreSQL, ``INSERT ... ON CONFLICT DO NOTHING``
on SQLite, ``INSERT IGNORE`` on MySQL.
"""

from __future__ import annotations

import functools
import re
import threading
from datetime import datetime, timezone
from typing import Any

from airflow_lineage_plus.exceptions import ConfigurationError

#: (run_id, dag_id, task_id, map_index, try_number, dag_run_id) of one record.
Claim = tuple[str, str, str, int, int, str]
_COLUMNS = ("run_id", "dag_id", "task_id", "map_index", "try_number", "dag_run_id")
_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_]{0,62}$")

_ensured: set[tuple[str, str]] = set()
_ensured_lock = threading.Lock()


@functools.cache
def claims_table(name: str) -> Any:
    """The SQLAlchemy ``Table`` of the claims (in a MetaData of its own: Airflow's never sees it)."""
    from sqlalchemy import Column, DateTime, Index, Integer, MetaData, String, Table

    if not _NAME.match(name):
        raise ConfigurationError(
            f"[lineage_plus] skip_claims_table must be a plain SQL table name (letters, digits, _), "
            f"not {name!r}"
        )
    return Table(
        name,
        MetaData(),
        Column("run_id", String(36), primary_key=True),
        Column("dag_id", String(250), nullable=False),
        Column("task_id", String(250), nullable=False),
        Column("map_index", Integer, nullable=False),
        Column("try_number", Integer, nullable=False),
        Column("dag_run_id", String(36), nullable=False),
        Column("claimed_at", DateTime(timezone=True), nullable=False),
        Index(f"{name}_dag_id", "dag_id"),
    )


def ensure_table(bind: Any, table: Any) -> None:
    """Create a claims table if it is missing (once per process), in a transaction of its own.

    ``bind``: a SQLAlchemy ``Session`` (left with no transaction open) or an ``Engine``. Two processes
    creating it at the same moment is harmless: the loser's error is ignored when the table exists
    afterwards. Both claim stores create their tables here (the skip records', the alerts'
    :mod:`airflow_lineage_plus.act.claims`).
    """
    from sqlalchemy import inspect

    engine = bind.get_bind() if hasattr(bind, "get_bind") else bind
    key = (str(engine.url), table.name)
    with _ensured_lock:
        if key in _ensured:
            return
    if hasattr(bind, "get_bind"):
        _create(bind.connection, bind.commit, bind.rollback, table, inspect)
    else:
        with bind.connect() as connection:
            _create(lambda: connection, connection.commit, connection.rollback, table, inspect)
    with _ensured_lock:
        _ensured.add(key)


def _create(connection: Any, commit: Any, rollback: Any, table: Any, inspect: Any) -> None:
    try:
        table.create(connection(), checkfirst=True)
        commit()
    except Exception:
        rollback()
        exists = inspect(connection()).has_table(table.name)
        rollback()
        if not exists:
            raise


def claim(connection: Any, table: Any, rows: list[Claim]) -> set[str]:
    """Insert the rows whose runId nobody claimed yet; returns those runIds (the caller commits).

    Rows go in runId order, so two processes claiming overlapping sets cannot deadlock.
    """
    if not rows:
        return set()
    now = datetime.now(timezone.utc)
    values = [dict(zip(_COLUMNS, row, strict=True), claimed_at=now) for row in sorted(rows)]
    dialect = connection.dialect.name
    if dialect == "postgresql":
        from sqlalchemy.dialects.postgresql import insert as pg_insert

        statement = (
            pg_insert(table).values(values).on_conflict_do_nothing(index_elements=["run_id"])
        ).returning(table.c.run_id)
        return {str(run_id) for (run_id,) in connection.execute(statement)}
    if dialect == "sqlite":
        from sqlalchemy.dialects.sqlite import insert as sqlite_insert

        one = sqlite_insert(table).on_conflict_do_nothing(index_elements=["run_id"])
    elif dialect in {"mysql", "mariadb"}:
        one = table.insert().prefix_with("IGNORE")
    else:
        raise ConfigurationError(
            f"skip-record claims support PostgreSQL, MySQL and SQLite metadata databases, not {dialect}"
        )
    return {str(value["run_id"]) for value in values if connection.execute(one.values(value)).rowcount == 1}


def claimed(connection: Any, table: Any, dag_id: str) -> set[str]:
    """Every runId claimed for a DAG (for diagnostics and tests)."""
    from sqlalchemy import select

    return {str(r) for (r,) in connection.execute(select(table.c.run_id).where(table.c.dag_id == dag_id))}
