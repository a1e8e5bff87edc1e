"""The details of nodes and runs, built by re-reading the events they came from: a graph keeps only
where each event is (a *ref*: a stored event's row, or an event log's byte offset and length), so the
facets shown in details are read back when asked for (:class:`.StoreSource`, :mod:`.eventlog`)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from airflow_lineage_plus import facet_keys as fk
from airflow_lineage_plus import node_ids as ids
from airflow_lineage_plus.exceptions import NodeNotFound
from airflow_lineage_plus.graph.ancestry import parent_chain, ran_by_nodes
from airflow_lineage_plus.graph.answers import column_input, run_summary, task_instance_ids
from airflow_lineage_plus.graph.model import LineageGraph
from airflow_lineage_plus.graph.runs import RunRecord
from airflow_lineage_plus.graph.schema_diff import diff_fields
from airflow_lineage_plus.store import wire as w

#: runs a job's details list, newest first
RECENT_RUNS = 20

#: the event a ref locates, as a JSON object (None when it cannot be read)
ReadRef = Callable[[int], dict[str, Any] | None]
#: the keys a dataset entry of an event holds facets under: its own, and the run's input or output facets
FACET_KEYS = ("facets", "inputFacets", "outputFacets")


def node_details(graph: LineageGraph, node_id: str, read_ref: ReadRef) -> dict[str, Any]:
    """Everything known about a node of ``graph`` (docs/graph.md); ``read_ref`` reads an event back."""
    if node_id.startswith("dataset:"):
        return dataset_details(graph, node_id, read_ref)
    return job_details(graph, node_id, read_ref)


def dataset_details(graph: LineageGraph, node_id: str, read_ref: ReadRef) -> dict[str, Any]:
    record = graph.dataset_record(node_id)
    if record is None:
        raise NodeNotFound(f"unknown node {node_id}")
    facets, _ = _dataset_facets(read_ref, record.ref, record.namespace, record.name, ("facets",))
    versions = record.schema_versions()
    written, quality_run = _dataset_facets(read_ref, record.write_ref, record.namespace, record.name)
    return {
        "id": node_id,
        "type": ids.DATASET,
        "namespace": record.namespace,
        "name": record.name,
        "fields": [{"name": n, "type": t, "description": d} for n, t, d in record.fields],
        "schemaVersions": [[{"name": n, "type": t} for n, t in v] for v in versions],
        "lastSchemaChange": diff_fields(versions[1], versions[0]) if len(versions) > 1 else [],
        "quality": {key: value for key, value in written.items() if key in fk.QUALITY_FACETS},
        "qualityRunId": quality_run,
        "columnLineage": {
            column: [column_input(*item) for item in inputs]
            for column, inputs in sorted(record.columns.items())
        },
        "owners": list(record.owners),
        "tags": _tag_names(facets.get(fk.TAGS)),
        "documentation": (facets.get(fk.DOCUMENTATION) or {}).get("description"),
        "producers": _adjacent(graph, node_id, upstream=True),
        "consumers": _adjacent(graph, node_id, upstream=False),
    }


def job_details(graph: LineageGraph, node_id: str, read_ref: ReadRef) -> dict[str, Any]:
    job = graph.job_record(node_id)
    if job is None:
        raise NodeNotFound(f"unknown node {node_id}")
    event = read_ref(job.ref) if job.ref is not None else None
    job_facets = ((event or {}).get("job") or {}).get("facets") or {}
    runs = sorted(graph.all_runs(job), key=RunRecord.sort_key, reverse=True)
    latest = runs[0] if runs else None
    graph.read_refs(runs[:RECENT_RUNS])
    return {
        "id": node_id,
        "type": ids.JOB,
        "namespace": job.namespace,
        "name": job.name,
        "latestRun": latest.summary() if latest else None,
        "runs": [
            {**run_summary(run), "airflow": _task_instance(read_ref, run)} for run in runs[:RECENT_RUNS]
        ],
        "inputs": _adjacent(graph, node_id, upstream=True),
        "outputs": _adjacent(graph, node_id, upstream=False),
        "declared": graph.declared_only(job),
        "sql": (job_facets.get(fk.SQL) or {}).get("query"),
        "owners": list(job.owners),
        "documentation": (job_facets.get(fk.DOCUMENTATION) or {}).get("description"),
        "sourceCodeLocation": job_facets.get(fk.SOURCE_CODE_LOCATION),
        "airflow": _airflow_ids(graph, read_ref, job.name, latest),
    }


def _adjacent(graph: LineageGraph, node_id: str, *, upstream: bool) -> list[str]:
    """Ids one edge up- or downstream: retired edges, and declared edges of jobs that have not run,
    included."""
    return sorted(other for other, _ in graph.neighbours(node_id, upstream=upstream, retired=True))


def run_details(graph: LineageGraph, run_id: str, read_ref: ReadRef) -> dict[str, Any]:
    """Inputs, outputs and facets of one run, merged over its events in event-time order."""
    run = graph.runs.get(run_id)
    if run is None:
        raise NodeNotFound(f"unknown run {run_id}")
    graph.read_refs((run,))
    events = [e for e in (read_ref(ref) for ref in run.refs) if e is not None]
    events.sort(key=lambda e: _safe_micros(e.get("eventTime")))
    facets: dict[str, Any] = {}
    inputs: dict[str, dict[str, Any]] = {}
    outputs: dict[str, dict[str, Any]] = {}
    for event in events:
        facets.update(((event.get("run") or {}).get("facets")) or {})
        for key, target in (("inputs", inputs), ("outputs", outputs)):
            for item in event.get(key) or ():
                if isinstance(item, dict) and "namespace" in item and "name" in item:
                    entry = target.setdefault(
                        ids.dataset_id(item["namespace"], item["name"]),
                        {"namespace": item["namespace"], "name": item["name"], "facets": {}},
                    )
                    for facet_key in FACET_KEYS:
                        entry["facets"].update(item.get(facet_key) or {})
    job = graph.jobs[run.job_id]
    return {
        **run_summary(run),
        "job": {"id": job.id, "namespace": job.namespace, "name": job.name},
        "ranBy": ran_by_nodes(graph, run),
        "facets": facets,
        "inputs": [inputs[k] for k in sorted(inputs)],
        "outputs": [outputs[k] for k in sorted(outputs)],
    }


def _dataset_facets(
    read_ref: ReadRef, ref: int | None, namespace: str, name: str, keys: tuple[str, ...] = FACET_KEYS
) -> tuple[dict[str, Any], str | None]:
    """(the facets under ``keys`` the event at ``ref`` gives the dataset, merged; the event's run id)."""
    event = read_ref(ref) if ref is not None else None
    if event is None:
        return {}, None
    entries = [*(event.get("inputs") or ()), *(event.get("outputs") or ())]
    if isinstance(event.get("dataset"), dict):
        entries.append(event["dataset"])
    facets: dict[str, Any] = {}
    for entry in entries:
        if isinstance(entry, dict) and entry.get("namespace") == namespace and entry.get("name") == name:
            for key in keys:
                facets.update(entry.get(key) or {})
    return facets, (event.get("run") or {}).get("runId")


def _task_instance(read_ref: ReadRef, run: RunRecord) -> dict[str, Any] | None:
    """The Airflow task instance of a run, from its newest event that has the provider's facet."""
    for ref in reversed(run.refs):
        found = task_instance_ids(((read_ref(ref) or {}).get("run") or {}).get("facets"))
        if found is not None:
            return found
    return None


def _airflow_ids(
    graph: LineageGraph, read_ref: ReadRef, job_name: str, run: RunRecord | None
) -> dict[str, str | None]:
    """The Airflow task instance behind a run; for a run of something a task ran (dbt's runs), the ids of
    the nearest run up its parent chain that names one: child runs belong to their task and its DAG."""
    found = _own_airflow_ids(read_ref, job_name, run)
    if found["dag_id"] is None and run is not None:
        for parent in parent_chain(graph, run):
            graph.read_refs((parent,))
            job = graph.jobs.get(parent.job_id)
            inherited = _own_airflow_ids(read_ref, job.name if job else "", parent)
            if inherited["dag_id"] is not None:
                return inherited
    return found


def _own_airflow_ids(read_ref: ReadRef, job_name: str, run: RunRecord | None) -> dict[str, str | None]:
    dag_id = task_id = run_id = None
    for ref in reversed(run.refs if run is not None else []):
        facets = ((read_ref(ref) or {}).get("run") or {}).get("facets") or {}
        airflow = task_instance_ids(facets) or {}
        dag_id = dag_id or airflow.get("dag_id")
        task_id = task_id or airflow.get("task_id")
        run_id = run_id or airflow.get("run_id")
        parent_job = ((facets.get(fk.PARENT) or {}).get("job") or {}).get("name")
        if dag_id is None and parent_job and job_name.startswith(parent_job + "."):
            dag_id, task_id = parent_job, job_name[len(parent_job) + 1 :]
    return {"dag_id": dag_id, "task_id": task_id, "run_id": run_id}


def _tag_names(facet: Any) -> list[str]:
    if not isinstance(facet, dict):
        return []
    return sorted(str(t.get("key") or t.get("name")) for t in facet.get("tags") or () if isinstance(t, dict))


def _safe_micros(value: Any) -> int:
    try:
        return w.to_micros(value)
    except (TypeError, ValueError):
        return 0
