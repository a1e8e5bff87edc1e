"""The lineage store's tables: one schema for SQLite, PostgreSQL and MySQL (SQLAlchemy Core).

``lineage_plus_meta`` holds ``schema_version`` (:data:`SCHEMA_VERSION`) and ``retained_from`` (epoch
microseconds: raw events before it were deleted by retention). ``lineage_plus_event`` holds every raw
event once (``digest``: BLAKE2b-128 of its JSON bytes, unique, so an import twice or a replay adds
nothing), with the columns questions filter on: event time (epoch microseconds, UTC), run id, parent run
id, job namespace and name, event type, and ``node_key``: the key of the node whose events it holds (the
event's job, or the dataset of a DatasetEvent). ``lineage_plus_edge`` holds every (job, dataset,
direction) an event ever named, each once: where a question about one node finds the events to fold
(:class:`airflow_lineage_plus.graph.store_source.StoreCatalog`). Keys are 63-bit hashes of node ids
(:func:`.rows.node_key`), so hostile names of any length index the same; the ids themselves are kept
beside them and compared on reading. The DDL each engine gets is in docs/graph.md ("The lineage store");
:func:`ddl` prints it.

Upgrades: a later version of this package that changes the tables raises :data:`SCHEMA_VERSION` and
adds one step to ``UPGRADES`` in :mod:`.database` (from version N to N+1, run in one transaction on first
use); a store written by a newer version than this one is refused, never changed.
"""

from __future__ import annotations

import sqlalchemy as sa
from sqlalchemy.dialects import mysql, postgresql, sqlite
from sqlalchemy.schema import CreateIndex, CreateTable

SCHEMA_VERSION = 2

metadata = sa.MetaData()

#: Big integers that are also SQLite's rowid alias (autoincrement works on all three engines)
_ROW_ID = sa.BigInteger().with_variant(sa.Integer(), "sqlite")
#: Event payloads can be large (up to the 64 MiB size budget): MySQL's BLOB stops at 64 KiB
_PAYLOAD = sa.LargeBinary().with_variant(mysql.LONGBLOB(), "mysql")

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
    sa.Column("payload", _PAYLOAD, nullable=False),
    # added by schema version 2 (null until the upgrade fills it)
    sa.Column("node_key", sa.BigInteger(), nullable=True),
    sa.UniqueConstraint("digest", name="lineage_plus_event_digest_key"),
)
sa.Index("lineage_plus_event_time_idx", event.c.event_time)
sa.Index("lineage_plus_event_run_idx", event.c.run_id)
sa.Index("lineage_plus_event_node_idx", event.c.node_key)

edge = sa.Table(
    "lineage_plus_edge",
    metadata,
    sa.Column("job_key", sa.BigInteger(), primary_key=True, autoincrement=False),
    sa.Column("dataset_key", sa.BigInteger(), primary_key=True, autoincrement=False),
    sa.Column("output", sa.SmallInteger(), primary_key=True, autoincrement=False),  # 0: input, 1: output
    sa.Column("job_id", sa.Text(), nullable=False),
    sa.Column("dataset_id", sa.Text(), nullable=False),
)
sa.Index("lineage_plus_edge_dataset_idx", edge.c.dataset_key, edge.c.output)

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
