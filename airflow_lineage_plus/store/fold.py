"""The folding rules, written once: how the store's writes keep each fact an event states.

Each folded-state table (:mod:`.schema`) has one rule, an upsert that does not depend on the order
events arrive in (the facts come from :mod:`.facts`):

==============================  ===========================================================================
rule                            tables
==============================  ===========================================================================
kept once (insert if absent)    ``node``, ``run_io``, ``run_event``, ``column_reader``, ``skipped_task``,
                                ``run_trigger``
the newest by (time, tie)       ``fact`` (``event_time``, ``tie``), ``run_state`` (``end_time``, ``rank``,
                                ``skipped``, ``upstream_failed``, ``reason_tie``)
the least                       ``run_parent`` (``parent_run_id``, ``parent_job_id``)
the earliest / latest columns   ``run`` (``start``, ``first_seen``, ``dag_id``, ``airflow_run_key``: least;
                                ``sort_time`` is ``start``, else ``first_seen``), ``edge``
                                (``first_reported``: least, ``declared``: greatest), ``dataset_schema``
                                (``last_seen``: greatest)
==============================  ===========================================================================

"Newest" and "least" compare row values, so ties break on the next column; text compares as bytes on
every engine (PostgreSQL's ``COLLATE "C"``, MySQL's binary collation), as Python compares strings. A
rule's ``WHERE`` leaves a row untouched when the event changes nothing in it.

SQLite and PostgreSQL share one statement per table (``INSERT ... ON CONFLICT``). SQLite runs it once per
row. PostgreSQL runs it once per table and *round*: the rows go as one array per column (``INSERT ...
SELECT unnest(...)``, one statement text whatever their number, one plan), and since one statement may not
touch a key twice, a batch holding a key twice sends it in a second round (the rules do not depend on the
order rows arrive in, so rounds change nothing in what is kept); through psycopg the arrays go in binary
and a write's statements in one pipeline (one round trip to the server, not one per statement). MySQL
(``ON DUPLICATE KEY UPDATE`` evaluates its assignments one after another, so a condition would see the
new values) inserts if absent, then updates where the event's row wins; it is written the way Airflow
supports MySQL and untested.
"""

from __future__ import annotations

import contextlib
import sqlite3
from collections.abc import Callable, Iterator, Sequence
from typing import Any, NamedTuple

import attrs
import sqlalchemy as sa
from sqlalchemy.dialects import postgresql, sqlite

from airflow_lineage_plus.store import facts as f
from airflow_lineage_plus.store import schema


@attrs.frozen
class Rule:
    """How one table keeps what events say: ``kind`` is ``once``, ``newest``, ``least`` or ``merge``
    (``merge``: the columns' own reductions, :func:`_merges`); ``order`` the columns compared."""

    table: sa.Table
    rows: str  # the :class:`~.facts.Facts` attribute holding the table's rows
    row_type: type[NamedTuple]
    kind: str
    order: tuple[str, ...] = ()


RULES = (
    Rule(schema.node, "nodes", f.NodeRow, "once"),
    Rule(schema.edge, "edges", f.EdgeRow, "merge"),
    Rule(schema.run, "runs", f.RunRow, "merge"),
    Rule(
        schema.run_state,
        "run_states",
        f.RunStateRow,
        "newest",
        ("end_time", "rank", "skipped", "upstream_failed", "reason_tie"),
    ),
    Rule(schema.run_parent, "parents", f.RunParentRow, "least", ("parent_run_id", "parent_job_id")),
    Rule(schema.run_trigger, "triggers", f.RunTriggerRow, "once"),
    Rule(schema.run_io, "run_io", f.RunIoRow, "once"),
    Rule(schema.run_event, "run_events", f.RunEventRow, "once"),
    Rule(schema.fact, "facts", f.FactRow, "newest", ("event_time", "tie")),
    Rule(schema.dataset_schema, "schemas", f.SchemaRow, "merge"),
    Rule(schema.column_reader, "column_readers", f.ColumnReaderRow, "once"),
    Rule(schema.skipped_task, "skipped_tasks", f.SkippedTaskRow, "once"),
)


