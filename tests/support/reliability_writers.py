"""Worker processes that append events to one event log at the same time (spawned by the tests)."""

from __future__ import annotations

import random
from typing import Any

from tests.support.reliability_events import run_event


def sizes(seed: int, count: int, largest: int) -> list[int]:
    """Mixed event sizes: mostly small, some medium, about 2% close to ``largest`` bytes."""
    rng = random.Random(seed)
    out = []
    for _ in range(count):
        roll = rng.random()
        if roll < 0.02:
            out.append(rng.randint(largest * 9 // 10, largest - 4096))
        elif roll < 0.2:
            out.append(rng.randint(8_000, 120_000))
        else:
            out.append(rng.randint(0, 4_000))
    return out


def write_events(transport_config: dict[str, Any], worker: int, count: int, largest: int) -> int:
    """Emit ``count`` events of mixed sizes through a transport built by the client's factory."""
    return _emit(transport_config, f"writer_{worker}", sizes(worker, count, largest))


def spool_events(log: str, worker: int, count: int) -> int:
    """Append ``count`` events of 2 kB to the spool ``log`` (the store is 'none': every event goes there)."""
    config = {"type": "lineage_plus_event_log", "log_file_path": log, "store_url": "none"}
    return _emit(config, f"spooler_{worker}", [2_000] * count)


def _emit(transport_config: dict[str, Any], prefix: str, paddings: list[int]) -> int:
    """Emit one event per padding, named ``<prefix>.event_<n>``, through the client's factory's transport;
    how many."""
    from openlineage.client.transport import get_default_factory

    import airflow_lineage_plus.transport  # noqa: F401  (registers the short type name)

    transport = get_default_factory().create(dict(transport_config))
    for seq, padding in enumerate(paddings):
        transport.emit(run_event(f"{prefix}.event_{seq}", padding=padding))
    return len(paddings)
