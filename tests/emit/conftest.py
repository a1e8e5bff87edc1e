"""Fixtures of the emit tests (skip state, dbt, folding); shared helpers live in ``skip_support.py``."""

from tests.emit.skip_support import live_airflow  # noqa: F401