def _least(new: Any, old: Any) -> Any:
    """The lesser of two nullable values (a null one gives way)."""
    return sa.case((new.is_(None), old), (old.is_(None), new), (new < old, new), else_=old)


def _lowers(new: Any, old: Any) -> Any:
    return sa.and_(new.is_not(None), sa.or_(old.is_(None), new < old))


def _merges(table: sa.Table, new: Any, binary: Callable[[Any], Any]) -> tuple[dict[str, Any], Any]:
    """(SET, WHERE) of the tables whose columns each keep their own earliest or latest value."""
    c = table.c
    if table is schema.run:
        start = _least(new.start, c.start)
        return (
            {
                "start": start,
                "first_seen": _least(new.first_seen, c.first_seen),
                "sort_time": sa.func.coalesce(start, _least(new.first_seen, c.first_seen)),
                "dag_id": _least(binary(new.dag_id), binary(c.dag_id)),
                "airflow_run_key": _least(new.airflow_run_key, c.airflow_run_key),
            },
            sa.or_(
                new.first_seen < c.first_seen,
                _lowers(new.start, c.start),
                _lowers(binary(new.dag_id), binary(c.dag_id)),
                _lowers(new.airflow_run_key, c.airflow_run_key),
            ),
        )
    if table is schema.edge:
        return (
            {
                "first_reported": _least(new.first_reported, c.first_reported),
                "declared": sa.case((new.declared > c.declared, new.declared), else_=c.declared),
            },
            sa.or_(_lowers(new.first_reported, c.first_reported), new.declared > c.declared),
        )
    if table is schema.dataset_schema:
        return {"last_seen": new.last_seen}, new.last_seen > c.last_seen
    raise ValueError(f"no merge rule for {table.name}")


def _binary_for(dialect: str) -> Callable[[Any], Any]:
    """Text compared byte by byte on this engine."""
    if dialect == "postgresql":
        return lambda column: column.collate("C")
    if dialect == "mysql":
        return lambda column: column.collate("utf8mb4_bin")
    return lambda column: column


def _compare(rule: Rule, new: Any, binary: Callable[[Any], Any]) -> Any:
    """Whether the event's row wins over the stored one (``new``: its columns)."""
    table = rule.table
    newer = sa.tuple_(*[_text_binary(new[c], binary) for c in rule.order])
    older = sa.tuple_(*[_text_binary(table.c[c], binary) for c in rule.order])
    return newer > older if rule.kind == "newest" else newer < older


def _text_binary(column: Any, binary: Callable[[Any], Any]) -> Any:
    return binary(column) if isinstance(column.type, sa.Text | sa.String) else column


@attrs.frozen
class Statement:
    """A rule compiled for one engine: the driver's SQL, the row fields its parameters take, in order."""

    rule: Rule
    sql: str
    fields: tuple[str, ...]
    #: MySQL's second statement (update where the event's row wins); None elsewhere
    update: Statement | None = None


def compile_rules(dialect: sa.Dialect) -> list[Statement]:
    """Every rule as ``dialect``'s SQL (positional parameters when its driver takes them)."""
    name = dialect.name
    binary = _binary_for(name)
    compiled = []
    for rule in RULES:
        columns = rule.row_type._fields
        keys = [c.name for c in rule.table.primary_key.columns]
        values: dict[str, Any] = {column: sa.bindparam(column) for column in columns}
        if name in {"sqlite", "postgresql"}:
            insert: Any
            if name == "sqlite":
                insert = sqlite.insert(rule.table).values(values)
            else:
                insert = postgresql.insert(rule.table).from_select(columns, _unnested(rule.table, columns))
            new = insert.excluded
            if rule.kind == "once":
                statement: Any = insert.on_conflict_do_nothing(index_elements=keys)
            elif rule.kind == "merge":
                set_, where = _merges(rule.table, new, binary)
                statement = insert.on_conflict_do_update(index_elements=keys, set_=set_, where=where)
            else:
                set_ = {column: new[column] for column in columns if column not in keys}
                where = _compare(rule, new, binary)
                statement = insert.on_conflict_do_update(index_elements=keys, set_=set_, where=where)
            compiled.append(_binary_arrays(_statement(rule, statement, dialect), dialect))
        else:
            insert = sa.insert(rule.table).values(values).prefix_with("IGNORE")
            update = None
            if rule.kind != "once":
                update = _mysql_update(rule, keys, binary, dialect)
            compiled.append(attrs.evolve(_statement(rule, insert, dialect), update=update))
    return compiled


