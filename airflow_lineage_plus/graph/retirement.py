"""Which of a job's edges are current, and which are retired.

A job's edges are the union of every input and output its events ever reported. An edge is **current**
when the latest COMPLETED run of the job reports it, or a run that started after that one does (a run
still going, or one that failed or was skipped since): that is the newest evidence of what the job reads
and writes. Edges reported only by runs older than the latest completed run are **retired**: the job
stopped reading or writing that dataset. A job with no completed run has all its edges current (nothing
retired them yet). "Latest" is by start time, as for a job's latest run.
"""

from __future__ import annotations

from collections.abc import Iterable

from airflow_lineage_plus.graph.runs import RunRecord

Edges = frozenset[tuple[str, str]]

#: An edge a run of its job reported that the job no longer reports.
RETIRED = "retired"


Key = tuple[int, str]


def current_edges(runs: Iterable[RunRecord]) -> Edges | None:
    """The current edges reported by ``runs`` (all the runs of one job); None when every edge is current
    (no run completed)."""
    runs = list(runs)
    keys = [run.sort_key() for run in runs]
    latest_completed = latest_completed_key(runs, keys)
    if latest_completed is None:
        return None
    current: set[tuple[str, str]] = set()
    for run, key in zip(runs, keys, strict=True):
        if key >= latest_completed and run.io:
            current |= run.io
    return frozenset(current)


def latest_completed_key(runs: Iterable[RunRecord], keys: Iterable[Key]) -> Key | None:
    """The ``sort_key()`` (given as ``keys``) of the latest COMPLETED of ``runs``; None without one."""
    return max((key for run, key in zip(runs, keys, strict=True) if run.completed), default=None)
