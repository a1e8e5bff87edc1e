"""The folding rules' writes on PostgreSQL: a batch goes as one statement per table and round (each
column's values as one array, sent in binary), a key the batch holds twice goes in a second round, a
write's statements go in one pipeline (a failure in it is the package's error), and the folded state is
the one that folding the events one at a time leaves."""

from __future__ import annotations

import json
import re
from collections import Counter
from typing import Any

import psycopg
import pytest
import sqlalchemy as sa

from airflow_lineage_plus.exceptions import StoreUnavailable
from airflow_lineage_plus.store import LineageStore
from airflow_lineage_plus.store.schema import metadata
from tests.support.graph_builders import ds, run_pair
from tests.support.postgres_env import PostgresServer
from tests.support.store_engines import new_database

pytestmark = pytest.mark.timeout(120)


def _events() -> list[bytes]:
    """Ten runs of one job writing one dataset, and a run whose terminal event came three times (it
    completed, failed, then completed again): its state's key is in the batch three times."""
    events = []
    for number in range(10):
        events += run_pair("j", f"j-{number}", number, number + 0.5, outputs=[ds("d")])
    events += run_pair("r", "r-0", 20, 21, outputs=[ds("d")])
    for minute, state in ((22, "FAIL"), (23, "COMPLETE")):
        events += run_pair("r", "r-0", 20, minute, state)[1:]
    return [json.dumps(event).encode() for event in events]


def _store(server: PostgresServer, name: str) -> LineageStore:
    return LineageStore(server.url(new_database(server, name)))


def _pipeline_status(connection: sa.Connection) -> Any:
    """Whether the connection's psycopg connection is in pipeline mode now."""
    return connection.connection.driver_connection.pgconn.pipeline_status


def _folded(store: LineageStore) -> dict[str, list[Any]]:
    """Every row of every folded-state table (not the raw events: their ids differ by batch)."""
    with store.engine.connect() as connection:
        return {
            table.name: sorted(tuple(map(str, row)) for row in connection.execute(sa.select(table)))
            for table in metadata.sorted_tables
            if table.name not in {"lineage_plus_event", "lineage_plus_meta"}
        }


def test_postgresql_folds_a_batch_with_one_statement_per_table_and_a_round_per_repeat_of_a_key(
    postgres_server: PostgresServer,
) -> None:
    store = _store(postgres_server, "fold_batch")
    seen: list[str] = []
    sa.event.listen(store.engine, "before_cursor_execute", lambda *args: seen.append(args[2]))
    try:
        assert store.append(_events()).added == 24
    finally:
        store.close()

    def sent(table: str) -> int:
        return sum(text.startswith(f"INSERT INTO {table} ") for text in seen)

    # r-0's state three times: three rounds; its run's row four times (one per event of it): four
    assert (sent("lineage_plus_run_state"), sent("lineage_plus_run")) == (3, 4)
    # the nodes (j, r, d: one row each however many events named them) in one statement
    assert sent("lineage_plus_node") == 1
    assert all("unnest(" in text for text in seen if text.startswith("INSERT INTO lineage_plus_run"))


def test_postgresql_keeps_from_one_batch_what_it_keeps_from_one_event_at_a_time(
    postgres_server: PostgresServer,
) -> None:
    at_once, one_by_one = _store(postgres_server, "fold_once"), _store(postgres_server, "fold_each")
    try:
        at_once.append(_events())
        one_by_one.append(_events(), batch=1)
        folded = _folded(at_once)
        assert folded == _folded(one_by_one)
        assert len(folded["lineage_plus_run_state"]) == 11
        with at_once.engine.connect() as connection:
            state = connection.execute(
                sa.text(
                    "SELECT rank FROM lineage_plus_run_state WHERE end_time = ("
                    "SELECT max(end_time) FROM lineage_plus_run_state)"
                )
            ).scalar()
        assert state == 1  # r-0 ended last as COMPLETE (rank 1), not as the FAIL before it
    finally:
        at_once.close()
        one_by_one.close()


def test_postgresql_sends_a_writes_rules_in_one_pipeline_with_their_arrays_in_binary(
    postgres_server: PostgresServer,
) -> None:
    store = _store(postgres_server, "fold_pipeline")
    fold: list[tuple[str, Any]] = []

    def note(connection: sa.Connection, cursor: Any, statement: str, *_: Any) -> None:
        if "unnest(" in statement:  # the rules' statements (the raw events' insert is not one of them)
            fold.append((statement, _pipeline_status(connection)))

    sa.event.listen(store.engine, "before_cursor_execute", note)
    try:
        assert store.append(_events()).added == 24
    finally:
        store.close()
    per_table = Counter(text.split(" ")[2] for text, _ in fold)
    # a round per repeat of a key: j's 20 events each report its edge to d and its latest-event fact
    assert per_table == {
        "lineage_plus_node": 1,
        "lineage_plus_edge": 20,
        "lineage_plus_fact": 20,
        "lineage_plus_run": 4,
        "lineage_plus_run_state": 3,
        "lineage_plus_run_io": 1,
        "lineage_plus_run_event": 1,
    }
    assert {status for _, status in fold} == {psycopg.pq.PipelineStatus.ON}
    formats = {kind for text, _ in fold for kind in re.findall(r"%\(\w+\)(\w)", text)}
    assert formats == {"b"}  # every array in binary


def test_a_postgresql_write_that_fails_in_its_pipeline_raises_the_packages_error_and_keeps_nothing(
    postgres_server: PostgresServer,
) -> None:
    store = _store(postgres_server, "fold_broken")
    try:
        with store.engine.begin() as connection:
            connection.exec_driver_sql("DROP TABLE lineage_plus_run_io")
        with pytest.raises(StoreUnavailable, match="lineage_plus_run_io"):
            store.append(_events()[:2])
        with store.engine.connect() as connection:
            assert connection.exec_driver_sql("SELECT count(*) FROM lineage_plus_event").scalar() == 0
    finally:
        store.close()


def test_a_libpq_without_pipeline_mode_still_folds_one_statement_at_a_time(
    postgres_server: PostgresServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    """psycopg on a libpq before 14 (pipeline mode unsupported) keeps what a pipelined write keeps."""
    pipelined = _store(postgres_server, "fold_pipelined")
    monkeypatch.setattr(psycopg.Pipeline, "is_supported", classmethod(lambda cls: False))
    plain = _store(postgres_server, "fold_plain")
    statuses: list[Any] = []
    sa.event.listen(
        plain.engine,
        "before_cursor_execute",
        lambda connection, *_: statuses.append(_pipeline_status(connection)),
    )
    try:
        assert plain.append(_events()).added == 24
        monkeypatch.undo()
        assert pipelined.append(_events()).added == 24
        assert _folded(plain) == _folded(pipelined)
    finally:
        plain.close()
        pipelined.close()
    assert statuses and set(statuses) == {psycopg.pq.PipelineStatus.OFF}
