"""The per-run history (:mod:`.history`) of the event log's nodes, read back from each run's events.

Like the details (:mod:`.eventlog_details`), the graph keeps only where each run's events are (refs);
the facets a history needs (the job's SQL and code, the Airflow try number, the datasets' figures,
schemas, assertions and partitions) are read back from the log for the runs asked for only.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

from airflow_lineage_plus import facet_keys as fk
from airflow_lineage_plus import node_ids as ids
from airflow_lineage_plus.graph.eventlog_details import ReadRef
from airflow_lineage_plus.graph.history import DatasetRun, History, JobRun, digest
from airflow_lineage_plus.graph.model import LineageGraph
from airflow_lineage_plus.graph.records import JobRecord
from airflow_lineage_plus.graph.runs import RunRecord

#: a run's events merged: (run facets, job facets, {dataset id: (direction, facets)})
Merged = tuple[dict[str, Any], dict[str, Any], dict[str, tuple[str, dict[str, Any]]]]
_NOTHING: Merged = ({}, {}, {})


class _Reader:
    """Merges each run's events once per question (a job and its outputs read the same runs)."""

    def __init__(self, read_ref: ReadRef) -> None:
        self.read_ref = read_ref
        self.merged: dict[int, Merged] = {}

    def merge(self, run: RunRecord) -> Merged:
        key = id(run)
        found = self.merged.get(key)
        if found is None:
            found = self.merged[key] = _merge(e for e in (self.read_ref(r) for r in run.refs) if e)
        return found


def _merge(events: Iterable[dict[str, Any]]) -> Merged:
    """The facets of a run's events, later events (by event time) winning."""
    ordered = sorted((e for e in events if isinstance(e, dict)), key=lambda e: str(e.get("eventTime") or ""))
    run_facets: dict[str, Any] = {}
    job_facets: dict[str, Any] = {}
    datasets: dict[str, tuple[str, dict[str, Any]]] = {}
    for event in ordered:
        run_facets.update(_dict(_dict(event.get("run")).get("facets")))
        job_facets.update(_dict(_dict(event.get("job")).get("facets")))
        for direction in ("inputs", "outputs"):
            for item in event.get(direction) or ():
                if not isinstance(item, dict) or "namespace" not in item or "name" not in item:
                    continue
                key = ids.dataset_id(str(item["namespace"]), str(item["name"]))
                facets = datasets.setdefault(key, (direction, {}))[1]
                for facet_key in ("facets", "inputFacets", "outputFacets"):
                    facets.update(_dict(item.get(facet_key)))
    return run_facets, job_facets, datasets


def _dict(value: Any) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


def run_history(
    graph: LineageGraph, node_ids: Sequence[str], runs: int, read_ref: ReadRef, as_of: int | None = None
) -> dict[str, History]:
    """:meth:`LineageSource.run_history` over ``graph`` (a graph that keeps its runs' refs)."""
    reader = _Reader(read_ref)
    found: dict[str, History] = {}
    for node_id in node_ids:
        if node_id.startswith("job:"):
            job = graph.job_record(node_id)
            if job is not None:
                found[node_id] = History(node_id, tuple(_job_runs(graph, job, runs, reader, as_of)))
        elif graph.dataset_record(node_id) is not None:
            found[node_id] = _dataset_history(graph, node_id, runs, reader, as_of)
    return found


def _recent(graph: LineageGraph, job: JobRecord, as_of: int | None) -> list[RunRecord]:
    runs = [r for r in graph.all_runs(job) if as_of is None or (r.started_at or 0) <= as_of]
    return sorted(runs, key=RunRecord.sort_key, reverse=True)


def _job_runs(
    graph: LineageGraph, job: JobRecord, count: int, reader: _Reader, as_of: int | None
) -> list[JobRun]:
    found = []
    for run in _recent(graph, job, as_of)[:count]:
        run_facets, job_facets, _ = reader.merge(run) if run.refs else _NOTHING
        task_instance = _dict(_dict(run_facets.get(fk.AIRFLOW_RUN)).get("taskInstance"))
        tries = task_instance.get("try_number")
        found.append(
            JobRun(
                run_id=run.run_id or f"not-run:{run.parent_run_id}",
                state=run.state,
                started=run.start if run.start is not None else run.first_seen,
                ended=run.end,
                tries=tries if isinstance(tries, int) and not isinstance(tries, bool) else None,
                execution_mode=run.exec_mode,
                sql=digest(_text(_dict(job_facets.get(fk.SQL)).get("query"))),
                source_code=_code_version(job_facets),
            )
        )
    return found