def _unnested(table: sa.Table, columns: Sequence[str]) -> sa.Select[Any]:
    """PostgreSQL: the rows of one round, each column's values bound as one array and unnested in step."""
    return sa.select(
        *[
            sa.func.unnest(sa.cast(sa.bindparam(column), postgresql.ARRAY(table.c[column].type)))
            for column in columns
        ]
    )


def _psycopg(dialect: sa.Dialect) -> bool:
    """Whether the engine is PostgreSQL through psycopg (binary parameters, pipeline mode)."""
    return dialect.name == "postgresql" and dialect.driver == "psycopg"


def _binary_arrays(statement: Statement, dialect: sa.Dialect) -> Statement:
    """With psycopg, a round's arrays sent in binary (its ``%(name)b``): each text goes as its bytes,
    where the text form quotes and escapes every element, one regular expression at a time (most of a
    PostgreSQL write's CPU)."""
    if not _psycopg(dialect):
        return statement
    sql = statement.sql
    for column in statement.rule.row_type._fields:
        sql = sql.replace(f"%({column})s", f"%({column})b")
    return attrs.evolve(statement, sql=sql)


@contextlib.contextmanager
def _pipelined(connection: sa.Connection) -> Iterator[None]:
    """PostgreSQL through psycopg (:func:`_psycopg`): the block's statements sent without waiting for
    each one's answer (its pipeline mode: one round trip for a write's rules, not one per rule), a failure
    raised at the end as SQLAlchemy's error, as it would have been without."""
    import psycopg

    if not psycopg.Pipeline.is_supported():  # a libpq before 14: one statement at a time, as before
        yield
        return
    raw = connection.connection.driver_connection
    assert isinstance(raw, psycopg.Connection)
    try:
        with raw.pipeline():
            yield
    except psycopg.Error as exc:
        raise sa.exc.DBAPIError.instance(None, None, exc, psycopg.Error, dialect=connection.dialect) from exc


def _rounds(rows: Sequence[NamedTuple], size: int) -> list[list[NamedTuple]]:
    """``rows`` (sorted by key: the first ``size`` fields) in rounds where no key comes twice: a key's
    first row in the first round, its second in the second..., each round still sorted by key."""
    rounds: list[list[NamedTuple]] = []
    seen: dict[tuple[Any, ...], int] = {}
    for row in rows:
        key = row[:size]
        number = seen[key] = seen.get(key, -1) + 1
        if number == len(rounds):
            rounds.append([])
        rounds[number].append(row)
    return rounds


def _mysql_update(
    rule: Rule, keys: list[str], binary: Callable[[Any], Any], dialect: sa.Dialect
) -> Statement:
    """MySQL: update the stored row where the event's wins (set from bound parameters, not from columns)."""
    table = rule.table
    new: dict[str, Any] = {column: sa.bindparam(f"new_{column}") for column in rule.row_type._fields}

    class _New:
        def __getitem__(self, column: str) -> Any:
            return new[column]

        def __getattr__(self, column: str) -> Any:
            return new[column]

    match = sa.and_(*[table.c[key] == new[key] for key in keys])
    if rule.kind == "merge":
        set_, where = _merges(table, _New(), binary)
    else:
        set_ = {c: new[c] for c in rule.row_type._fields if c not in keys}
        where = _compare(rule, _New(), binary)
    statement = sa.update(table).where(match, where).values(set_)
    return _statement(rule, statement, dialect, prefix="new_")


