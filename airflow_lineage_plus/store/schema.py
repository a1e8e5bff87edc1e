"""The lineage store's tables: one schema for SQLite, PostgreSQL and MySQL (SQLAlchemy Core).

Two kinds of table:

* **Raw events** (``lineage_plus_event``): every event once (``digest``: BLAKE2b-128 of its JSON bytes,
  unique, so an import twice or a replay adds nothing), with the columns questions filter on (event time
  in epoch microseconds UTC, run id, parent run id, job, event type, ``node_key``: the node whose event it
  is). Kept for details, replay and ``lineage-plus refold``; deleted past ``retention_days``.
* **Folded state**: what the events say, folded by the store's writes (:mod:`.fold`, the one place the
  folding rules are written). Every fact is kept by an order-independent rule, so events may arrive in
  any order, twice, and from any machine: a node or run once (``lineage_plus_node``, ``lineage_plus_run``
  identities), the earliest or latest of a value (``start``, ``first_seen``, ``first_reported``,
  ``last_seen``), the newest of a fact by (event time, tie) (``lineage_plus_fact``,
  ``lineage_plus_run_state``), the least of a pair (``lineage_plus_run_parent``), or a member of a set
  (``lineage_plus_edge``, ``lineage_plus_run_io``, ``lineage_plus_run_event``, ``lineage_plus_column_reader``,
  ``lineage_plus_skipped_task``, ``lineage_plus_run_trigger``).

Keys are 63-bit BLAKE2b hashes (:func:`.facts.key_of`) of node ids (``job:NS:NAME``, ``dataset:NS:NAME``)
and run ids (``run:ID``), so hostile names of any length index the same; the ids themselves are kept
beside them and compared on reading. Times are epoch microseconds, UTC; a declared fact's time is moved
below every run's (:func:`.facts.declared_time`). The DDL each engine gets is in docs/graph.md ("The
lineage store"); :func:`ddl` prints it.

Upgrades: a later version of this package that changes the tables raises :data:`SCHEMA_VERSION` and
adds one step to ``UPGRADES`` in :mod:`.database` (from version N to N+1, run in one transaction on first
use); a store written by a newer version than this one is refused, never changed.
"""

from __future__ import annotations

import sqlalchemy as sa
from sqlalchemy.dialects import mysql, postgresql, sqlite
from sqlalchemy.schema import CreateIndex, CreateTable

from airflow_lineage_plus.store.facts import JOB_REF, WRITE

SCHEMA_VERSION = 7

metadata = sa.MetaData()

#: Big integers that are also SQLite's rowid alias (autoincrement works on all three engines)
_ROW_ID = sa.BigInteger().with_variant(sa.Integer(), "sqlite")
#: Event payloads can be large (up to the 64 MiB size budget): MySQL's BLOB stops at 64 KiB
_PAYLOAD = sa.LargeBinary().with_variant(mysql.LONGBLOB(), "mysql")
#: Values kept as JSON text (schemas, owners, column lineage): MySQL's TEXT stops at 64 KiB
_JSON_TEXT = sa.Text().with_variant(mysql.LONGTEXT(), "mysql")
#: Tie-breakers compared byte by byte (an order-preserving encoding, :mod:`.facts`)
_TIE = sa.LargeBinary().with_variant(mysql.VARBINARY(3072), "mysql")


def _key(name: str, **kwargs: object) -> sa.Column[int]:
    return sa.Column(name, sa.BigInteger(), autoincrement=False, **kwargs)  # type: ignore[arg-type]


meta = sa.Table(
    "lineage_plus_meta",
    metadata,
    sa.Column("name", sa.String(64), primary_key=True),
    sa.Column("value", sa.String(255), nullable=False),
)

event = sa.Table(
    "lineage_plus_event",
    metadata,
    sa.Column("id", _ROW_ID, primary_key=True, autoincrement=True),
    # MySQL cannot put a unique key on a BLOB: BINARY(16) there
    sa.Column("digest", sa.LargeBinary(16).with_variant(mysql.BINARY(16), "mysql"), nullable=False),
    sa.Column("event_time", sa.BigInteger(), nullable=False),
    sa.Column("event_type", sa.String(32), nullable=True),
    sa.Column("run_id", sa.String(255), nullable=True),
    sa.Column("parent_run_id", sa.String(255), nullable=True),
    sa.Column("job_namespace", sa.String(255), nullable=True),
    sa.Column("job_name", sa.String(1000), nullable=True),
    # the event's JSON bytes; on SQLite zstd-compressed when that is smaller (:mod:`.payloads`)
    sa.Column("payload", _PAYLOAD, nullable=False),
    sa.Column("node_key", sa.BigInteger(), nullable=True),  # its job's key (a DatasetEvent: its dataset's)
    sa.UniqueConstraint("digest", name="lineage_plus_event_digest_key"),
)
sa.Index("lineage_plus_event_time_idx", event.c.event_time)
sa.Index("lineage_plus_event_run_idx", event.c.run_id)
sa.Index("lineage_plus_event_node_idx", event.c.node_key)

