"""Fixtures for tests/graph; the stand-in Marquez fixture lives in ``tests/support/marquez_fixture.py``."""

from tests.support.marquez_fixture import fake_marquez  # noqa: F401
from tests.support.store_engines import postgres_server, store_url  # noqa: F401
