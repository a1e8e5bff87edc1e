"""The lineage store: raw events in a database, through SQLAlchemy Core (one schema, three engines).

* **SQLite** (the default, one machine): a file, in WAL mode (readers never wait for the writer, nor the
  writer for readers); every write transaction starts with ``BEGIN IMMEDIATE``, so two writers queue on
  SQLite's one write lock (``busy_timeout``) instead of failing with ``SQLITE_BUSY_SNAPSHOT``. A new file
  and its directory get exactly the event log's modes; SQLite gives its ``-wal`` and ``-shm`` files the
  database file's permissions.
* **PostgreSQL** (several machines): a database of its own or Airflow's metadata database.
* **MySQL**: written the way Airflow supports it (``mysql+mysqldb``), ``INSERT IGNORE``; untested.

The tables are created on first use (:mod:`.schema`; a schema version in ``lineage_plus_meta``). A store
this version cannot read (garbage, a truncated file, a newer schema) raises :class:`StoreDamaged` naming
the fix; the package never deletes or rewrites it. Nothing here imports Airflow: configuration comes in
as arguments (``conf.py`` reads it).
"""

from __future__ import annotations

import contextlib
import os
import sqlite3
import threading
import time
from collections.abc import Callable, Iterable, Iterator, Sequence
from pathlib import Path
from typing import Any, TypeVar

import attrs
import sqlalchemy as sa
from sqlalchemy.dialects import postgresql, sqlite

from airflow_lineage_plus.exceptions import BadEventError, StoreDamaged, StoreUnavailable
from airflow_lineage_plus.store import payloads, read_limit, schema, sqlite_connections
from airflow_lineage_plus.store.facts import Facts
from airflow_lineage_plus.store.fold import Folder
from airflow_lineage_plus.store.refold import UPGRADES, add_facts, fold_stored, rows_after
from airflow_lineage_plus.store.rows import RawEvent, node_key, raw_event
from airflow_lineage_plus.store.sqlite_connections import SCRATCH

#: rows per INSERT transaction (one lock hold on SQLite)
APPEND_BATCH = 2000
#: attempts of a write transaction that a deadlock or a serialisation failure ended
RETRIES = 5
#: SQLSTATEs of a transaction worth running again: serialization_failure, deadlock_detected
_TRANSIENT = {"40001", "40P01"}
_T = TypeVar("_T")


def _transient(error: BaseException | None) -> bool:
    """Whether a database error ended a transaction that may succeed when run again."""
    original = getattr(error, "orig", None)
    code = getattr(original, "sqlstate", None) or getattr(original, "pgcode", None)
    if code in _TRANSIENT:
        return True
    args: tuple[Any, ...] = tuple(getattr(original, "args", ()) or ())
    return bool(args) and args[0] in (1205, 1213)  # MySQL: lock wait timeout, deadlock


_NOT_YET = "it is being created, or nothing was written to it; try again once events are written"
_FIX = (
    "move it aside (nothing was deleted) and rebuild it from the event log with "
    "`lineage-plus import <event log>`, or point [lineage_plus] store_url at a good one"
)


@attrs.frozen
class AppendResult:
    """What an append did: rows ``added``, ``duplicates`` already stored, ``rejected`` counts by kind."""

    added: int
    duplicates: int
    rejected: dict[str, int]


def _first_of_each(events: Sequence[RawEvent], new: dict[bytes, int]) -> list[bool]:
    """For each event, whether it is new: its digest is in ``new`` and no event before it had it."""
    seen: set[bytes] = set()
    flags = []
    for event in events:
        flags.append(event.digest in new and event.digest not in seen)
        seen.add(event.digest)
    return flags


def sqlite_url(path: str | os.PathLike[str]) -> str:
    """The SQLAlchemy URL of a SQLite store file."""
    return f"sqlite:///{Path(path).absolute()}"


