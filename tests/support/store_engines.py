"""The lineage store on both engines for tests: a SQLite file, or a database of its own on a throwaway
PostgreSQL cluster (Debian's server programs, started by :class:`postgres_env.PostgresServer` on a free
port; one cluster per test process, a new database per test)."""

from __future__ import annotations

import itertools
import shutil
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

from airflow_lineage_plus.graph.store_source import StoreSource
from airflow_lineage_plus.store import LineageStore, sqlite_url
from tests.support.postgres_env import PostgresServer

ENGINES = ("sqlite", "postgresql")
_databases = itertools.count()


@pytest.fixture(scope="session")
def postgres_server() -> Iterator[PostgresServer]:
    root = Path(tempfile.mkdtemp(prefix="alp-store-pg-"))
    server = PostgresServer(root)
    try:
        server.start()
        yield server
    finally:
        server.stop()
        shutil.rmtree(root, ignore_errors=True)


def new_store_url(engine: str, tmp_path: Path, request: pytest.FixtureRequest) -> str:
    """A URL of an empty lineage store on ``engine``."""
    if engine == "sqlite":
        return f"sqlite:///{tmp_path / 'lineage_plus' / f'lineage-{next(_databases)}.db'}"
    server: PostgresServer = request.getfixturevalue("postgres_server")
    return server.url(new_database(server))


def new_database(server: PostgresServer, prefix: str = "store") -> str:
    """The name of a new, empty database on the throwaway cluster."""
    name = f"{prefix}_{next(_databases)}"
    create_database(server, name)
    return name


def create_database(server: PostgresServer, name: str) -> None:
    """An empty database ``name`` on the throwaway cluster."""
    connection = server.connect("postgres")
    try:
        connection.autocommit = True
        connection.cursor().execute(f"CREATE DATABASE {name}")
    finally:
        connection.close()


@pytest.fixture(params=ENGINES)
def store_url(request: pytest.FixtureRequest, tmp_path: Path) -> str:
    """An empty lineage store on each engine in turn."""
    return new_store_url(request.param, tmp_path, request)


def store_source_of(log: Path) -> StoreSource:
    """A SQLite lineage store beside ``log`` holding every line of it, as a source (it closes the store)."""
    store = LineageStore(sqlite_url(log.with_name(log.name + ".db")))
    lines = [line for line in log.read_bytes().splitlines() if line.strip()]
    assert store.append(lines).added == len(set(lines)), "every distinct event of the log is stored"
    return StoreSource(store, owns_store=True)
