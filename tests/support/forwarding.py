"""The event-log transport with the client's own ``file`` transport as its forward target: what leaves
for a backend can be read back next to what was logged."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from openlineage.client.transport import get_default_factory

from airflow_lineage_plus.deliver.event_log_transport import EventLogTransport


def logging_and_forwarding(directory: Path, **extra: Any) -> EventLogTransport:
    """Writes ``directory/events.jsonl`` and forwards to ``directory/forwarded.jsonl``."""
    created = get_default_factory().create(
        {
            "type": "lineage_plus_event_log",
            "log_file_path": str(directory / "events.jsonl"),
            # what the event log gets is what the store gets (test_store_writer.py): read it here
            "store_url": "none",
            "forward": {"type": "file", "log_file_path": str(directory / "forwarded.jsonl"), "append": True},
            **extra,
        }
    )
    assert isinstance(created, EventLogTransport)
    return created
