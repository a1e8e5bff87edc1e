"""Fixtures for tests/store: the lineage store on SQLite and on PostgreSQL."""

from tests.support.store_engines import postgres_server, store_url  # noqa: F401
