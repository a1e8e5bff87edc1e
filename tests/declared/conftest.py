"""Fixtures for tests/declared: the stand-in Marquez (``tests/support/marquez_fixture.py``)."""

from tests.support.marquez_fixture import fake_marquez  # noqa: F401