class LineageStore:
    """One lineage store (see the module docstring); thread-safe, one engine per instance."""

    def __init__(
        self,
        url: str,
        *,
        file_mode: int = 0o640,
        dir_mode: int = 0o750,
        busy_timeout: float = 30.0,
        create: bool = True,
        read_timeout: float | None = None,
        prepared_statements: bool = False,
    ) -> None:
        """``url``: a SQLAlchemy URL (``sqlite:///...``, ``postgresql+psycopg://...``, ...). ``create``:
        make the file and the tables when missing (else :class:`StoreUnavailable`). ``read_timeout``:
        seconds a statement of :meth:`read` may run (:mod:`.read_limit`; None: no limit).
        ``prepared_statements``: let psycopg prepare statements on PostgreSQL
        (:func:`.sqlite_connections.engine_for`)."""
        self.url = sa.make_url(url)
        self.where = self.url.render_as_string(hide_password=True)
        self.dialect = self.url.get_backend_name()
        self.path: Path | None = None
        self._raw: sqlite_connections.StoreConnection | None = None
        self._raw_lock = threading.Lock()
        self._reading = threading.local()  # the read transaction this thread holds (:meth:`read`)
        self._busy_timeout = busy_timeout
        self.read_timeout = read_timeout
        self.prepared_statements = prepared_statements
        self._engine: sa.Engine | None = None
        self._engine_lock = threading.Lock()
        #: a scratch store: one in-memory database on one connection, shared by every thread
        self.scratch = self.url == sa.make_url(SCRATCH)
        if self.dialect == "sqlite" and not self.scratch:
            self._create_file(file_mode, dir_mode, create)
        self.folder = Folder.for_url(self.url)
        try:
            # read without the write lock (each process the provider forks for an event opens the store);
            # a SQLite store's on its own connection, without an engine until something asks for one
            if self._current_sqlite() if self.path is not None else self._current():
                return
            try:
                self._prepare(create)
            except StoreDamaged:
                raise
            except StoreUnavailable:  # another process created the tables at the same moment
                time.sleep(0.2)
                self._prepare(create)
        except BaseException:
            self.close()
            raise

    @property
    def engine(self) -> sa.Engine:
        """The store's SQLAlchemy engine, made on first use (a process that only adds events to a SQLite
        store of the current version never needs one: :meth:`add_all` uses its own connection)."""
        if self._engine is None:
            with self._engine_lock:
                if self._engine is None:
                    engine = sqlite_connections.engine_for(
                        self.url, self._busy_timeout, prepared_statements=self.prepared_statements
                    )
                    if self.read_timeout and self.dialect == "sqlite" and not self.scratch:
                        read_limit.watch_sqlite(engine)
                    self._engine = engine
        return self._engine

    def _raw_sqlite(self) -> sqlite_connections.StoreConnection:
        """This store's own SQLite connection (:meth:`add_all`'s), opened on first use; under
        ``_raw_lock``."""
        if self._raw is None:
            self._raw = sqlite_connections.raw_connection(str(self.path), self._busy_timeout)
        return self._raw

    def _current_sqlite(self) -> bool:
        """Whether this SQLite file store has this package's schema version, read on the store's own
        connection; anything else is decided, and explained, by :meth:`_prepare`."""
        with self._raw_lock, contextlib.suppress(sqlite3.Error):  # not a database: explained by _prepare
            return sqlite_connections.schema_version(self._raw_sqlite()) == str(schema.SCHEMA_VERSION)
        return False

    # -- opening --------------------------------------------------------------------------------
    def _create_file(self, file_mode: int, dir_mode: int, create: bool) -> None:
        database = self.url.database
        if not database or database == ":memory:":
            raise StoreUnavailable("the SQLite lineage store needs a file: sqlite:////path/to/lineage.db")
        path = Path(database)
        self.path = path
        if path.exists():
            return
        if not create:
            raise StoreUnavailable(f"no lineage store at {path}: `lineage-plus import <event log>` makes one")
        if not path.parent.is_dir():
            os.makedirs(path.parent, mode=dir_mode, exist_ok=True)
            os.chmod(path.parent, dir_mode)  # exactly, whatever the umask
        with contextlib.suppress(FileExistsError):
            fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, file_mode)
            try:
                os.fchmod(fd, file_mode)
            finally:
                os.close(fd)

    def _prepare(self, create: bool) -> None:
        """Under the write lock: check the schema version; create the tables on first use, upgrade an
        older schema."""
        with self.errors(), self._write() as connection:
            names = set(sa.inspect(connection).get_table_names())
            if schema.meta.name not in names:
                if not names and not create:  # a file another process is creating the tables of
                    raise StoreUnavailable(f"lineage store {self.where} has no tables yet: {_NOT_YET}")
                if schema.event.name in names or not create:
                    raise StoreDamaged(f"lineage store {self.where} has no schema version: {_FIX}")
                schema.metadata.create_all(connection)
                connection.execute(
                    sa.insert(schema.meta).values(name="schema_version", value=str(schema.SCHEMA_VERSION))
                )
                return
            version = self._version(connection)
            if version > schema.SCHEMA_VERSION:
                raise StoreDamaged(
                    f"lineage store {self.where} has schema version {version}, written by a newer "
                    f"airflow-lineage-plus (this one reads {schema.SCHEMA_VERSION}): upgrade the package"
                )
            for step in range(version, schema.SCHEMA_VERSION):
                UPGRADES[step](connection)
            if version < schema.SCHEMA_VERSION:
                connection.execute(
                    sa.update(schema.meta)
                    .where(schema.meta.c.name == "schema_version")
                    .values(value=str(schema.SCHEMA_VERSION))
                )

    def _current(self) -> bool:
        """Whether the store has this package's schema version; anything else is decided, and explained,
        by :meth:`_prepare`."""
        with self.errors(), self.engine.connect() as connection:  # not reachable: raised as by the write
            try:
                return self._version(connection) == schema.SCHEMA_VERSION
            except (sa.exc.DBAPIError, StoreDamaged):  # no tables yet, an older or unusable version
                return False

    def _version(self, connection: sa.Connection) -> int:
        value = connection.execute(
            sa.select(schema.meta.c.value).where(schema.meta.c.name == "schema_version")
        ).scalar()
        try:
            version = int(value) if value is not None else 0
        except ValueError:
            version = 0
        if version < 1 or (version < schema.SCHEMA_VERSION and version not in UPGRADES):
            raise StoreDamaged(f"lineage store {self.where} has an unusable schema version {value!r}: {_FIX}")
        return version

    @contextlib.contextmanager
    def errors(self) -> Iterator[None]:
        """Database errors as the package's: a damaged store names the fix, an unreachable one says so."""
        try:
            yield
        except sa.exc.DatabaseError as exc:
            if self.read_timeout and read_limit.stopped(exc):
                raise StoreUnavailable(
                    f"a read of the lineage store {self.where} ran past [lineage_plus] store_read_timeout "
                    f"({self.read_timeout} s) and was stopped"
                ) from exc
            raise self._error(str(exc.orig), missing_table=isinstance(exc, sa.exc.OperationalError)) from exc
        except sqlite3.Error as exc:  # the transport's own connection (:meth:`add`)
            raise self._error(str(exc), missing_table=True) from exc

    def _error(self, text: str, *, missing_table: bool = False) -> StoreUnavailable:
        """The package's error for a database error's text: a damaged store names the fix
        (``missing_table``: a missing table is damage too, for an operational error)."""
        if "malformed" in text or "not a database" in text or (missing_table and "no such table" in text):
            return StoreDamaged(f"lineage store {self.where} is damaged ({text}): {_FIX}")
        return StoreUnavailable(f"cannot use the lineage store {self.where}: {text}")

    @contextlib.contextmanager
    def _write(self) -> Iterator[sa.Connection]:
        """A write transaction (``BEGIN IMMEDIATE`` on SQLite)."""
        with self.engine.connect() as connection:
            connection = connection.execution_options(lineage_plus_write=True)
            with connection.begin():
                yield connection

    @contextlib.contextmanager
    def read(self) -> Iterator[sa.Connection]:
        """A read transaction (one snapshot: WAL on SQLite, MVCC elsewhere); errors as the package's.
        Inside another one of this thread, that one: a question holding one reads a single snapshot
        through one connection, however many steps it has."""
        held: sa.Connection | None = getattr(self._reading, "connection", None)
        if held is not None:
            with self.errors():
                yield held
            return
        with self.errors(), self.engine.connect() as connection:
            if self.dialect == "postgresql":  # its default, READ COMMITTED, sees each statement's commits
                connection = connection.execution_options(isolation_level="REPEATABLE READ")
            with connection.begin(), read_limit.bounded(connection, self.read_timeout):
                self._reading.connection = connection
                try:
                    yield connection
                finally:
                    self._reading.connection = None

    # -- writing --------------------------------------------------------------------------------
    def append(
        self, events: Iterable[bytes | memoryview | RawEvent], *, batch: int = APPEND_BATCH
    ) -> AppendResult:
        """Store events (JSON bytes, or :class:`RawEvent`) not stored yet, and fold what they say, in
        transactions of ``batch`` events; bytes that are not an event are counted in ``rejected`` and
        not stored."""
        added = duplicates = 0
        rejected: dict[str, int] = {}
        rows: dict[bytes, RawEvent] = {}
        for item in events:
            try:
                event = item if isinstance(item, RawEvent) else raw_event(item)
            except BadEventError as exc:
                rejected[exc.kind] = rejected.get(exc.kind, 0) + 1
                continue
            if event.digest in rows:
                duplicates += 1
                continue
            rows[event.digest] = event
            if len(rows) >= batch:
                stored = self._insert(list(rows.values()))
                added, duplicates = added + stored, duplicates + len(rows) - stored
                rows = {}
        if rows:
            stored = self._insert(list(rows.values()))
            added, duplicates = added + stored, duplicates + len(rows) - stored
        return AppendResult(added, duplicates, rejected)

    def add(self, event: RawEvent) -> bool:
        """Store one event and fold it (the transport's path, once per event); whether it was not stored
        yet."""
        return self.add_all((event,))[0]

    def add_all(self, events: Sequence[RawEvent]) -> list[bool]:
        """Store events and fold them in one transaction (the endpoint's group of requests), with the fewest
        steps; for each, whether it was not stored yet (an event given twice: the second is not). On
        SQLite one connection of its own runs ``BEGIN IMMEDIATE``, the inserts and the commit directly (a
        third of the cost of a pooled SQLAlchemy transaction)."""
        if not events:
            return []
        if self.dialect != "sqlite":
            distinct = list({event.digest: event for event in events}.values())
            new = self._retrying(lambda connection: self._insert_in(connection, distinct))
            return _first_of_each(events, new)
        added: list[bool] = []
        with self._raw_lock, self.errors():
            raw = self._raw_sqlite()
            raw.execute("BEGIN IMMEDIATE")
            try:
                facts = Facts()
                statement, names = sqlite_connections.ADD_EVENT
                for event in events:
                    row = event.row()
                    row["payload"] = payloads.pack(event.payload)
                    cursor = raw.execute(statement, [row[name] for name in names])
                    added.append(cursor.rowcount == 1)
                    if added[-1] and cursor.lastrowid is not None:
                        add_facts(facts, event, cursor.lastrowid)
                self.folder.write_sqlite(raw, facts)
                raw.execute("COMMIT")
            except BaseException:
                if raw.in_transaction:
                    raw.execute("ROLLBACK")
                raise
            sqlite_connections.trim_wal(raw, str(self.path), self._busy_timeout)
        return added

    def _insert(self, events: list[RawEvent]) -> int:
        """Store the events not stored yet and fold them, in one transaction; how many were new."""
        return len(self._retrying(lambda connection: self._insert_in(connection, events)))

    def _retrying(self, work: Callable[[sa.Connection], _T]) -> _T:
        """``work`` in a write transaction, run again when the engine chose it as a deadlock's victim or
        could not serialise it (PostgreSQL, MySQL: two writers folding the same rows; the fold takes rows
        in one order, so this is rare)."""
        for attempt in range(RETRIES):
            try:
                with self.errors(), self._write() as connection:
                    return work(connection)
            except StoreUnavailable as exc:
                if attempt == RETRIES - 1 or not _transient(exc.__cause__):
                    raise
                time.sleep(0.01 * (attempt + 1))
        raise AssertionError("unreachable")

    def _insert_in(self, connection: sa.Connection, events: list[RawEvent]) -> dict[bytes, int]:
        """:meth:`_insert` in the transaction of ``connection`` (events of distinct digests); the row id of
        each new one, by digest."""
        table = schema.event
        rows = [event.row() for event in events]
        if self.dialect == "sqlite":
            for row in rows:
                row["payload"] = payloads.pack(row["payload"])
        if self.dialect in {"sqlite", "postgresql"}:
            module = sqlite if self.dialect == "sqlite" else postgresql
            statement = module.insert(table).on_conflict_do_nothing(index_elements=["digest"])
            returned: Sequence[Any] = connection.execute(
                statement.returning(table.c.id, table.c.digest), rows
            ).all()
            new = {bytes(digest): int(row_id) for row_id, digest in returned}
        else:  # MySQL, MariaDB: no RETURNING; the rows are found by digest
            connection.execute(sa.insert(table).prefix_with("IGNORE"), rows)
            new = self._mysql_ids(connection, events)
        facts = Facts()
        for event in events:
            row_id = new.get(event.digest)
            if row_id is not None:
                add_facts(facts, event, row_id)
        self.folder.write(connection, facts)
        return new

    @staticmethod
    def _mysql_ids(connection: sa.Connection, events: list[RawEvent]) -> dict[bytes, int]:
        """Row ids of the events this transaction stored (MySQL): those whose digest was not there
        before could not be told apart from old ones, so every one found is folded (folding is
        idempotent: an event folded twice changes nothing)."""
        table = schema.event
        digests = [event.digest for event in events]
        found: Sequence[Any] = connection.execute(
            sa.select(table.c.digest, table.c.id).where(table.c.digest.in_(digests))
        ).all()
        return {bytes(digest): int(row_id) for digest, row_id in found}

    def fold(self, facts: Facts) -> None:
        """Fold ``facts`` (of events kept elsewhere: their refs are places there) in one transaction."""
        self._retrying(lambda connection: self.folder.write(connection, facts))

    def reset(self) -> None:
        """Empty a scratch store: its folded state as new (to use it for another question)."""
        if not self.scratch:
            raise ValueError("only a scratch store is emptied")
        raw = self.engine.raw_connection()
        try:
            driver = raw.driver_connection
            assert isinstance(driver, sqlite3.Connection)
            sqlite_connections.empty_scratch(driver)
        finally:
            raw.close()

    def refold(self, progress: Callable[[int], None] | None = None) -> dict[str, int]:
        """Fold every stored event again into emptied folded-state tables, in one transaction (writers
        wait, and the transport spools); what could not be folded is counted and returned."""
        with self.errors(), self._write() as connection:
            for table in reversed(schema.FOLDED):
                connection.execute(sa.delete(table))
            return fold_stored(connection, self.folder, progress=progress)

    def delete_ids(self, ids: Sequence[int]) -> int:
        """Delete these raw events, in one short transaction; how many were deleted."""
        if not ids:
            return 0
        with self.errors(), self._write() as connection:
            return connection.execute(sa.delete(schema.event).where(schema.event.c.id.in_(ids))).rowcount

    def set_retained_from(self, micros: int) -> None:
        """Record that raw events before ``micros`` (epoch µs) may be gone (never moves back)."""
        with self.errors(), self._write() as connection:
            table = schema.meta
            current = connection.execute(
                sa.select(table.c.value).where(table.c.name == "retained_from")
            ).scalar()
            if current is None:
                connection.execute(sa.insert(table).values(name="retained_from", value=str(micros)))
            elif int(current) < micros:
                connection.execute(
                    sa.update(table).where(table.c.name == "retained_from").values(value=str(micros))
                )

    def set_meta_value(self, name: str, value: str) -> None:
        """Keep ``value`` (up to 255 characters) under ``name`` (up to 64) in ``lineage_plus_meta``."""
        table = schema.meta
        with self.errors(), self._write() as connection:
            updated = connection.execute(
                sa.update(table).where(table.c.name == name).values(value=value)
            ).rowcount
            if not updated:
                connection.execute(sa.insert(table).values(name=name, value=value))

    # -- reading --------------------------------------------------------------------------------
    def meta_value(self, name: str) -> str | None:
        """What :meth:`set_meta_value` kept under ``name``; None when nothing."""
        with self.read() as connection:
            statement = sa.select(schema.meta.c.value).where(schema.meta.c.name == name)
            value = connection.execute(statement).scalar()
        return None if value is None else str(value)

    def retained_from(self) -> int | None:
        """The time (epoch µs) before which raw events were deleted by retention; None when never."""
        with self.read() as connection:
            value = connection.execute(
                sa.select(schema.meta.c.value).where(schema.meta.c.name == "retained_from")
            ).scalar()
        return int(value) if value is not None else None

    def last_id(self) -> int:
        """The highest row id stored (0 for an empty store)."""
        with self.read() as connection:
            return int(connection.execute(sa.select(sa.func.max(schema.event.c.id))).scalar() or 0)

    def time_range(self) -> tuple[int | None, int | None]:
        """The earliest and the latest event time stored (epoch µs); None when empty."""
        column = schema.event.c.event_time
        with self.read() as connection:
            first, last = (
                connection.execute(sa.select(sa.func.min(column), sa.func.max(column))).one()._tuple()
            )
        return (int(first) if first is not None else None), (int(last) if last is not None else None)

    def count(self) -> int:
        with self.read() as connection:
            return int(connection.execute(sa.select(sa.func.count()).select_from(schema.event)).scalar() or 0)

    def rows_after(self, after: int, limit: int) -> list[tuple[int, bytes]]:
        """(row id, payload) of up to ``limit`` events with a row id above ``after``, by row id."""
        with self.read() as connection:
            return rows_after(connection, after, limit)

    def all_payloads(self, batch: int = 5000) -> list[bytes]:
        """Every stored payload, in the order stored (read ``batch`` rows per query)."""
        found: list[bytes] = []
        last = 0
        while rows := self.rows_after(last, batch):
            found += [payload for _, payload in rows]
            last = rows[-1][0]
        return found

    def payloads(self, ids: Iterable[int]) -> dict[int, bytes]:
        """The payloads of these row ids (ids deleted meanwhile are missing)."""
        wanted = sorted(set(ids))
        table = schema.event
        found: dict[int, bytes] = {}
        with self.read() as connection:
            for start in range(0, len(wanted), 500):
                part = wanted[start : start + 500]
                rows: Sequence[Any] = connection.execute(
                    sa.select(table.c.id, table.c.payload).where(table.c.id.in_(part))
                ).all()
                for row_id, payload in rows:
                    found[int(row_id)] = payloads.expand(bytes(payload))
        return found

    def run_times(self) -> list[tuple[str | None, str | None, str, int, int | None, str | None]]:
        """Per run: (job namespace, job name, run id, latest event time, latest time of a COMPLETE, FAIL
        or ABORT event, parent run id); for retention."""
        table = schema.event
        terminal = sa.case((table.c.event_type.in_(("COMPLETE", "FAIL", "ABORT")), table.c.event_time))
        statement = (
            sa.select(
                table.c.job_namespace,
                table.c.job_name,
                table.c.run_id,
                sa.func.max(table.c.event_time),
                sa.func.max(terminal),
                sa.func.max(table.c.parent_run_id),
            )
            .where(table.c.run_id.is_not(None))
            .group_by(table.c.job_namespace, table.c.job_name, table.c.run_id)
        )
        with self.read() as connection:
            return [tuple(row) for row in connection.execute(statement)]  # type: ignore[misc]

    def old_rows(self, before: int, after_id: int, limit: int) -> list[tuple[int, str | None]]:
        """(row id, run id) of up to ``limit`` events of a run older than ``before`` (epoch µs), by row
        id from ``after_id`` on."""
        table = schema.event
        statement = (
            sa.select(table.c.id, table.c.run_id)
            .where(table.c.event_time < before, table.c.id > after_id, table.c.run_id.is_not(None))
            .order_by(table.c.id)
            .limit(limit)
        )
        with self.read() as connection:
            rows: Sequence[Any] = connection.execute(statement).all()
        return [(int(i), r) for i, r in rows]

    def node_event_ids(self, node_id: str, *, runless: bool = False, before: int | None = None) -> list[int]:
        """Row ids of the events of a node (a job's, or the DatasetEvents of a dataset), by row id;
        ``runless``: only those without a run (a job's JobEvents); ``before``: only those sent at or
        before that time."""
        table = schema.event
        statement = sa.select(table.c.id).where(table.c.node_key == node_key(node_id)).order_by(table.c.id)
        if runless:
            statement = statement.where(table.c.run_id.is_(None))
        if before is not None:
            statement = statement.where(table.c.event_time <= before)
        with self.read() as connection:
            found: Sequence[Any] = connection.execute(statement).scalars().all()
        return [int(row_id) for row_id in found]

    def has_node(self, node_id: str) -> bool:
        """Whether any stored event is the node's, or names it in its inputs or outputs."""
        key = node_key(node_id)
        event, edge = schema.event, schema.edge
        column = edge.c.job_key if node_id.startswith("job:") else edge.c.dataset_key
        with self.read() as connection:
            if connection.execute(sa.select(event.c.id).where(event.c.node_key == key).limit(1)).first():
                return True
            return connection.execute(sa.select(column).where(column == key).limit(1)).first() is not None

    def close(self) -> None:
        with self._raw_lock:
            if self._raw is not None:
                self._raw.close()
                self._raw = None
        if self._engine is not None:
            self._engine.dispose()
