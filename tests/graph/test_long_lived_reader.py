"""A long-lived reader (the API server's) leaves Python's garbage collector as it found it: incremental
reads never freeze objects (``gc.freeze`` after every read pinned the garbage of the requests in between,
~95 MB after 20 refreshes in the API server) and never leave the collector off."""

from __future__ import annotations

import gc
import sys
from pathlib import Path

from airflow_lineage_plus.graph.eventlog import EventLogSource

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO / "benchmarks"))

from generate_events import generate  # noqa: E402


def test_incremental_refreshes_never_freeze_objects_nor_leave_the_collector_off(tmp_path: Path) -> None:
    log, batch = tmp_path / "events.jsonl", tmp_path / "batch.jsonl"
    generate(log, events=2000, datasets=300, jobs=60, seed=3)
    source = EventLogSource(log)
    frozen, enabled = gc.get_freeze_count(), gc.isenabled()
    source.refresh()
    appended = written = 0
    for round_ in range(20):
        written += generate(batch, events=42, datasets=100, jobs=10, seed=100 + round_).events
        with open(log, "ab") as out:
            out.write(batch.read_bytes())
        appended += source.refresh()
    assert appended == written > 0, "each refresh reads exactly the events appended since the last"
    assert (gc.get_freeze_count(), gc.isenabled()) == (frozen, enabled)