def _text(value: Any) -> str | None:
    return value if isinstance(value, str) else None


def _code_version(job_facets: dict[str, Any]) -> str | None:
    location = _dict(job_facets.get(fk.SOURCE_CODE_LOCATION))
    version = location.get("version")
    if isinstance(version, str) and version:
        return version
    return digest(_text(_dict(job_facets.get("sourceCode")).get("sourceCode")))


def _dataset_history(
    graph: LineageGraph, dataset_id: str, count: int, reader: _Reader, as_of: int | None
) -> History:
    slo: list[int] = []
    for upstream in (True, False):  # writers; for a dataset no job writes, its readers
        jobs = [
            j for j, _ in graph.neighbours(dataset_id, upstream=upstream, retired=True, declared_too=False)
        ]
        records = [job for job in (graph.job_record(j) for j in sorted(jobs)) if job is not None]
        if upstream:
            slo = [job.slo_minutes for job in records if job.slo_minutes is not None]
        found: list[DatasetRun] = []
        for job in records:
            completed = [r for r in _recent(graph, job, as_of) if r.completed]
            for run in completed[:count]:
                entry = reader.merge(run)[2].get(dataset_id)
                if entry is not None:
                    found.append(_dataset_run(dataset_id, job.id, run, entry[1]))
        if found:
            found.sort(key=lambda r: (r.at, r.run_id), reverse=True)
            return History(dataset_id, tuple(found[:count]), min(slo) if slo else None)
    return History(dataset_id, (), min(slo) if slo else None)


def _dataset_run(dataset_id: str, job_id: str, run: RunRecord, facets: dict[str, Any]) -> DatasetRun:
    statistics = _dict(facets.get(fk.OUTPUT_STATISTICS))
    metrics = _dict(facets.get(fk.DATA_QUALITY_METRICS))
    nulls = []
    for column, figures in sorted(_dict(metrics.get("columnMetrics")).items()):
        count = _dict(figures).get("nullCount")
        if isinstance(count, int) and not isinstance(count, bool):
            nulls.append((str(column), count))
    schema = facets.get(fk.SCHEMA)
    fields = None
    if isinstance(schema, dict) and isinstance(schema.get("fields"), list):
        fields = tuple(
            (str(f["name"]), _text(f.get("type")))
            for f in schema["fields"]
            if isinstance(f, dict) and "name" in f
        )
    assertions = []
    for item in _dict(facets.get(fk.DATA_QUALITY_ASSERTIONS)).get("assertions") or ():
        if isinstance(item, dict) and isinstance(item.get("assertion"), str):
            assertions.append((item["assertion"], _text(item.get("column")), item.get("success") is True))
    partition, dimensions = _partition(facets.get(fk.SUBSET))
    return DatasetRun(
        run_id=run.run_id or "",
        job_id=job_id,
        at=run.end if run.end is not None else (run.started_at or 0),
        rows=_first_int(statistics.get("rowCount"), metrics.get("rowCount")),
        bytes=_first_int(statistics.get("size"), metrics.get("bytes")),
        nulls=tuple(nulls),
        fields=fields,
        assertions=tuple(assertions),
        partition=partition,
        dimensions=dimensions,
    )


def _partition(subset: Any) -> tuple[str | None, tuple[tuple[str, str], ...]]:
    subset = _dict(subset)
    condition = _dict(subset.get("outputCondition") or subset.get("inputCondition"))
    for item in condition.get("partitions") or ():
        if isinstance(item, dict):
            dimensions = tuple(sorted((str(k), str(v)) for k, v in _dict(item.get("dimensions")).items()))
            return _text(item.get("identifier")), dimensions
    return None, ()


def _is_int(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _first_int(*values: Any) -> int | None:
    return next((int(v) for v in values if _is_int(v)), None)
