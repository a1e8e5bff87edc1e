"""How the store uses SQLite (:mod:`.database`): the pragmas and transactions every connection gets, the
driver connection the transport writes through, and the template a scratch store is copied from."""

from __future__ import annotations

import contextlib
import os
import sqlite3
import threading
from typing import Any

import sqlalchemy as sa
from sqlalchemy.dialects import sqlite

from airflow_lineage_plus.store import schema

#: the URL of a scratch store: folded state in memory, for a question over events read elsewhere (a log
#: given to ``--events``, a time in the past), written only through :meth:`.LineageStore.fold`
SCRATCH = "sqlite://"


def _add_statement() -> tuple[str, tuple[str, ...]]:
    """The keep-first insert of one event as SQLite text with ``?`` parameters, and their column names."""
    statement = sqlite.insert(schema.event).on_conflict_do_nothing(index_elements=["digest"])
    columns = [c.name for c in schema.event.columns if c.name != "id"]
    compiled = statement.values({name: sa.bindparam(name) for name in columns}).compile(
        dialect=sqlite.dialect(paramstyle="qmark")
    )
    return str(compiled), tuple(compiled.positiontup or ())


ADD_EVENT = _add_statement()


_template: sqlite3.Connection | None = None
_template_lock = threading.Lock()


def empty_scratch(into: sqlite3.Connection) -> sqlite3.Connection:
    """``into`` (an in-memory database) made a new, empty store: a copy of a template made once per
    process (creating the tables each time costs more than the questions a scratch store answers)."""
    global _template
    with _template_lock:
        if _template is None:
            template = sqlite3.connect(":memory:", check_same_thread=False)
            engine = sa.create_engine(SCRATCH, poolclass=sa.pool.StaticPool, creator=lambda: template)
            with engine.begin() as connection:
                schema.metadata.create_all(connection)
                connection.execute(
                    sa.insert(schema.meta).values(name="schema_version", value=str(schema.SCHEMA_VERSION))
                )
            _template = template
        _template.backup(into)
    return into


#: a connection's first write that leaves the WAL larger than this checkpoints it and truncates it
#: (:func:`trim_wal`)
WAL_TRIM_BYTES = 1 << 20
#: the same for its later writes, which SQLite's own checkpoints keep near 4 MB (1000 pages): past this,
#: something held those off
LATER_WAL_TRIM_BYTES = 16 << 20
#: the page cache of each pooled SQLite connection, KiB
READ_CACHE_KIB = 65536


def scratch_connection() -> sqlite3.Connection:
    return empty_scratch(sqlite3.connect(":memory:", check_same_thread=False))


class StoreConnection(sqlite3.Connection):
    """A driver connection that counts the writes :func:`trim_wal` followed."""

    writes = 0


def raw_connection(path: str, busy_timeout: float) -> StoreConnection:
    """A driver connection to the SQLite file at ``path`` with the pragmas every connection gets."""
    raw = sqlite3.connect(
        path,
        timeout=busy_timeout,
        isolation_level=None,
        check_same_thread=False,
        factory=StoreConnection,
    )
    raw.execute(f"PRAGMA busy_timeout = {int(busy_timeout * 1000)}")
    raw.execute("PRAGMA synchronous = NORMAL")
    return raw


