"""Questions about every job a reader of some DAGs may see: the time slider's range and the datasets
written lately (the first page).

Every job is decided, :data:`JOB_LOT` at a time, each lot in a fresh whole graph of the source
(:meth:`~.source.LineageSource.whole_graph`: a store's reads what deciding the lot needs, and lets it go),
so what such a question holds at once does not grow with the store.
"""

from __future__ import annotations

from collections.abc import Iterator

from airflow_lineage_plus.graph.model import LineageGraph, time_span
from airflow_lineage_plus.graph.source import LineageSource
from airflow_lineage_plus.graph.visibility import DagPredicate, Visibility

#: how many jobs are decided at a time: what such a question holds at once
JOB_LOT = 500


def visible_lots(
    source: LineageSource, may_read_dag: DagPredicate
) -> Iterator[tuple[LineageGraph, list[str]]]:
    """Every job the reader may see, a lot at a time: the lot's graph and its visible jobs."""
    job_ids = source.whole_graph().all_job_ids()
    for start in range(0, len(job_ids), JOB_LOT):
        graph = source.whole_graph()
        yield graph, Visibility(graph, may_read_dag).jobs(job_ids[start : start + JOB_LOT])


def time_range(source: LineageSource, may_read_dag: DagPredicate) -> tuple[int | None, int | None]:
    """The span of the runs of the jobs the reader may see (epoch microseconds; None when none)."""
    return time_span(
        moment for graph, jobs in visible_lots(source, may_read_dag) for moment in graph.run_times(jobs)
    )


def written_since(source: LineageSource, may_read_dag: DagPredicate, since: int, limit: int) -> list[str]:
    """Ids of up to ``limit`` datasets the reader may see, last written at or after ``since`` (epoch
    microseconds), newest first: those their visible jobs write (found job by job, however many other
    DAGs wrote since), and those the newest ``limit`` writes of all hold that they may see (a dataset no
    job writes, say)."""
    graph = source.whole_graph()
    visibility = Visibility(graph, may_read_dag)
    newest = graph.written_since(since, limit)
    found = {dataset: graph.dataset_record(dataset) for dataset in newest if visibility.node(dataset)}
    for lot, jobs in visible_lots(source, may_read_dag):
        lot.prefetch_edges(jobs)
        outputs = {d for job in jobs for d, _ in lot.neighbours(job, upstream=False, declared_too=False)}
        lot.prefetch_records(outputs)
        found.update((dataset, lot.dataset_record(dataset)) for dataset in outputs)
    times = sorted(  # newest first, then by id
        (-record.write_time, dataset)
        for dataset, record in found.items()
        if record is not None and record.write_ref is not None and record.write_time >= since
    )
    return [dataset for _, dataset in times[:limit]]
