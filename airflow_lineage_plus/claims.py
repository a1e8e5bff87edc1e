"""The one claim store: a key is claimed by exactly one process, on any host (skip records and alerts).

Something that must happen once (a skip record goes out, an alert is sent) happens only in the process
whose claim of its key succeeded. A claim is an insert-if-absent of one row into a claims table of
Airflow's metadata database: every scheduler, API server and worker talks to that database, so of two
processes claiming the same key at the same moment exactly one wins it, and a late or repeated claim
inserts nothing. One statement per dialect Airflow supports: ``INSERT ... ON CONFLICT DO NOTHING
RETURNING`` on PostgreSQL, ``INSERT ... ON CONFLICT DO NOTHING`` on SQLite, ``INSERT IGNORE`` on MySQL.
Rows go in key order, so two processes claiming overlapping sets cannot deadlock.

Every claims table has one design: the claim's key as primary key, the facts that say what was claimed,
and ``claimed_at``. It belongs to this package, not to Airflow: it is created on first use (once per
process; two processes creating it at once both go on) and needs no migration; ``airflow db clean`` and
``airflow db reset`` do not know it. The package keeps two of them:

- :func:`skip_claims_table`: ``[lineage_plus] skip_claims_table`` (default ``lineage_plus_skip_claims``),
  one row per skip record (key ``run_id``), claimed in the skip records' own bounded session
  (docs/deployment.md);
- :func:`alert_claims_table`: ``lineage_plus_claims``, one row per alert (key ``claim_key``, the SHA-256
  of the alert's key, with the readable key beside it), claimed through :class:`TableClaims`. A process
  that cannot reach the metadata database claims in the same table of a SQLite file on its host
  (:class:`FileClaims`, ``$AIRFLOW_HOME/lineage_plus/alert_claims.sqlite``), which deduplicates on that
  host only (docs/alerts.md).
"""

from __future__ import annotations

import functools
import hashlib
import re
import socket
import threading
from collections.abc import Iterable, Sequence
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, Protocol

from airflow_lineage_plus.exceptions import ConfigurationError
from airflow_lineage_plus.private_dirs import ensure_dir

#: (run_id, dag_id, task_id, map_index, try_number, dag_run_id) of one skip record.
Claim = tuple[str, str, str, int, int, str]
#: The table of the alerts' claims.
ALERT_CLAIMS = "lineage_plus_claims"
_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_]{0,62}$")

_ensured: set[tuple[str, str]] = set()
_ensured_lock = threading.Lock()


def _claims_table(name: str, key: Any, *facts: Any) -> Any:
    """A claims table: ``key`` (the primary key), ``facts``, ``claimed_at`` (in a MetaData of its own)."""
    from sqlalchemy import Column, DateTime, MetaData, Table

    return Table(name, MetaData(), key, *facts, Column("claimed_at", DateTime(timezone=True), nullable=False))


@functools.cache
def skip_claims_table(name: str) -> Any:
    """The skip records' claims table called ``name``: one row per record's runId."""
    from sqlalchemy import Column, Index, Integer, String

    if not _NAME.match(name):
        raise ConfigurationError(
            f"[lineage_plus] skip_claims_table must be a plain SQL table name (letters, digits, _), "
            f"not {name!r}"
        )
    return _claims_table(
        name,
        Column("run_id", String(36), primary_key=True),
        Column("dag_id", String(250), nullable=False),
        Column("task_id", String(250), nullable=False),
        Column("map_index", Integer, nullable=False),
        Column("try_number", Integer, nullable=False),
        Column("dag_run_id", String(36), nullable=False),
        Index(f"{name}_dag_id", "dag_id"),
    )


@functools.cache
def alert_claims_table() -> Any:
    """The alerts' claims table: one row per (alert key digest, readable key, claiming host)."""
    from sqlalchemy import Column, String

    return _claims_table(
        ALERT_CLAIMS,
        Column("claim_key", String(64), primary_key=True),
        Column("description", String(512)),
        Column("claimed_by", String(200)),
    )