def trim_wal(raw: StoreConnection, path: str, busy_timeout: float) -> None:
    """After a write on ``raw``: when the WAL of the SQLite file at ``path`` is larger than
    :data:`WAL_TRIM_BYTES` (the connection's first write) or :data:`LATER_WAL_TRIM_BYTES` (a later one),
    checkpoint it and truncate it, if no other connection is in the way now.

    SQLite starts its WAL over only from a connection that knows what was checkpointed already, which
    open connections share in the WAL's index. The process the provider forks for each event opens the
    store, and exits without closing it; when no other process has the store open, the next one rebuilds
    the index by reading the whole WAL, learns nothing of the checkpoints, and appends: the WAL grew with
    every event (19 MB after 300) and each event's open read all of it. A connection that stays open
    knows, and its later writes leave the WAL to SQLite's own checkpoints (trimming those at 1 MiB too
    checkpointed four times as often: docs/reliability.md, "A task's events"). Never waits:
    a reader or a writer in the way makes it give up until the next write. The write it follows is
    committed already, so what fails here is left to the next write too.
    """
    raw.writes += 1
    limit = WAL_TRIM_BYTES if raw.writes == 1 else LATER_WAL_TRIM_BYTES
    try:
        size = os.stat(path + "-wal").st_size
    except OSError:
        return
    if size <= limit:
        return
    with contextlib.suppress(sqlite3.Error):
        raw.execute("PRAGMA busy_timeout = 0")
        try:
            raw.execute("PRAGMA wal_checkpoint(TRUNCATE)").fetchall()
        finally:
            raw.execute(f"PRAGMA busy_timeout = {int(busy_timeout * 1000)}")


def connection_events(engine: sa.Engine, busy_timeout: float) -> None:
    """WAL, a busy timeout and ``BEGIN IMMEDIATE`` for writes on every SQLite connection."""

    @sa.event.listens_for(engine, "connect")
    def _connect(dbapi_connection: Any, _record: Any) -> None:
        dbapi_connection.isolation_level = None  # transactions begin in _begin, not in the driver
        cursor = dbapi_connection.cursor()
        cursor.execute(f"PRAGMA busy_timeout = {int(busy_timeout * 1000)}")
        cursor.execute("PRAGMA journal_mode = WAL")
        cursor.execute("PRAGMA synchronous = NORMAL")
        # a bigger page cache than SQLite's 2 MiB: a long-lived reader keeps the pages its questions
        # read (kept while nothing is written; pages only, filled as they are read)
        cursor.execute(f"PRAGMA cache_size = -{READ_CACHE_KIB}")
        cursor.close()

    @sa.event.listens_for(engine, "begin")
    def _begin(connection: sa.Connection) -> None:
        write = connection.get_execution_options().get("lineage_plus_write")
        connection.exec_driver_sql("BEGIN IMMEDIATE" if write else "BEGIN")


def engine_for(url: sa.URL, busy_timeout: float, *, prepared_statements: bool = False) -> sa.Engine:
    """The SQLAlchemy engine of a store at ``url``: a scratch store's one in-memory connection, a SQLite
    file's pool with the pragmas of :func:`connection_events`, or another engine's pool. On PostgreSQL
    through psycopg, statements are prepared only with ``prepared_statements`` (psycopg's default, after
    five uses): behind PgBouncer in transaction mode a prepared statement fails, or another client's of
    the same name runs (the store may live in Airflow's metadata database, often behind one)."""
    if url == sa.make_url(SCRATCH):
        engine = sa.create_engine(url, poolclass=sa.pool.StaticPool, creator=scratch_connection)
    elif url.get_backend_name() == "sqlite":
        engine = sa.create_engine(url, poolclass=sa.pool.QueuePool, pool_size=4)
    else:
        unprepared = url.get_driver_name() == "psycopg" and not prepared_statements
        arguments = {"prepare_threshold": None} if unprepared else {}
        return sa.create_engine(url, pool_pre_ping=True, pool_size=4, max_overflow=4, connect_args=arguments)
    connection_events(engine, busy_timeout)
    return engine


def schema_version(raw: sqlite3.Connection) -> str | None:
    """The store's schema version as written, read on ``raw`` without a write lock; None when it cannot be
    read (no tables yet, not a database: the caller decides and explains under the write lock)."""
    try:
        found = raw.execute("SELECT value FROM lineage_plus_meta WHERE name = 'schema_version'").fetchone()
    except sqlite3.Error:
        return None
    return None if found is None else str(found[0])