# -- folded state -------------------------------------------------------------------------------------
node = sa.Table(  # every job and dataset an event named, once
    "lineage_plus_node",
    metadata,
    _key("node_key", primary_key=True),
    sa.Column("kind", sa.SmallInteger(), nullable=False),  # 0: a job, 1: a dataset
    sa.Column("node_id", sa.Text(), nullable=False),  # job:NS:NAME or dataset:NS:NAME
    sa.Column("namespace", sa.Text(), nullable=False),
    sa.Column("name", sa.Text(), nullable=False),
)

edge = sa.Table(  # every (job, dataset, direction) an event named, once
    "lineage_plus_edge",
    metadata,
    _key("job_key", primary_key=True),
    _key("dataset_key", primary_key=True),
    sa.Column("output", sa.SmallInteger(), primary_key=True, autoincrement=False),  # 0: input, 1: output
    sa.Column("job_id", sa.Text(), nullable=False),
    sa.Column("dataset_id", sa.Text(), nullable=False),
    # version 3: the earliest event time a run reported it (null: only declared); whether ever declared
    sa.Column("first_reported", sa.BigInteger(), nullable=True),
    sa.Column("declared", sa.SmallInteger(), nullable=False, server_default="0"),
)
sa.Index("lineage_plus_edge_dataset_idx", edge.c.dataset_key, edge.c.output)

run = sa.Table(  # one row per run: its identity and the earliest of its times
    "lineage_plus_run",
    metadata,
    _key("run_key", primary_key=True),
    sa.Column("run_id", sa.Text(), nullable=False),
    _key("job_key", nullable=False),
    sa.Column("start", sa.BigInteger(), nullable=True),  # the earliest START
    sa.Column("first_seen", sa.BigInteger(), nullable=False),  # the earliest event
    sa.Column("sort_time", sa.BigInteger(), nullable=False),  # start, else first_seen: what "latest" sorts by
    sa.Column("dag_id", sa.Text(), nullable=True),  # the least DAG id its events name
    # version 5: the key of the least Airflow run_id (dagRun.run_id) its events name: a DAG run's runs
    _key("airflow_run_key", nullable=True),
)
sa.Index("lineage_plus_run_job_idx", run.c.job_key, run.c.sort_time)
sa.Index("lineage_plus_run_airflow_idx", run.c.job_key, run.c.airflow_run_key)

run_state = sa.Table(  # the winning terminal event of a run: the newest by (end_time, rank, skip facts)
    "lineage_plus_run_state",
    metadata,
    _key("run_key", primary_key=True),
    sa.Column("end_time", sa.BigInteger(), nullable=False),
    sa.Column("rank", sa.SmallInteger(), nullable=False),  # 1 COMPLETE, 2 ABORT, 3 FAIL
    sa.Column("skipped", sa.SmallInteger(), nullable=False),
    sa.Column("upstream_failed", sa.SmallInteger(), nullable=False),
    # the least skip reason wins a tie (:func:`.facts.least_tie`)
    sa.Column("reason_tie", _TIE, nullable=False),
    sa.Column("skip_reason", sa.Text(), nullable=False),  # '' when none
    sqlite_with_rowid=False,
)

run_parent = sa.Table(  # the run's parent (the parent facet's run and job): the least named
    "lineage_plus_run_parent",
    metadata,
    _key("run_key", primary_key=True),
    sa.Column("parent_run_id", sa.Text(), nullable=False),
    sa.Column("parent_job_id", sa.Text(), nullable=False),  # '' when the facet names no job
    _key("parent_key", nullable=False),
)
sa.Index("lineage_plus_run_parent_idx", run_parent.c.parent_key)

run_trigger = sa.Table(  # version 4: every upstream job run a run's jobDependencies facet names
    "lineage_plus_run_trigger",
    metadata,
    _key("run_key", primary_key=True),  # the run (an asset-triggered DAG run)
    _key("upstream_job_key", primary_key=True),
    _key("upstream_run_key", primary_key=True),  # key of '' when the facet names no run
    sa.Column("run_id", sa.Text(), nullable=False),
    sa.Column("upstream_job_id", sa.Text(), nullable=False),
    sa.Column("upstream_run_id", sa.Text(), nullable=False),
    sqlite_with_rowid=False,
)

