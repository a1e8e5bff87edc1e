"""The package's transport prepared once in the task process, before the provider forks to emit.

The OpenLineage provider emits each event of a task from a process it forks for that event, and builds
its client there, so whatever the transport imports or compiles on first use is done anew for every
event: importing its modules (about 25 ms), compiling the redaction scanner (about 9 ms) and the fold
statements of the store's engine (about 13 ms; docs/reliability.md, "A task's events"), or, sending to
an API server, reading the ingest key. Done once in the task process when the task starts, every
process forked after inherits them.
"""

from __future__ import annotations

import importlib
from collections.abc import Iterator
from typing import Any

#: the names the package's transport is configured by (``type`` of ``[openlineage] transport``)
TRANSPORT_TYPES = frozenset({"lineage_plus_event_log", "airflow_lineage_plus.transport.EventLogTransport"})
TRANSPORT_MODULE = "airflow_lineage_plus.deliver.event_log_transport"


def preload_transport() -> bool:
    """Import and prepare the package's transport for each place ``[openlineage] transport`` names it
    (also inside a ``composite`` transport); whether it did."""
    from airflow.providers.openlineage import conf as provider_conf

    ours = [config for config in _configs(provider_conf.transport()) if config["type"] in TRANSPORT_TYPES]
    if not ours:
        return False
    module = importlib.import_module(TRANSPORT_MODULE)
    for config in ours:
        module.prepare_process(config)
    return True


def _configs(config: Any) -> Iterator[dict[str, Any]]:
    """Every transport configuration (a dict with a ``type``) in ``config``, a composite's members too."""
    if isinstance(config, dict):
        if isinstance(config.get("type"), str):
            yield config
        for value in config.values():
            yield from _configs(value)
    elif isinstance(config, list):
        for value in config:
            yield from _configs(value)
