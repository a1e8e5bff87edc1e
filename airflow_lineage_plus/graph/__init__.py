"""Lineage graph and queries over the lineage store, an event log or Marquez. Does not import Airflow.

>>> from airflow_lineage_plus.graph import open_source, LineageQueries
>>> queries = LineageQueries(open_source(events="events.jsonl"))      # doctest: +SKIP
>>> queries.failed_upstream("dataset:warehouse:fct_daily_orders")      # doctest: +SKIP
"""

from __future__ import annotations

from pathlib import Path

from airflow_lineage_plus.exceptions import NodeNotFound, SourceUnavailable
from airflow_lineage_plus.graph.queries import LineageQueries
from airflow_lineage_plus.graph.source import LineageSource
from airflow_lineage_plus.node_ids import dataset_id, job_id, split_node_id

__all__ = [
    "LineageQueries",
    "LineageSource",
    "NodeNotFound",
    "SourceUnavailable",
    "dataset_id",
    "job_id",
    "open_source",
    "split_node_id",
]


def open_source(
    events: str | Path | None = None,
    marquez: str | None = None,
    api_key: str | None = None,
    timeout: float = 5.0,
    *,
    quick: bool = False,
    store: str | None = None,
) -> LineageSource:
    """The event log at ``events``, the Marquez server at ``marquez``, or the lineage store at the
    SQLAlchemy URL ``store`` (exactly one of them; a store that does not exist yet is not created).

    An event log is folded whole into a private store, or with ``quick`` scanned for the questions about
    one node (:mod:`.scan`: the first answer from a big log, without folding all of it). A store's folded
    state is read where each question looks (``quick`` changes nothing there)."""
    if sum(given is not None for given in (events, marquez, store)) != 1:
        raise ValueError(
            "give exactly one of events= (an event log path), marquez= (a Marquez URL) or store= (a "
            "lineage store URL)"
        )
    if store is not None:
        from airflow_lineage_plus.graph.store_source import StoreSource
        from airflow_lineage_plus.store import LineageStore

        return StoreSource(LineageStore(store, create=False), owns_store=True)
    if events is not None:
        if quick:
            from airflow_lineage_plus.graph.scan import QuickSource

            return QuickSource(events)
        from airflow_lineage_plus.graph.eventlog import EventLogSource

        return EventLogSource(events)
    from airflow_lineage_plus.graph.marquez import MarquezSource

    assert marquez is not None
    return MarquezSource(marquez, api_key=api_key, timeout=timeout)