def _statement(rule: Rule, statement: Any, dialect: sa.Dialect, prefix: str = "") -> Statement:
    compiled = statement.compile(dialect=dialect)
    if compiled.positiontup is not None:
        fields = tuple(name.removeprefix(prefix) for name in compiled.positiontup)
    else:
        fields = ()  # named parameters: rows go as mappings
    return Statement(rule, str(compiled), fields)


#: the rules compiled per engine and driver (compiled once per process)
_COMPILED: dict[tuple[str, str, str], list[Statement]] = {}


_FOLDERS: dict[str, Folder] = {}


class Folder:
    """Writes :class:`~.facts.Facts` with the rules (:data:`RULES`), compiled once for one engine."""

    @classmethod
    def for_url(cls, url: str | sa.URL) -> Folder:
        """The folder of the engine of ``url``, made once per process and driver without connecting:
        processes forked after it find the rules compiled (:mod:`airflow_lineage_plus.deliver.preload`)."""
        url = sa.make_url(url)
        folder = _FOLDERS.get(url.drivername)
        if folder is None:
            engine = sa.create_engine(url)
            try:
                folder = _FOLDERS[url.drivername] = cls(engine.dialect)
            finally:
                engine.dispose()
        return folder

    def __init__(self, dialect: sa.Dialect) -> None:
        self.dialect = dialect.name
        self.pipelined = _psycopg(dialect)
        key = (dialect.name, dialect.driver, dialect.paramstyle)
        statements = _COMPILED.get(key)
        if statements is None:
            statements = _COMPILED[key] = compile_rules(dialect)
        self.statements = statements

    def write(self, connection: sa.Connection, facts: f.Facts) -> None:
        """Fold ``facts`` in the transaction of ``connection``. Every writer takes the tables in one order
        and each table's rows by key, so two writers never wait for each other in a cycle (PostgreSQL
        locks each row it inserts or updates)."""
        if self.dialect == "sqlite":
            raw = connection.connection.driver_connection
            assert isinstance(raw, sqlite3.Connection)
            self.write_sqlite(raw, facts)
            return
        with _pipelined(connection) if self.pipelined else contextlib.nullcontext():
            for statement in self.statements:
                rows = getattr(facts, statement.rule.rows)
                if not rows:
                    continue
                size = len(statement.rule.table.primary_key.columns)
                ordered = sorted(set(rows), key=lambda row: row[:size])
                if self.dialect == "postgresql":  # one statement per round, its rows as arrays
                    for round_ in _rounds(ordered, size):
                        columns = map(list, zip(*round_, strict=True))
                        connection.exec_driver_sql(
                            statement.sql, dict(zip(round_[0]._fields, columns, strict=True))
                        )
                    continue
                # MySQL: one statement per row (the driver's executemany)
                connection.exec_driver_sql(statement.sql, _parameters(statement, ordered))
                if statement.update is not None:
                    connection.exec_driver_sql(statement.update.sql, _parameters(statement.update, ordered))

    def write_sqlite(self, raw: sqlite3.Connection, facts: f.Facts) -> None:
        """Fold ``facts`` through a SQLite driver connection, in the transaction it is in (SQLite applies
        the rows of one statement one at a time, so no rounds are needed)."""
        for statement in self.statements:
            rows = getattr(facts, statement.rule.rows)
            if rows:  # a row twice changes nothing the second time
                raw.executemany(statement.sql, _parameters(statement, list(dict.fromkeys(rows))))


def _parameters(statement: Statement, rows: Sequence[NamedTuple]) -> Sequence[Any]:
    """The rows as the statement's parameters: tuples in its order, or mappings."""
    fields = statement.fields
    if not fields:
        return [row._asdict() for row in rows]
    if fields == type(rows[0])._fields:
        return rows
    order = [type(rows[0])._fields.index(name) for name in fields]
    return [tuple(row[i] for i in order) for row in rows]
