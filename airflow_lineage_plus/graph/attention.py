"""What needs attention now, for the Lineage view's first page: jobs whose latest run failed, and the
largest changes of the last day (the stale datasets come from :mod:`airflow_lineage_plus.act.freshness`).

The changes are each recently written dataset's own (its latest write against its baseline, and its
writers' latest runs against theirs: the rules of :mod:`.changes`), not a walk upstream of each: the
largest first, a click away from the dataset's graph and its ``what-changed`` answer. Only what the reader
may see (``LineageQueries.may_read_dag``).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from airflow_lineage_plus.graph.changes import KIND_ORDER, Thresholds, dataset_runs, job_runs
from airflow_lineage_plus.graph.what_changed import change_entry, node_changes, visible_histories
from airflow_lineage_plus.store import wire as w

if TYPE_CHECKING:
    from airflow_lineage_plus.graph.queries import LineageQueries

DAY = 86_400_000_000
#: the most recently written datasets looked at (a bounded cost whatever the graph's size)
MAX_SCANNED = 200


def attention(
    queries: LineageQueries,
    *,
    now: int,
    baseline_runs: int,
    thresholds: Thresholds,
    within: int = DAY,
    limit: int = 10,
) -> dict[str, Any]:
    """``{"failedJobs": [NODE], "changes": [CHANGE], "since": TIME}``: the jobs whose latest run failed
    and the ``limit`` largest changes of datasets written within ``within`` before ``now`` (each change as
    in ``what-changed``, without ``depth`` and ``path``), for one reader."""
    from airflow_lineage_plus.graph.queries import node_dict

    _, _, graph, failed = queries.source.summary()
    visibility = queries.visibility(graph)
    shown = visibility.node if visibility is not None else (lambda node_id: True)
    candidates = queries.written_since(now - within, MAX_SCANNED)
    writers = sorted(
        {
            job
            for dataset in candidates
            for job, _ in graph.neighbours(dataset, upstream=True, declared_too=False)
            if shown(job)
        }
    )
    nodes = [*candidates, *writers]
    histories = (
        queries.source.run_history(nodes, job_runs(baseline_runs), dataset_runs=dataset_runs(baseline_runs))
        if nodes
        else {}
    )
    if visibility is not None:
        histories = visible_histories(histories, visibility)
    found, _ = node_changes(histories, dict.fromkeys(nodes, 0), baseline_runs, thresholds, now)
    found.sort(key=lambda c: (-min(c.weight, 1e12), KIND_ORDER.get(c.kind, 99), c.node, c.column or ""))
    return {
        "since": w.format_micros(now - within),
        "failedJobs": [node_dict(graph, job, 0) for job in failed if shown(job)],
        "changes": [change_entry(c) for c in found[:limit] if c.at is not None and c.at >= now - within],
    }
