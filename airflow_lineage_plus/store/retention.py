"""Retention: raw events older than ``[lineage_plus] retention_days`` deleted, in bounded batches.

What stays, whatever its age: the events of each job's *current* runs (its latest run, and its latest
run that ended: COMPLETE, FAIL or ABORT; ties all kept), of the runs up their parent chains, and events
that belong to no run (declared lineage, dataset events). Folding what remains gives the graph of today:
the current edges, run states, schemas and owners (from the latest events). What goes is history: older
runs, edges retired before the window, time travel before it (``retained_from``, which answers as of an
earlier time report as not exact).

No lock is held that writers wait on for longer than one batch: candidates are found by reads (which
never block writers, WAL on SQLite, MVCC on PostgreSQL), and each batch of deletes is one short
transaction by row id (on PostgreSQL it locks only the old rows it deletes; on SQLite, where writers
take turns, a writer waits for at most one batch).
"""

from __future__ import annotations

import time
from collections.abc import Iterable

import attrs

from airflow_lineage_plus.store.database import LineageStore

#: rows deleted per transaction
DELETE_BATCH = 500
_DAY_MICROS = 86_400 * 1_000_000


@attrs.frozen
class RetentionResult:
    """``deleted`` raw events; ``kept`` old events of current runs; ``retained_from`` the new window start."""

    deleted: int
    kept: int
    retained_from: int


def cutoff(days: float, now: float | None = None) -> int:
    """Epoch microseconds ``days`` before ``now`` (seconds; default: the clock)."""
    moment = time.time() if now is None else now
    return int(moment * 1_000_000) - int(days * _DAY_MICROS)


def current_runs(store: LineageStore) -> set[str]:
    """Run ids retention keeps: each job's latest run and latest ended run, and their parent chains."""
    latest: dict[tuple[str | None, str | None], tuple[int, set[str]]] = {}
    ended: dict[tuple[str | None, str | None], tuple[int, set[str]]] = {}
    parents: dict[str, str] = {}
    for namespace, name, run_id, last, last_end, parent in store.run_times():
        job = (namespace, name)
        _keep_newest(latest, job, last, run_id)
        if last_end is not None:
            _keep_newest(ended, job, last_end, run_id)
        if parent:
            parents[run_id] = parent
    kept: set[str] = set()
    for table in (latest, ended):
        for _, runs in table.values():
            kept |= runs
    return _with_parents(kept, parents)


def _keep_newest(
    table: dict[tuple[str | None, str | None], tuple[int, set[str]]],
    job: tuple[str | None, str | None],
    moment: int,
    run_id: str,
) -> None:
    found = table.get(job)
    if found is None or moment > found[0]:
        table[job] = (moment, {run_id})
    elif moment == found[0]:
        found[1].add(run_id)


def _with_parents(runs: Iterable[str], parents: dict[str, str]) -> set[str]:
    kept: set[str] = set()
    for run_id in runs:
        current: str | None = run_id
        while current is not None and current not in kept:
            kept.add(current)
            current = parents.get(current)
    return kept


def apply_retention(store: LineageStore, before: int, *, batch: int = DELETE_BATCH) -> RetentionResult:
    """Delete the raw events older than ``before`` (epoch µs) but those of current runs (see the module
    docstring). ``retained_from`` is recorded first, so answers say so while the deletes run."""
    store.set_retained_from(before)
    keep = current_runs(store)
    deleted = kept = 0
    after = 0
    while True:
        rows = store.old_rows(before, after, batch)
        if not rows:
            break
        after = rows[-1][0]
        doomed = [row_id for row_id, run_id in rows if run_id not in keep]
        kept += len(rows) - len(doomed)
        deleted += store.delete_ids(doomed)
    return RetentionResult(deleted, kept, before)
