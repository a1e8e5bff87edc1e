"""The lineage store on PostgreSQL behind a real PgBouncer in transaction mode (where Airflow's metadata
database often sits, and so the store with it): readers and writers at once, every answer right, no error;
psycopg prepares statements only when ``store_prepared_statements`` says so."""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest

from airflow_lineage_plus.graph import LineageQueries
from airflow_lineage_plus.graph.store_source import StoreSource
from airflow_lineage_plus.sources import open_store
from airflow_lineage_plus.store import LineageStore
from tests.support.graph_builders import dataset_node, ds, job_node, run_pair
from tests.support.pgbouncer_env import PgBouncer
from tests.support.postgres_env import PostgresServer
from tests.support.store_engines import new_database

pytestmark = pytest.mark.timeout(180)
CHAIN = 30


@pytest.fixture
def bouncer(postgres_server: PostgresServer) -> Iterator[PgBouncer]:
    bouncer = PgBouncer(postgres_server, pool_size=2)
    bouncer.start()
    try:
        yield bouncer
    finally:
        bouncer.stop()


def _job(number: str) -> str:
    return job_node(f"j{number}")


def _dataset(number: str) -> str:
    return dataset_node(f"d{number}")


def _encoded(events: list[dict[str, object]]) -> list[bytes]:
    return [json.dumps(event).encode() for event in events]


def _chain() -> list[bytes]:
    """d0 -> j0 -> d1 -> j1 -> ... -> d30."""
    events = []
    for i in range(CHAIN):
        events += run_pair(f"j{i}", f"r{i}", i, i + 0.5, inputs=[ds(f"d{i}")], outputs=[ds(f"d{i + 1}")])
    return _encoded(events)


def test_readers_and_writers_at_once_through_pgbouncer_in_transaction_mode_all_succeed(
    postgres_server: PostgresServer,
    bouncer: PgBouncer,
) -> None:
    store = LineageStore(bouncer.url(new_database(postgres_server, "bounced")))
    store.append(_chain())
    errors: list[str] = []
    wrong: list[str] = []

    def read(worker: int) -> None:
        queries = LineageQueries(StoreSource(store))
        try:
            for turn in range(30):
                end = 6 + (worker * 7 + turn) % (CHAIN - 5)
                found = sorted(node["id"] for node in queries.upstream(dataset_node(f"d{end}"), 4)["nodes"])
                wanted = sorted(n(f"{end - back}") for back in (1, 2) for n in (_job, _dataset))
                if found != wanted:
                    wrong.append(f"upstream of d{end}: {found}")
        except Exception as error:
            errors.append(f"reader {worker}: {type(error).__name__}: {error}")

    def write(worker: int) -> None:
        try:
            for turn in range(20):
                job = f"w{worker}_{turn}"
                store.append(
                    _encoded(run_pair(job, f"r-{job}", 40 + turn, 41 + turn, outputs=[ds(f"x{job}")]))
                )
        except Exception as error:
            errors.append(f"writer {worker}: {type(error).__name__}: {error}")

    threads = [threading.Thread(target=read, args=(n,)) for n in range(4)]
    threads += [threading.Thread(target=write, args=(n,)) for n in range(4)]
    try:
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join(timeout=150)
        assert errors == []
        assert wrong == []
        with store.read() as connection:
            jobs = connection.exec_driver_sql(
                "SELECT count(*) FROM lineage_plus_node WHERE kind = 0"
            ).scalar_one()
        assert jobs == CHAIN + 4 * 20
    finally:
        store.close()


@pytest.mark.parametrize("configured", ["", "True"])
def test_psycopg_prepares_the_stores_statements_only_when_configured(
    configured: str,
    postgres_server: PostgresServer,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("AIRFLOW__LINEAGE_PLUS__STORE_PREPARED_STATEMENTS", configured or "False")
    monkeypatch.setenv("AIRFLOW_HOME", str(tmp_path))
    store = open_store(postgres_server.url(new_database(postgres_server, "prepared")))
    try:
        with store.engine.connect() as connection:
            threshold = connection.connection.driver_connection.prepare_threshold  # type: ignore[union-attr]
        assert threshold == (5 if configured else None)
    finally:
        store.close()
