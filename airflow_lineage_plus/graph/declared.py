"""Declared lineage in the graph: what DAG code says a job reads and writes, before the job has run.

An OpenLineage **JobEvent** (a job with its inputs and outputs, and no run) is static, design-time lineage
by the spec's definition; ``lineage-plus publish-static`` emits one per task of the DAGs it parses
(:mod:`airflow_lineage_plus.declared`). The graph keeps each job's latest declaration (by event time, ties
broken by content) apart from the edges its runs reported:

* a job with no run: its declared edges are edges of the graph, in state :data:`DECLARED`;
* once the job has a run, what its runs reported wins: its declaration adds no edge.

Every edge a query returns carries a ``state``: :data:`CURRENT` (reported by a run), :data:`DECLARED`, or,
when retired edges are asked for, :data:`.retirement.RETIRED` (reported by a run, no longer by the job).

Facts a declaration carries about datasets and the job (schema, column lineage, owners, the event shown
in details) must never win over what a run reported, whatever the times: they are folded at their event
time shifted into a lower tier (:func:`declared_time`), so any run's fact is later than any declared one,
and declared facts still order among themselves by time.
"""

from __future__ import annotations

import hashlib

#: An edge a run of its job reported.
CURRENT = "current"
#: An edge only declared in DAG code: its job has not run yet.
DECLARED = "declared"

#: How far below every run fact a declared fact is kept (event times are epoch microseconds, ~2**51 now).
_TIER = 1 << 60
#: The time of "never": below every declared time too.
NEVER = -(1 << 62)

Edges = frozenset[tuple[str, str]]


def declared_time(micros: int) -> int:
    """``micros`` (an event time) moved into the declared tier: earlier than any run's fact."""
    return micros - _TIER


def is_declared_time(micros: int) -> bool:
    """Whether a fact's time is in the declared tier."""
    return NEVER < micros < -(_TIER >> 1)


def tie(edges: Edges) -> str:
    """A digest of a declaration's edges: breaks ties between declarations of the same time."""
    return hashlib.blake2b(repr(sorted(edges)).encode(), digest_size=8).hexdigest()
