"""Fixtures for tests/graph; shared helpers live in ``marquez_fixture.py``."""

from marquez_fixture import fake_marquez  # noqa: F401
