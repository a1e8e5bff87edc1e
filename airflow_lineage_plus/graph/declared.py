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
time shifted into a lower tier (:func:`~airflow_lineage_plus.store.facts.declared_time`), so any run's
fact is later than any declared one, and declared facts still order among themselves by time.
"""

from __future__ import annotations

from airflow_lineage_plus.store.facts import declaration_tie, is_declared_time

#: An edge a run of its job reported.
CURRENT = "current"
#: An edge only declared in DAG code: its job has not run yet.
DECLARED = "declared"

__all__ = ["CURRENT", "DECLARED", "is_declared_time", "tie"]
tie = declaration_tie
