"""Fixtures for tests/reliability; shared helpers live in ``reliability_support.py``."""

from tests.reliability.reliability_support import baseline, timed  # noqa: F401
