"""Declared lineage sent as OpenLineage JobEvents, so consumers see a DAG's lineage before its first run.

Where to: the transport the OpenLineage provider is configured with (``[openlineage] transport``: the
event log through :class:`~airflow_lineage_plus.deliver.event_log_transport.EventLogTransport`, Marquez over
``http``, Kafka ...), or an event log path, or a Marquez URL. Every event goes through the same redaction
and size limits as task events (:func:`~airflow_lineage_plus.deliver.event_budget.enforce`) before it leaves.

A JobEvent carries no run: the graph shows its edges as *declared* until the job runs, and then the
run's lineage wins (:mod:`airflow_lineage_plus.graph.declared`); Marquez records the job and its inputs
and outputs as a job version.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any

import attr

from airflow_lineage_plus import _compat
from airflow_lineage_plus.deliver import event_log_transport
from airflow_lineage_plus.deliver.event_budget import enforce
from airflow_lineage_plus.deliver.serialize import dumps
from airflow_lineage_plus.marquez_client import MarquezClient
from airflow_lineage_plus.progress import progress


@attr.frozen
class Delivery:
    """Where events went, and how many did not get there (with the first reason)."""

    destination: str
    sent: int
    failed: int
    error: str | None = None


def _sender(
    events_log: str | None, marquez: str | None, api_key: str | None, timeout: float
) -> tuple[Callable[[Any], None], Callable[[], None], str]:
    """(send one event, close, destination label)."""
    if events_log is not None:
        log = event_log_transport.EventLogTransport(  # ``--events FILE``: that file itself, no store
            event_log_transport.EventLogConfig(log_file_path=events_log, store_url="none")
        )

        def append(event: Any) -> None:
            lost = event_log_transport.lost_events()
            log.emit(event)  # never raises: a failed write is counted
            if event_log_transport.lost_events() != lost:
                raise OSError(f"could not append to the event log {events_log} (see the warning above)")

        return append, lambda: None, f"event log {events_log}"
    if marquez is not None:
        client = MarquezClient(marquez, api_key=api_key, timeout=timeout)
        return lambda event: client.post_lineage(dumps(event)), client.close, f"Marquez at {client.url}"
    configured = _compat.openlineage_client().transport  # the checked dict goes to it as is: every
    kind = getattr(configured, "kind", None) or "configured"  # client transport serialises dicts
    return configured.emit, lambda: None, f"the OpenLineage provider's {kind} transport"


def publish(
    events: Iterable[Any],
    *,
    events_log: str | None = None,
    marquez: str | None = None,
    api_key: str | None = None,
    timeout: float = 5.0,
) -> Delivery:
    """Send ``events`` (JobEvent objects) to the event log, Marquez, or the provider's transport."""
    send, close, destination = _sender(events_log, marquez, api_key, timeout)
    sent = failed = 0
    error = None
    events = list(events)
    try:
        with progress(f"sending to {destination}", total=len(events)) as bar:
            for event in events:
                try:
                    send(enforce(event))  # redaction and size limits, as for every event that leaves
                    sent += 1
                except Exception as exc:
                    failed += 1
                    error = error or f"{type(exc).__name__}: {exc}"
                bar.advance()
    finally:
        close()
    return Delivery(destination, sent, failed, error)
