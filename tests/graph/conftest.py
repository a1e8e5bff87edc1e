"""Fixtures for tests/graph; the stand-in Marquez fixture lives in ``tests/support/marquez_fixture.py``."""

from marquez_fixture import fake_marquez  # noqa: F401
