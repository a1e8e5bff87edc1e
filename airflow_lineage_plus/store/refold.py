"""Folding what a store already holds: every stored event again (``lineage-plus refold``, after a rule
changed), and the steps that upgrade an older store's tables (in the transaction that opens it).

Upgrades: a later version of this package that changes the tables raises
:data:`~.schema.SCHEMA_VERSION` and adds one step to :data:`UPGRADES` (from version N to N+1).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import sqlalchemy as sa

from airflow_lineage_plus.exceptions import BadEventError
from airflow_lineage_plus.store import payloads, schema
from airflow_lineage_plus.store.facts import Facts
from airflow_lineage_plus.store.fold import Folder
from airflow_lineage_plus.store.rows import RawEvent, raw_event

#: events read per query by an upgrade or a refold
UPGRADE_BATCH = 5000


def _add_node_key(connection: sa.Connection) -> None:
    """Schema 1 -> 2: ``lineage_plus_event.node_key`` (filled by the fold of the upgrade to 3)."""
    connection.exec_driver_sql("ALTER TABLE lineage_plus_event ADD COLUMN node_key BIGINT")
    for index in schema.event.indexes:
        if index.name == "lineage_plus_event_node_idx":
            index.create(connection)


def _add_folded_state(connection: sa.Connection) -> None:
    """Schema 2 -> 3: the folded-state tables, filled by folding every stored event (read once, in
    batches; writers wait meanwhile, and the transport spools)."""
    names = set(sa.inspect(connection).get_table_names())
    if schema.edge.name in names:  # version 2's edges: the fold adds what version 3 keeps of each
        connection.exec_driver_sql("ALTER TABLE lineage_plus_edge ADD COLUMN first_reported BIGINT")
        connection.exec_driver_sql(
            "ALTER TABLE lineage_plus_edge ADD COLUMN declared SMALLINT NOT NULL DEFAULT 0"
        )
    for table in schema.FOLDED:
        if table.name not in names:
            table.create(connection)
    fold_stored(connection, Folder(connection.dialect), fill_node_keys=True)


def _add_run_triggers(connection: sa.Connection) -> None:
    """Schema 3 -> 4: ``lineage_plus_run_trigger`` (cross-DAG lineage), filled by folding again the stored
    events that carry a ``jobDependencies`` facet (the fold is idempotent: what they said before stays)."""
    if schema.run_trigger.name not in set(sa.inspect(connection).get_table_names()):
        schema.run_trigger.create(connection)
    _add_todays_run_columns(connection)
    fold_stored(connection, Folder(connection.dialect), only=b'"jobDependencies"')


def _add_airflow_run_keys(connection: sa.Connection) -> None:
    """Schema 4 -> 5: ``lineage_plus_run.airflow_run_key`` (a DAG run's runs, found by its Airflow
    ``run_id``), filled by folding again the stored events that carry the provider's ``dagRun``."""
    _add_todays_run_columns(connection)
    fold_stored(connection, Folder(connection.dialect), only=b'"dagRun"', runs_only=True)


def _add_write_index(connection: sa.Connection) -> None:
    """Schema 5 -> 6: ``lineage_plus_fact_write_idx`` (the datasets written since a time), built from the
    facts already stored (nothing is folded again)."""
    _create_missing_indexes(connection, schema.fact)


def _add_ref_indexes(connection: sa.Connection) -> None:
    """Schema 6 -> 7: ``lineage_plus_fact_ref_idx`` and ``lineage_plus_skipped_task_time_idx`` (the jobs
    next to a dataset, newest first), built from what is stored (nothing is folded again)."""
    _create_missing_indexes(connection, schema.fact)
    _create_missing_indexes(connection, schema.skipped_task)


def _create_missing_indexes(connection: sa.Connection, table: sa.Table) -> None:
    """Create the indexes of ``table`` today's schema has and the store's table lacks."""
    indexes = {index["name"] for index in sa.inspect(connection).get_indexes(table.name)}
    for index in table.indexes:
        if index.name not in indexes:
            index.create(connection)


def _add_todays_run_columns(connection: sa.Connection) -> None:
    """The columns of ``lineage_plus_run`` added after version 3 (``airflow_run_key``, its index), which
    today's fold writes: added before any upgrade step folds (an older step folds with today's rules)."""
    columns = {column["name"] for column in sa.inspect(connection).get_columns(schema.run.name)}
    if "airflow_run_key" not in columns:
        connection.exec_driver_sql("ALTER TABLE lineage_plus_run ADD COLUMN airflow_run_key BIGINT")
    _create_missing_indexes(connection, schema.run)


def fold_stored(
    connection: sa.Connection,
    folder: Folder,
    *,
    fill_node_keys: bool = False,
    progress: Callable[[int], None] | None = None,
    only: bytes | None = None,
    runs_only: bool = False,
) -> dict[str, int]:
    """Fold every stored event into the folded-state tables, in batches of :data:`UPGRADE_BATCH` (in the
    transaction of ``connection``); with ``fill_node_keys``, set each event's ``node_key`` too; with
    ``only``, just the events whose JSON holds those bytes; with ``runs_only``, into ``lineage_plus_run``
    alone (the other tables already hold what those events say). What could not be folded is counted and
    returned; ``progress`` is told how many events each batch read."""
    table, last = schema.event, 0
    problems: dict[str, int] = {}
    while rows := rows_after(connection, last, UPGRADE_BATCH):
        facts = Facts()
        keys = []
        for row_id, payload in rows:
            if only is not None and only not in payload:
                continue
            try:
                event = raw_event(payload)
            except BadEventError as exc:
                problems[exc.kind] = problems.get(exc.kind, 0) + 1
                continue
            keys.append({"row_id": row_id, "key": event.node_key})
            add_facts(facts, event, row_id)
        if fill_node_keys and keys:
            statement = sa.update(table).where(table.c.id == sa.bindparam("row_id"))
            connection.execute(statement.values(node_key=sa.bindparam("key")), keys)
        folder.write(connection, Facts(runs=facts.runs) if runs_only else facts)
        for kind, number in facts.problems.items():
            problems[kind] = problems.get(kind, 0) + number
        if progress is not None:
            progress(len(rows))
        last = rows[-1][0]
    return problems


def add_facts(facts: Facts, event: RawEvent, ref: int) -> None:
    """Add what a stored event says to ``facts`` (an event with neither job nor dataset says nothing)."""
    if event.decoded is None:
        facts.problems["invalid"] = facts.problems.get("invalid", 0) + 1
        return
    if event.salvaged:
        facts.problems["salvaged"] = facts.problems.get("salvaged", 0) + 1
    facts.add(event.decoded, event.event_time, ref)


def rows_after(connection: sa.Connection, after: int, limit: int) -> list[tuple[int, bytes]]:
    """(row id, payload) of up to ``limit`` events with a row id above ``after``, by row id."""
    table = schema.event
    statement = sa.select(table.c.id, table.c.payload).where(table.c.id > after).order_by(table.c.id)
    rows: Sequence[Any] = connection.execute(statement.limit(limit)).all()
    return [(int(i), payloads.expand(bytes(p))) for i, p in rows]


#: upgrade steps: UPGRADES[n] takes a store from version n to n + 1 (in the transaction that opens it)
UPGRADES: dict[int, Callable[[sa.Connection], None]] = {
    1: _add_node_key,
    2: _add_folded_state,
    3: _add_run_triggers,
    4: _add_airflow_run_keys,
    5: _add_write_index,
    6: _add_ref_indexes,
}
