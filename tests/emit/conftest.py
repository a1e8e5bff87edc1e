"""Fixtures for tests/skip; shared helpers live in ``skip_support.py``."""

from skip_support import live_airflow  # noqa: F401
