"""Fixtures for tests/act; they live in ``alert_pipeline.py`` (its names are imported by the tests)."""

from tests.act.alert_pipeline import alerted_pipeline, smtp  # noqa: F401
