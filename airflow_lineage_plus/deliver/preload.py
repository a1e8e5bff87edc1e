"""The package's transport imported once in the task process, before the provider forks to emit.

The OpenLineage provider emits each event of a task from a process it forks for that event, and builds
its client there, so the transport's modules are imported anew for every event (about 25 ms each, the
figures of docs/reliability.md, "A task's events"). Imported once in the task process when the task
starts, every process forked after inherits them.
"""

from __future__ import annotations

import importlib
from collections.abc import Iterator
from typing import Any

#: the names the package's transport is configured by (``type`` of ``[openlineage] transport``)
TRANSPORT_TYPES = frozenset({"lineage_plus_event_log", "airflow_lineage_plus.transport.EventLogTransport"})
TRANSPORT_MODULE = "airflow_lineage_plus.deliver.event_log_transport"


def preload_transport() -> bool:
    """Import the package's transport if ``[openlineage] transport`` names it (also inside a
    ``composite`` transport); whether it did."""
    from airflow.providers.openlineage import conf as provider_conf

    if not TRANSPORT_TYPES.intersection(_types(provider_conf.transport())):
        return False
    importlib.import_module(TRANSPORT_MODULE)
    return True


def _types(config: Any) -> Iterator[str]:
    """Every ``type`` named in a transport's configuration, a composite's members too."""
    if isinstance(config, dict):
        if isinstance(config.get("type"), str):
            yield config["type"]
        for value in config.values():
            yield from _types(value)
    elif isinstance(config, list):
        for value in config:
            yield from _types(value)
