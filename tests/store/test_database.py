"""The lineage store's database: tables on first use, idempotent appends, modes, damage, on both engines."""

from __future__ import annotations

import json
import os
import sqlite3
import stat
import threading
from pathlib import Path
from typing import Any

import pytest
import sqlalchemy as sa

from airflow_lineage_plus.exceptions import StoreDamaged, StoreUnavailable
from airflow_lineage_plus.store import (
    SCHEMA_VERSION,
    LineageStore,
    ddl,
    raw_event,
    schema,
    sqlite_connections,
    sqlite_url,
)
from tests.support.graph_builders import cross_dag_world, daily_runs, orders_pipeline

EVENTS = [json.dumps(e).encode() for e in orders_pipeline()]
#: with the events of an asset-triggered DAG run (schema 4's ``lineage_plus_run_trigger``) and of DAG runs
#: the provider named (schema 5's ``lineage_plus_run.airflow_run_key``)
UPGRADED_EVENTS = EVENTS + [json.dumps(e).encode() for e in cross_dag_world() + daily_runs(2)]


def test_a_new_store_has_its_tables_and_the_schema_version(store_url: str) -> None:
    store = LineageStore(store_url)
    try:
        with store.engine.connect() as connection:
            names = set(sa.inspect(connection).get_table_names())
            version = connection.exec_driver_sql(
                "SELECT value FROM lineage_plus_meta WHERE name = 'schema_version'"
            ).scalar()
        assert {"lineage_plus_meta", "lineage_plus_event"} <= names
        assert version == str(SCHEMA_VERSION)
        assert store.count() == 0 and store.last_id() == 0
    finally:
        store.close()


def test_appending_the_same_events_twice_stores_them_once(store_url: str) -> None:
    store = LineageStore(store_url)
    try:
        first = store.append([*EVENTS, EVENTS[0]], batch=5)
        second = store.append(EVENTS)
        assert (first.added, first.duplicates) == (len(EVENTS), 1)
        assert (second.added, second.duplicates) == (0, len(EVENTS))
        assert store.count() == len(EVENTS)
        assert [payload for _, payload in store.rows_after(0, 1000)] == EVENTS
    finally:
        store.close()


def test_add_all_says_which_events_were_new_and_folds_them_as_a_refold_does(store_url: str) -> None:
    events = [raw_event(line) for line in EVENTS]
    store = LineageStore(store_url)
    try:
        assert store.add_all(events[:3]) == [True, True, True]
        flags = store.add_all([*events, events[4]])
        assert flags == [False] * 3 + [True] * (len(events) - 3) + [False]
        assert store.add_all([]) == []
        assert store.add(events[0]) is False
        assert [payload for _, payload in store.rows_after(0, 1000)] == EVENTS
        folded = _state(store)
        store.refold()
        assert _state(store) == folded
    finally:
        store.close()


def test_a_read_inside_another_of_the_same_thread_reads_its_snapshot_on_its_connection(
    store_url: str,
) -> None:
    store = LineageStore(store_url)
    try:
        first, later = orders_pipeline()[:2], orders_pipeline()[2:3]
        store.append(json.dumps(e).encode() for e in first)
        count = sa.select(sa.func.count()).select_from(schema.event)
        with store.read() as outer:
            assert outer.execute(count).scalar() == 2
            added = threading.Thread(target=store.append, args=([json.dumps(e).encode() for e in later],))
            added.start()
            added.join(timeout=60)
            with store.read() as inner:  # the one held: what it saw, not what was written since
                assert inner is outer
                assert inner.execute(count).scalar() == 2
        with store.read() as fresh:
            assert fresh.execute(count).scalar() == 3
    finally:
        store.close()


def test_bytes_that_are_not_an_event_are_counted_and_not_stored(store_url: str) -> None:
    store = LineageStore(store_url)
    try:
        result = store.append([b"{not json", b"[1, 2]", b'{"eventTime": "yesterday"}', EVENTS[0]])
        assert result.rejected == {"malformed": 2, "invalid": 1}
        assert result.added == 1 and store.count() == 1
    finally:
        store.close()


def test_the_columns_come_from_the_event_and_hostile_values_are_cut() -> None:
    event = {
        "eventTime": "2026-03-01T00:00:00Z",
        "eventType": "COMPLETE",
        "run": {"runId": "r" * 400, "facets": {"parent": {"run": {"runId": "p1"}}}},
        "job": {"namespace": 7, "name": "dag.task"},
    }
    row = raw_event(json.dumps(event).encode())
    assert row.event_time == 1772323200000000
    assert (row.event_type, row.parent_run_id, row.job_namespace, row.job_name) == (
        "COMPLETE",
        "p1",
        None,
        "dag.task",
    )
    assert row.run_id == "r" * 255


