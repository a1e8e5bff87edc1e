"""The lineage store: raw OpenLineage events in SQLite (default), PostgreSQL or MySQL. No Airflow import.

>>> from airflow_lineage_plus.store import LineageStore, sqlite_url
>>> store = LineageStore(sqlite_url("/tmp/lineage.db"))                  # doctest: +SKIP
>>> store.append([b'{"eventTime": "2024-01-01T00:00:00Z", ...}'])        # doctest: +SKIP

The graph reads it through :class:`airflow_lineage_plus.graph.store_source.StoreSource`.
"""

from __future__ import annotations

from airflow_lineage_plus.store.database import AppendResult, LineageStore, sqlite_url
from airflow_lineage_plus.store.retention import RetentionResult, apply_retention, cutoff
from airflow_lineage_plus.store.rows import RawEvent, raw_event
from airflow_lineage_plus.store.schema import SCHEMA_VERSION, ddl

__all__ = [
    "SCHEMA_VERSION",
    "AppendResult",
    "LineageStore",
    "RawEvent",
    "RetentionResult",
    "apply_retention",
    "cutoff",
    "ddl",
    "raw_event",
    "sqlite_url",
]