run_io = sa.Table(  # every (dataset, direction) a run's events reported
    "lineage_plus_run_io",
    metadata,
    _key("run_key", primary_key=True),
    _key("dataset_key", primary_key=True),
    sa.Column("output", sa.SmallInteger(), primary_key=True, autoincrement=False),
    sqlite_with_rowid=False,
)

run_event = sa.Table(  # where each run's events are (a row id of lineage_plus_event, or a log's place)
    "lineage_plus_run_event",
    metadata,
    _key("run_key", primary_key=True),
    _key("ref", primary_key=True),
    sqlite_with_rowid=False,
)

fact = sa.Table(  # the newest value of a fact of a job, dataset or run, by (event_time, tie)
    "lineage_plus_fact",
    metadata,
    _key("subject_key", primary_key=True),
    sa.Column("fact", sa.String(16), primary_key=True),
    sa.Column("event_time", sa.BigInteger(), nullable=False),
    sa.Column("tie", _TIE, nullable=False),
    sa.Column("value", _JSON_TEXT, nullable=False),
    sqlite_with_rowid=False,
)
#: version 6: the datasets written since a time, newest first (the view's first page); partial where the
#: engine has partial indexes (only ``write`` facts: no cost to the other facts' writes)
_WRITES = fact.c.fact == WRITE
sa.Index(
    "lineage_plus_fact_write_idx",
    fact.c.fact,
    fact.c.event_time,
    sqlite_where=_WRITES,
    postgresql_where=_WRITES,
)

#: version 7: the nodes whose latest event is newest, newest first (the jobs next to a source every job
#: reads, those that ran last first: :meth:`.folded.FoldedState.newest_adjacent`)
_REFS = fact.c.fact == JOB_REF
sa.Index(
    "lineage_plus_fact_ref_idx",
    fact.c.fact,
    fact.c.event_time,
    sqlite_where=_REFS,
    postgresql_where=_REFS,
)
dataset_schema = sa.Table(  # every distinct (name, type) schema of a dataset, and when it was seen last
    "lineage_plus_dataset_schema",
    metadata,
    _key("dataset_key", primary_key=True),
    sa.Column("digest", sa.LargeBinary(16).with_variant(mysql.BINARY(16), "mysql"), primary_key=True),
    sa.Column("fields", _JSON_TEXT, nullable=False),
    sa.Column("last_seen", sa.BigInteger(), nullable=False),
    sqlite_with_rowid=False,
)

column_reader = sa.Table(  # every (dataset, column) whose column lineage ever read a dataset's field
    "lineage_plus_column_reader",
    metadata,
    _key("input_key", primary_key=True),  # key of "<dataset id>\0<field>"
    _key("reader_key", primary_key=True),  # the reading dataset's key
    _key("column_key", primary_key=True),  # key of the reading column
    sa.Column("reader_column", sa.Text(), nullable=False),
    sqlite_with_rowid=False,
)

skipped_task = sa.Table(  # the jobs a DAG run's tasksState says did not run, per tasksState (time, tie)
    "lineage_plus_skipped_task",
    metadata,
    _key("job_key", primary_key=True),
    _key("dag_run_key", primary_key=True),
    sa.Column("event_time", sa.BigInteger(), primary_key=True, autoincrement=False),
    sa.Column("tie", sa.LargeBinary().with_variant(mysql.VARBINARY(255), "mysql"), primary_key=True),
    sa.Column("upstream_failed", sa.SmallInteger(), nullable=False),
    sqlite_with_rowid=False,
)
#: version 7: the skip records since a time (with ``lineage_plus_fact_ref_idx``)
sa.Index("lineage_plus_skipped_task_time_idx", skipped_task.c.event_time)

#: the folded-state tables, emptied by ``lineage-plus refold`` before it folds every raw event again
FOLDED = (
    node,
    edge,
    run,
    run_state,
    run_parent,
    run_trigger,
    run_io,
    run_event,
    fact,
    dataset_schema,
    column_reader,
    skipped_task,
)

_DIALECTS = {"sqlite": sqlite, "postgresql": postgresql, "mysql": mysql}


def ddl(dialect_name: str) -> str:
    """The CREATE statements of every table and index for one engine (``sqlite``, ``postgresql``,
    ``mysql``), as :meth:`.LineageStore` runs them on first use."""
    dialect = _DIALECTS[dialect_name].dialect()
    statements = []
    for table in metadata.sorted_tables:
        statements.append(str(CreateTable(table).compile(dialect=dialect)).strip() + ";")
        for index in sorted(table.indexes, key=lambda i: str(i.name)):
            statements.append(str(CreateIndex(index).compile(dialect=dialect)).strip() + ";")
    return "\n\n".join(statements)