def ensure_table(bind: Any, table: Any) -> None:
    """Create a claims table if it is missing (once per process), in a transaction of its own.

    ``bind``: a SQLAlchemy ``Session`` (left with no transaction open) or an ``Engine``. Two processes
    creating it at the same moment is harmless: the loser's error is ignored when the table exists
    afterwards.
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


def claim(connection: Any, table: Any, rows: Sequence[Sequence[Any]]) -> set[str]:
    """Insert the rows whose key nobody claimed yet; returns those keys (the caller commits).

    A row is the values of the table's columns in order, ``claimed_at`` left out (it is now).
    """
    if not rows:
        return set()
    key = next(iter(table.primary_key.columns))
    names = [c.name for c in table.columns if c.name != "claimed_at"]
    now = datetime.now(timezone.utc)
    values = sorted(
        (dict(zip(names, row, strict=True), claimed_at=now) for row in rows), key=lambda v: str(v[key.name])
    )
    dialect = connection.dialect.name
    if dialect == "postgresql":
        from sqlalchemy.dialects.postgresql import insert as pg_insert

        statement = (
            pg_insert(table).values(values).on_conflict_do_nothing(index_elements=[key.name])
        ).returning(key)
        return {str(won) for (won,) in connection.execute(statement)}
    if dialect == "sqlite":
        from sqlalchemy.dialects.sqlite import insert as sqlite_insert

        one = sqlite_insert(table).on_conflict_do_nothing(index_elements=[key.name])
    elif dialect in {"mysql", "mariadb"}:
        one = table.insert().prefix_with("IGNORE")
    else:
        raise ConfigurationError(f"claims support PostgreSQL, MySQL and SQLite databases, not {dialect}")
    return {str(value[key.name]) for value in values if connection.execute(one.values(value)).rowcount == 1}


def claimed(connection: Any, table: Any, dag_id: str) -> set[str]:
    """Every runId a skip claims table holds for a DAG (for diagnostics and tests)."""
    from sqlalchemy import select

    return {str(r) for (r,) in connection.execute(select(table.c.run_id).where(table.c.dag_id == dag_id))}


class Claims(Protocol):
    """Where alerts are claimed."""

    def claim(self, keys: Iterable[str]) -> set[str]:
        """Claim ``keys``; return those this call claimed (the others were claimed before)."""

    def release(self, keys: Iterable[str]) -> None:
        """Give back claims whose alerts could not be sent, so a later attempt may send them."""


def digest(key: str) -> str:
    """The stored form of an alert key: fixed length whatever the dataset names in it."""
    return hashlib.sha256(key.encode()).hexdigest()


class TableClaims:
    """Alert claims in the alerts' claims table of a database (the metadata database: every host)."""

    def __init__(self, engine: Any) -> None:
        self.engine = engine
        self.table = alert_claims_table()
        ensure_table(engine, self.table)

    def claim(self, keys: Iterable[str]) -> set[str]:
        by_digest = {digest(key): key for key in keys}
        who = socket.gethostname()[:200]
        with self.engine.begin() as connection:
            won = claim(connection, self.table, [(d, key[:512], who) for d, key in by_digest.items()])
        return {by_digest[d] for d in won}

    def release(self, keys: Iterable[str]) -> None:
        digests = [digest(key) for key in keys]
        if digests:
            with self.engine.begin() as connection:
                connection.execute(self.table.delete().where(self.table.c.claim_key.in_(digests)))


class FileClaims(TableClaims):
    """Alert claims in a SQLite file: this host only (the fallback when the metadata database is out of
    reach)."""

    def __init__(self, path: Path) -> None:
        from sqlalchemy import create_engine
        from sqlalchemy.pool import NullPool

        ensure_dir(path.parent)
        super().__init__(create_engine(f"sqlite:///{path}", connect_args={"timeout": 5}, poolclass=NullPool))


def open_alert_claims() -> Claims:
    """Alert claims in the metadata database, else (logged once) in the host's SQLite file."""
    from airflow_lineage_plus import _compat, conf
    from airflow_lineage_plus.containment import report

    try:
        return TableClaims(_compat.metadata_engine())
    except Exception as exc:
        report("deduplication of alerts across hosts (claims fall back to this host's file)", exc)
        return FileClaims(conf.alert_claims_path())