def test_a_new_sqlite_store_gets_the_event_logs_modes_and_wal(tmp_path: Path) -> None:
    path = tmp_path / "home" / "lineage_plus" / "lineage.db"
    old = os.umask(0o022)
    try:
        store = LineageStore(sqlite_url(path), file_mode=0o640, dir_mode=0o750)
    finally:
        os.umask(old)
    try:
        store.append(EVENTS[:2])
        with store.engine.connect() as connection:
            mode = connection.exec_driver_sql("PRAGMA journal_mode").scalar()
        assert mode == "wal"
        files = {p.name: stat.S_IMODE(p.stat().st_mode) for p in path.parent.iterdir()}
        assert files == {"lineage.db": 0o640, "lineage.db-wal": 0o640, "lineage.db-shm": 0o640}
        assert stat.S_IMODE(path.parent.stat().st_mode) == 0o750
    finally:
        store.close()


def test_a_store_that_is_not_a_database_is_refused_naming_the_fix_and_kept(tmp_path: Path) -> None:
    path = tmp_path / "lineage.db"
    path.write_bytes(b"this is not a database at all" * 100)
    before = path.read_bytes()
    with pytest.raises(StoreDamaged, match=r"damaged .*lineage-plus import") as caught:
        LineageStore(sqlite_url(path))
    assert str(path) in str(caught.value)
    assert path.read_bytes() == before  # never deleted or rewritten


def test_a_truncated_store_is_refused_naming_the_fix_and_kept(tmp_path: Path) -> None:
    path = tmp_path / "lineage.db"
    store = LineageStore(sqlite_url(path))
    store.append(EVENTS * 1)
    store.append([json.dumps({**e, "x": "y" * 3000}).encode() for e in orders_pipeline()])
    store.close()
    data = path.read_bytes()
    path.write_bytes(data[: len(data) // 2])
    with pytest.raises(StoreDamaged, match=r"lineage-plus import"):
        opened = LineageStore(sqlite_url(path))
        try:
            opened.rows_after(0, 10_000)
        finally:
            opened.close()
    assert path.read_bytes() == data[: len(data) // 2]


def test_a_store_of_a_newer_schema_is_refused_and_left_as_it_is(store_url: str) -> None:
    LineageStore(store_url).close()
    engine = sa.create_engine(store_url)
    with engine.begin() as connection:
        connection.exec_driver_sql("UPDATE lineage_plus_meta SET value = '99' WHERE name = 'schema_version'")
    with pytest.raises(StoreDamaged, match=r"schema version 99, written by a newer .*upgrade the package"):
        LineageStore(store_url)
    with engine.connect() as connection:
        assert connection.exec_driver_sql("SELECT value FROM lineage_plus_meta").scalar() == "99"
    engine.dispose()


def test_a_store_with_a_garbage_schema_version_is_refused(store_url: str) -> None:
    LineageStore(store_url).close()
    engine = sa.create_engine(store_url)
    with engine.begin() as connection:
        connection.exec_driver_sql("UPDATE lineage_plus_meta SET value = 'x' WHERE name = 'schema_version'")
    engine.dispose()
    with pytest.raises(StoreDamaged, match=r"unusable schema version 'x'"):
        LineageStore(store_url)


def test_a_current_sqlite_store_takes_events_without_making_an_engine_until_one_is_asked_for(
    tmp_path: Path,
) -> None:
    """The transport's path (a store opened and one event added, in each process the provider forks) costs
    no SQLAlchemy engine; anything else gets one, and sees what was added."""
    url = sqlite_url(tmp_path / "store.db")
    LineageStore(url).close()
    store = LineageStore(url)
    try:
        assert store.add(raw_event(EVENTS[0])) is True
        assert store._engine is None
        assert store.count() == 1
        assert store._engine is not None
    finally:
        store.close()


def test_processes_that_add_an_event_and_exit_without_closing_keep_the_wal_small(tmp_path: Path) -> None:
    """The provider's way: each event's process opens the store alone, adds, and leaves by ``os._exit``.
    Without the trim, SQLite never starts such a WAL over, and each process reads all of it."""
    path = tmp_path / "lineage.db"
    LineageStore(sqlite_url(path)).close()
    lines = [json.dumps(e).encode() for e in daily_runs(60)]
    sizes = []
    for line in lines:
        pid = os.fork()
        if pid == 0:  # pragma: no cover (the child)
            try:
                LineageStore(sqlite_url(path)).add(raw_event(line))
            finally:
                os._exit(0)
        assert os.waitpid(pid, 0)[1] == 0
        sizes.append(path.with_name(path.name + "-wal").stat().st_size)
    assert max(sizes) <= 2 * sqlite_connections.WAL_TRIM_BYTES
    assert min(sizes) < sqlite_connections.WAL_TRIM_BYTES  # it was truncated
    store = LineageStore(sqlite_url(path))
    try:
        assert store.count() == len(lines)
    finally:
        store.close()


def test_a_writer_that_stays_open_leaves_its_wal_to_sqlites_own_checkpoints(tmp_path: Path) -> None:
    """Only a connection's first write trims the WAL at 1 MiB: its later writes know what was
    checkpointed, and SQLite starts the WAL over by itself at about 4 MB (1,202 events of ~50 KB of WAL
    each: ~60 MB had it never started over). Trimming each 1 MiB checkpointed four times as often."""
    path = tmp_path / "lineage.db"
    wal = path.with_name(path.name + "-wal")
    store = LineageStore(sqlite_url(path))
    sizes = []
    try:
        for event in daily_runs(300):
            store.add(raw_event(json.dumps(event).encode()))
            sizes.append(wal.stat().st_size)
    finally:
        store.close()
    assert len(sizes) == 1202
    assert max(sizes) > 2 * sqlite_connections.WAL_TRIM_BYTES  # not trimmed past 1 MiB after the first
    assert sizes == sorted(sizes)  # never truncated
    assert max(sizes) < sqlite_connections.LATER_WAL_TRIM_BYTES  # started over by SQLite


def test_a_current_sqlite_store_opens_while_another_writer_holds_its_write_lock(tmp_path: Path) -> None:
    """Each process the provider forks for an event opens the store: the version is read, not locked for."""
    path = tmp_path / "lineage.db"
    LineageStore(sqlite_url(path)).close()
    writer = sqlite3.connect(path, isolation_level=None)
    writer.execute("BEGIN IMMEDIATE")
    try:
        store = LineageStore(sqlite_url(path), busy_timeout=0.2)
        assert store.count() == 0
        store.close()
    finally:
        writer.execute("ROLLBACK")
        writer.close()


def test_a_missing_store_is_not_created_when_only_reading(tmp_path: Path) -> None:
    path = tmp_path / "none" / "lineage.db"
    with pytest.raises(StoreUnavailable, match=r"no lineage store at .*lineage-plus import"):
        LineageStore(sqlite_url(path), create=False)
    assert not path.parent.exists()


def test_a_store_file_without_tables_yet_is_unavailable_for_now_not_damaged(tmp_path: Path) -> None:
    path = tmp_path / "lineage.db"
    path.touch()  # what a writer's first moment leaves: the file, before its tables are committed
    with pytest.raises(StoreUnavailable, match="has no tables yet") as raised:
        LineageStore(sqlite_url(path), create=False)
    assert not isinstance(raised.value, StoreDamaged)
    # the writer then creates its tables, and the reader opens it
    LineageStore(sqlite_url(path)).close()
    LineageStore(sqlite_url(path), create=False).close()


def test_the_documented_ddl_creates_what_the_store_creates() -> None:
    for dialect in ("sqlite", "postgresql", "mysql"):
        text = ddl(dialect)
        assert text.count("CREATE TABLE") == 14 and text.count("CREATE INDEX") == 10
    assert "BYTEA" in ddl("postgresql") and "LONGBLOB" in ddl("mysql")


def test_processes_opening_a_new_store_at_once_all_get_it(store_url: str) -> None:
    opened: list[int] = []
    errors: list[BaseException] = []

    def open_one() -> None:
        try:
            store = LineageStore(store_url)
            opened.append(store.append(EVENTS).added)
            store.close()
        except BaseException as exc:  # reported below
            errors.append(exc)

    threads = [threading.Thread(target=open_one) for _ in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(60)
    assert errors == [] and sorted(opened)[-1] + sum(sorted(opened)[:-1]) == len(EVENTS)


def _downgraded(store_url: str, version: int) -> None:
    """The store as ``version`` 1 to 6 of the schema left it: version 6, no ``lineage_plus_fact_ref_idx``
    and no ``lineage_plus_skipped_task_time_idx``; version 5, no ``lineage_plus_fact_write_idx`` either;
    version 4, no ``lineage_plus_run`` ``airflow_run_key`` either; version 3, no
    ``lineage_plus_run_trigger`` either; version 2, no folded state (every edge an event named, without
    when first reported or whether declared); version 1: no ``node_key``, no edges."""
    engine = sa.create_engine(store_url)
    with engine.begin() as connection:
        connection.exec_driver_sql("DROP INDEX lineage_plus_fact_ref_idx")
        connection.exec_driver_sql("DROP INDEX lineage_plus_skipped_task_time_idx")
        if version == 6:
            connection.exec_driver_sql(
                "UPDATE lineage_plus_meta SET value = '6' WHERE name = 'schema_version'"
            )
            engine.dispose()
            return
        connection.exec_driver_sql("DROP INDEX lineage_plus_fact_write_idx")
        if version == 5:
            connection.exec_driver_sql(
                "UPDATE lineage_plus_meta SET value = '5' WHERE name = 'schema_version'"
            )
            engine.dispose()
            return
        connection.exec_driver_sql("DROP INDEX lineage_plus_run_airflow_idx")
        connection.exec_driver_sql("ALTER TABLE lineage_plus_run DROP COLUMN airflow_run_key")
        if version == 4:
            connection.exec_driver_sql(
                "UPDATE lineage_plus_meta SET value = '4' WHERE name = 'schema_version'"
            )
            engine.dispose()
            return
        for table in reversed(schema.FOLDED):
            if table is schema.run_trigger or (version < 3 and table is not schema.edge):
                connection.exec_driver_sql(f"DROP TABLE {table.name}")
        if version == 3:
            pass
        elif version == 1:
            connection.exec_driver_sql("DROP INDEX lineage_plus_event_node_idx")
            connection.exec_driver_sql("ALTER TABLE lineage_plus_event DROP COLUMN node_key")
            connection.exec_driver_sql("DROP TABLE lineage_plus_edge")
        else:
            connection.exec_driver_sql("ALTER TABLE lineage_plus_edge DROP COLUMN first_reported")
            connection.exec_driver_sql("ALTER TABLE lineage_plus_edge DROP COLUMN declared")
        connection.exec_driver_sql(
            f"UPDATE lineage_plus_meta SET value = '{version}' WHERE name = 'schema_version'"
        )
    engine.dispose()


def _state(store: LineageStore) -> dict[str, list[tuple[Any, ...]]]:
    """Every event's node key and every row of the folded state, in a comparable order."""
    with store.engine.connect() as connection:
        state = {
            "keys": connection.exec_driver_sql(
                "SELECT id, node_key FROM lineage_plus_event ORDER BY id"
            ).all()
        }
        for table in schema.FOLDED:
            state[table.name] = sorted(connection.execute(sa.select(table)).all())
    return {name: [tuple(row) for row in rows] for name, rows in state.items()}


@pytest.mark.parametrize("version", [1, 2, 3, 4, 5, 6])
def test_an_older_store_gets_its_node_keys_and_folded_state_on_first_use(
    store_url: str, version: int
) -> None:
    store = LineageStore(store_url)
    assert store.append(UPGRADED_EVENTS).added == len(UPGRADED_EVENTS)
    expected = _state(store)
    store.close()
    assert all(key is not None for _, key in expected["keys"]) and len(expected["lineage_plus_run"]) == 15
    assert len(expected["lineage_plus_run_trigger"]) == 1  # the cross-DAG link (schema 4)
    named = [row for row in expected["lineage_plus_run"] if row[-1] is not None]
    assert len(named) == 5  # the two daily DAG runs and their three task runs (schema 5)
    _downgraded(store_url, version)
    upgraded = LineageStore(store_url)
    try:
        assert _state(upgraded) == expected
        with upgraded.engine.connect() as connection:
            found = connection.exec_driver_sql(
                "SELECT value FROM lineage_plus_meta WHERE name = 'schema_version'"
            ).scalar()
        assert found == str(SCHEMA_VERSION) == "7"
        inspector = sa.inspect(upgraded.engine)
        indexes = {index["name"] for index in inspector.get_indexes("lineage_plus_fact")}
        assert indexes == {"lineage_plus_fact_write_idx", "lineage_plus_fact_ref_idx"}
        indexes = {index["name"] for index in inspector.get_indexes("lineage_plus_skipped_task")}
        assert indexes == {"lineage_plus_skipped_task_time_idx"}
        assert upgraded.append(UPGRADED_EVENTS).added == 0  # nothing lost, nothing doubled
    finally:
        upgraded.close()
