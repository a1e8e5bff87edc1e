"""A Marquez server as a lineage source, through its REST API (``/api/v1``) with an optional API key.

Marquez's ``/lineage`` graph is undirected (it walks both ways); direction is recovered from each
node's ``inEdges``/``outEdges``, and the same queries then run on the same :class:`LineageGraph` model
as for the event log. A job's latest run is recomputed here as the run that started last.

Edges: Marquez draws a job's edges from its current *job version*, the inputs and outputs of its latest
finished run (completed, failed or aborted). That is this package's rule for current edges
(:mod:`.retirement`) whenever the job's latest run completed; otherwise the answer says ``"exact": false``.
Retired edges and time travel come from the job versions (``/jobs/{job}/versions``, each with its
inputs, outputs and creation time) and dataset versions; Marquez cannot say what a run's state was at an
earlier time nor walk past a retired edge, so those answers are ``"exact": false`` too. A job Marquez
knows no run of is known from a JobEvent: its edges are declared ones (:mod:`.declared`), and at an
earlier time its newest job version by then is its declaration.
"""

from __future__ import annotations

from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from typing import Any
from urllib.parse import quote

from airflow_lineage_plus import facet_keys as fk
from airflow_lineage_plus import node_ids as ids
from airflow_lineage_plus.exceptions import NodeNotFound
from airflow_lineage_plus.graph import declared, retirement
from airflow_lineage_plus.graph.answers import column_input, failed_jobs, run_summary, task_instance_ids
from airflow_lineage_plus.graph.model import LineageGraph
from airflow_lineage_plus.graph.records import ColumnInput, Fields, JobRecord
from airflow_lineage_plus.graph.runs import AIRFLOW_UPSTREAM_FAILED, RANK_OF_STATE, RunRecord
from airflow_lineage_plus.graph.schema_diff import diff_fields
from airflow_lineage_plus.graph.source import MAX_AIRFLOW_RUNS, LineageSource
from airflow_lineage_plus.marquez_client import MarquezClient
from airflow_lineage_plus.store import wire as w
from airflow_lineage_plus.store.facts import not_run

PAGE = 500
#: pages read of any one listing (namespaces' datasets or jobs): at most 10 000 items
MAX_PAGES = 20
#: pages of a dataset's versions read for its schema history: the newest 2 000 versions
MAX_VERSION_PAGES = 4
#: nodes of a Marquez ``/lineage`` answer the graph takes in (the rest is left out)
MAX_GRAPH_NODES = 20_000
#: Marquez calls one question makes at the same time
PARALLEL_CALLS = 4
JobVersion = tuple[int, set[tuple[str, str]]]  # (created, edges)


class MarquezSource(LineageSource):
    def __init__(self, url: str, *, api_key: str | None = None, timeout: float = 5.0) -> None:
        self.client = MarquezClient(url, api_key=api_key, timeout=timeout)
        self.url = self.client.url
        self.timeout = timeout
        self.problems: dict[str, int] = {}
        # only plain HTTP calls run in the pool, never one that waits for the pool: it cannot deadlock
        self._pool = ThreadPoolExecutor(PARALLEL_CALLS, thread_name_prefix="lineage-plus-marquez")

    def close(self) -> None:
        self._pool.shutdown(wait=False, cancel_futures=True)
        self.client.close()

    def _pages(
        self, path: str, key: str, *, missing: str | None = None, max_pages: int = MAX_PAGES
    ) -> list[dict[str, Any]]:
        """Every item of a paged listing, at most ``max_pages`` pages (:meth:`_each_page`)."""
        return [
            item for page in self._each_page(path, key, missing=missing, max_pages=max_pages) for item in page
        ]

    def _each_page(
        self, path: str, key: str, *, missing: str | None = None, max_pages: int = MAX_PAGES
    ) -> Iterator[list[Any]]:
        """The pages of a paged listing, at most ``max_pages``, until a short one; stops when a page
        repeats the previous one (a Marquez that ignores ``offset`` would otherwise be read for ever)."""
        previous: list[Any] | None = None
        for number in range(max_pages):
            body = self.client.get(path, {"limit": PAGE, "offset": number * PAGE}, missing=missing)
            page = list((body or {}).get(key) or []) if isinstance(body, dict) else []
            if page == previous:
                return
            yield page
            if len(page) < PAGE:
                return
            previous = page

    # -- building the model ---------------------------------------------------------------------
    def _lineage(self, node_id: str, depth: int) -> list[dict[str, Any]]:
        params = {"nodeId": node_id, "depth": depth}
        body = self.client.get("/lineage", params, missing=f"unknown node {node_id}")
        nodes = list(body.get("graph") or []) if isinstance(body, dict) else []
        return [node for node in nodes[:MAX_GRAPH_NODES] if isinstance(node, dict)]

    def graph_for(
        self, node_id: str, depth: int, *, as_of: int | None = None, retired: bool = False
    ) -> LineageGraph:
        graph = self._current_graph(node_id, depth)
        graph.exact = all(
            (run := graph.latest_run(job)) is None or run.state == "COMPLETED" for job in graph.jobs.values()
        ) and not self._producer_dropped(graph, node_id)
        if as_of is not None or retired:
            self._rewind(graph, as_of, retired)
            graph.exact = False
            if not graph.has_node(node_id):
                raise NodeNotFound(f"{node_id} did not exist at that time")
        return graph

    def _current_graph(self, node_id: str, depth: int) -> MarquezGraph:
        nodes = self._lineage(node_id, max(depth, 1))
        graph = MarquezGraph()
        present = {node.get("id") for node in nodes}
        parents: set[tuple[str, str]] = set()
        for node in nodes:
            data = node.get("data") or {}
            if node.get("type") == ids.DATASET:
                _add_dataset(graph, data)
            elif node.get("type") == ids.JOB:
                parents |= _add_job(graph, data)
        _add_edges(graph, nodes, present)
        if not graph.has_node(node_id):
            raise NodeNotFound(f"unknown node {node_id}")
        for job in graph.jobs.values():  # a task with no run under its DAG: candidates by name, <dag>.<task>
            parts = job.name.split(".")
            parents |= {(job.namespace, ".".join(parts[:i])) for i in range(1, len(parts))}
        self._add_scheduler_skips(graph, parents)
        return graph

    def _add_scheduler_skips(self, graph: LineageGraph, parents: set[tuple[str, str]]) -> None:
        """The SKIPPED fallback: DAG runs (parent jobs) whose ``airflowState.tasksState`` skipped a task."""
        wanted = [(ns, name) for ns, name in sorted(parents) if ids.job_id(ns, name) not in graph.jobs]
        found = self._pool.map(self._parent_job, wanted)  # the parent is not a node of the graph itself
        for (namespace, name), data in zip(wanted, found, strict=True):
            for raw in (data or {}).get("latestRuns") or []:
                if not isinstance(raw, dict) or "id" not in raw:
                    continue
                states = _dict(_dict(_dict(raw.get("facets")).get(fk.AIRFLOW_STATE)).get("tasksState"))
                if not states:
                    continue
                graph.runs[raw["id"]] = _run(raw, ids.job_id(namespace, name))
                graph.set_dag_run_skips(raw["id"], *not_run(namespace, name, states))

    def _parent_job(self, key: tuple[str, str]) -> dict[str, Any] | None:
        try:
            data = self.client.get(_path(key[0], "jobs", key[1]), missing="parent job")
        except NodeNotFound:
            return None
        return data if isinstance(data, dict) else None

    def _producer_dropped(self, graph: LineageGraph, node_id: str) -> bool:
        """Whether the job that wrote the dataset's latest version is not among its producers now: its
        latest finished run (a failure, an abort) reported other outputs, so Marquez no longer links it
        while this package's rule still would."""
        kind, namespace, name = ids.split_node_id(node_id)
        if kind != ids.DATASET:
            return False
        path = _path(namespace, "datasets", name) + "/versions"
        body = self.client.get(path, {"limit": 1}, missing="dataset")
        versions = (body or {}).get("versions") or []
        job = ((versions[0].get("createdByRun") or {}).get("jobVersion") or {}) if versions else {}
        if "namespace" not in job or "name" not in job:
            return False
        return ids.job_id(str(job["namespace"]), str(job["name"])) not in graph.pred.get(node_id, ())

    def _rewind(self, graph: MarquezGraph, as_of: int | None, retired: bool) -> None:
        """Each job's edges from its job version current at ``as_of`` (the latest one without it), with
        the older versions' other edges as retired ones; runs started later and datasets' later schemas
        left out. The versions are asked for in parallel (plain HTTP calls in the source's pool)."""
        jobs = list(graph.jobs.values())
        for job, all_versions in zip(jobs, self._pool.map(self._job_versions, jobs), strict=True):
            versions = [v for v in all_versions if as_of is None or v[0] <= as_of]
            if as_of is not None:
                job.runs = [r for r in job.runs if (r.started_at or 0) <= as_of]
            graph.replace_edges(job, versions, retired)
        if as_of is not None:
            datasets = list(graph.datasets.values())
            found = self._pool.map(lambda record: self.schema_versions(record.id, as_of=as_of), datasets)
            for record, schemas in zip(datasets, found, strict=True):
                record.fields = tuple((n, t, None) for n, t in schemas[0]) if schemas else ()
            graph.drop_unknown(as_of)
        graph.version += 1

    def _job_versions(self, job: JobRecord) -> list[JobVersion]:
        """(created, edges) of each version of the job, oldest first."""
        found = []
        path = _path(job.namespace, "jobs", job.name) + "/versions"
        for version in self._pages(path, "versions", max_pages=MAX_VERSION_PAGES):
            created = _micros(version.get("createdAt"))
            if created is not None:
                inputs, outputs = _ids(version.get("inputs")), _ids(version.get("outputs"))
                found.append((created, {(d, job.id) for d in inputs} | {(job.id, d) for d in outputs}))
        return sorted(found, key=lambda v: v[0])

    def column_graph(
        self, dataset_id: str, column: str, depth: int, *, as_of: int | None = None
    ) -> LineageGraph:
        _, namespace, name = ids.split_node_id(dataset_id)
        missing = f"unknown node {dataset_id}"
        graph = LineageGraph()
        graph.exact = as_of is None
        _add_dataset(graph, self.client.get(_path(namespace, "datasets", name), missing=missing))
        field = f"datasetField:{namespace}:{name}:{column}"
        params = {"nodeId": field, "depth": max(depth, 1), "withDownstream": "true"}
        body = self.client.get("/column-lineage", params, missing=missing)
        for record_id, fields in _column_nodes(graph, body).items():
            graph.datasets[record_id].columns = fields
        return graph

    def schema_versions(self, dataset_id: str, *, as_of: int | None = None) -> list[Fields]:
        _, namespace, name = ids.split_node_id(dataset_id)
        path = _path(namespace, "datasets", name) + "/versions"
        versions = self._pages(
            path, "versions", missing=f"unknown node {dataset_id}", max_pages=MAX_VERSION_PAGES
        )
        if as_of is not None:
            versions = [v for v in versions if (_micros(v.get("createdAt")) or 0) <= as_of]
        versions.sort(key=lambda v: _micros(v.get("createdAt")) or 0, reverse=True)
        distinct: list[Fields] = []
        for version in versions:
            # A write without a schema facet (a START listing bare outputs) is a version with no fields in
            # Marquez: it says nothing about the schema, so it is not a schema version.
            fields: Fields = tuple((f["name"], f.get("type")) for f in version.get("fields") or [])
            if fields and fields not in distinct:
                distinct.append(fields)
        return distinct

    def _namespaces(self) -> list[str]:
        return [ns["name"] for ns in self._pages("/namespaces", "namespaces") if "name" in ns]

    def dataset_names(self) -> list[tuple[str, str]]:
        names = []
        for namespace in self._namespaces():
            for item in self._pages(_path(namespace, "datasets"), "datasets"):
                names.append((item.get("namespace", namespace), item["name"]))
        return names

    def summary(self) -> tuple[int, int, LineageGraph, list[str]]:
        graph = LineageGraph()
        datasets = jobs = 0
        for namespace in self._namespaces():
            datasets += len(self._pages(_path(namespace, "datasets"), "datasets"))
            for item in self._pages(_path(namespace, "jobs"), "jobs"):
                jobs += 1
                _add_job(graph, item)
        return datasets, jobs, graph, failed_jobs(graph)

    def search(self, text: str, limit: int) -> list[tuple[str, str, str]]:
        body = self.client.get("/search", {"q": text, "limit": limit})
        found = []
        for item in (body or {}).get("results") or []:
            if item.get("type") in (ids.DATASET, ids.JOB):
                found.append((item["type"], item.get("namespace", ""), item.get("name", "")))
        return found[:limit]

    def node_details(self, node_id: str, *, as_of: int | None = None) -> dict[str, Any]:
        """The node's Marquez record, its neighbourhood and (dataset) column lineage or (job) recent runs,
        asked at the same time; then (dataset) its schema versions. Marquez's details are today's: with
        ``as_of`` they say ``"exact": false``."""
        kind, namespace, name = ids.split_node_id(node_id)
        missing = f"unknown node {node_id}"
        dataset = kind == ids.DATASET
        path = _path(namespace, "datasets" if dataset else "jobs", name)
        extra: tuple[str, dict[str, Any]] = (path + "/runs", {"limit": 20})
        if dataset:
            extra = ("/column-lineage", {"nodeId": node_id, "depth": 1})
        record = self._pool.submit(self.client.get, path, missing=missing)
        more = self._pool.submit(self.client.get, *extra, missing=missing if dataset else None)
        around = self.graph_for(node_id, 1)
        build = self._dataset_details if dataset else self._job_details
        header = {"id": node_id, "type": kind, "namespace": namespace, "name": name}
        details = header | build(around, node_id, record.result(), more.result())
        if as_of is not None:
            details["exact"] = False
        return details

    def _dataset_details(self, around: LineageGraph, node_id: str, data: Any, body: Any) -> dict[str, Any]:
        """A dataset's details after its id, type, namespace and name (:meth:`node_details`)."""
        versions = self.schema_versions(node_id)
        facets = data.get("facets") or {}
        columns = _column_nodes(LineageGraph(), body).get(node_id, {})
        return {
            "fields": [
                {"name": f["name"], "type": f.get("type"), "description": f.get("description")}
                for f in data.get("fields") or []
            ],
            "schemaVersions": [[{"name": n, "type": t} for n, t in v] for v in versions],
            "lastSchemaChange": diff_fields(versions[1], versions[0]) if len(versions) > 1 else [],
            "quality": {k: v for k, v in facets.items() if k in fk.QUALITY_FACETS},
            "qualityRunId": None,
            "columnLineage": {
                column: [column_input(*item) for item in inputs] for column, inputs in sorted(columns.items())
            },
            "owners": list(around.datasets[node_id].owners),
            "tags": sorted(data.get("tags") or []),
            "documentation": data.get("description"),
            "producers": sorted(other for other, _ in around.neighbours(node_id, upstream=True)),
            "consumers": sorted(other for other, _ in around.neighbours(node_id, upstream=False)),
        }

    def _job_details(self, around: LineageGraph, node_id: str, data: Any, runs_body: Any) -> dict[str, Any]:
        """A job's details after its id, type, namespace and name (:meth:`node_details`)."""
        job = around.jobs[node_id]
        raw_runs = [r for r in _dict(runs_body).get("runs") or [] if isinstance(r, dict)]
        task_instances = {r.get("id"): task_instance_ids(r.get("facets")) for r in raw_runs}
        records = sorted((_run(r, node_id) for r in raw_runs), key=RunRecord.sort_key, reverse=True)
        latest = around.latest_run(job)
        facets = data.get("facets") or {}
        airflow = (task_instance_ids(raw_runs[0].get("facets")) if raw_runs else None) or {}
        return {
            "latestRun": latest.summary() if latest else None,
            "runs": [{**run_summary(r), "airflow": task_instances.get(r.run_id)} for r in records],
            "inputs": sorted(ids.dataset_id(d["namespace"], d["name"]) for d in data.get("inputs") or []),
            "outputs": sorted(ids.dataset_id(d["namespace"], d["name"]) for d in data.get("outputs") or []),
            "declared": around.declared_only(job),
            "sql": (facets.get(fk.SQL) or {}).get("query"),
            "owners": list(job.owners),
            "documentation": data.get("description"),
            "sourceCodeLocation": facets.get(fk.SOURCE_CODE_LOCATION),
            "airflow": {key: airflow.get(key) for key in ("dag_id", "task_id", "run_id")},
        }

    def airflow_runs(self, job_id: str, airflow_run_id: str) -> list[str]:
        """The job's runs (``/runs``, newest first, a page at a time: :meth:`_each_page`) whose ``airflow``
        facet names the DAG run, at most ``MAX_AIRFLOW_RUNS``; the reading stops at the first page after the
        DAG run's runs."""
        _, namespace, name = ids.split_node_id(job_id)
        found: list[str] = []
        for page in self._each_page(_path(namespace, "jobs", name) + "/runs", "runs"):
            matches = [
                str(r["id"])
                for r in page
                if isinstance(r, dict)
                and r.get("id")
                and (task_instance_ids(r.get("facets")) or {}).get("run_id") == airflow_run_id
            ]
            found += matches
            if (found and not matches) or len(found) >= MAX_AIRFLOW_RUNS:
                break
        return found[:MAX_AIRFLOW_RUNS]

    def run_details(self, run_id: str) -> dict[str, Any]:
        data = self.client.get(f"/jobs/runs/{quote(run_id, safe='')}", missing=f"unknown run {run_id}")
        job_version = data.get("jobVersion") or {}
        record = _run(data, ids.job_id(job_version.get("namespace", ""), job_version.get("name", "")))
        return {
            **run_summary(record),
            "job": {
                "id": record.job_id,
                "namespace": job_version.get("namespace"),
                "name": job_version.get("name"),
            },
            "facets": data.get("facets") or {},
            "inputs": [_version_entry(v) for v in data.get("inputDatasetVersions") or []],
            "outputs": [_version_entry(v) for v in data.get("outputDatasetVersions") or []],
        }


def _path(namespace: str, listing: str, name: str | None = None) -> str:
    """``/namespaces/<namespace>/<listing>`` (``datasets``, ``jobs``), or the item ``name`` of it."""
    path = f"/namespaces/{quote(namespace, safe='')}/{listing}"
    return path if name is None else f"{path}/{quote(name, safe='')}"


def _add_edges(graph: LineageGraph, nodes: list[dict[str, Any]], present: set[Any]) -> None:
    """The edges between the nodes of a Marquez lineage graph; those of a job Marquez knows no run of are
    its declaration (:func:`_declare`)."""
    declarations: dict[str, set[tuple[str, str]]] = {}
    for node in nodes:
        for edge in (node.get("inEdges") or []) + (node.get("outEdges") or []):
            origin, destination = edge.get("origin"), edge.get("destination")
            if not all(end in present and graph.has_node(end) for end in (origin, destination)):
                continue
            job = graph.jobs.get(origin) or graph.jobs.get(destination)
            if job is not None and not job.runs:
                declarations.setdefault(job.id, set()).add((origin, destination))
            else:
                graph.add_edge(origin, destination)
    for job_id, edges in declarations.items():
        _declare(graph, graph.jobs[job_id], frozenset(edges))


def _declare(graph: LineageGraph, job: JobRecord, edges: frozenset[tuple[str, str]]) -> None:
    """The job's declaration (:mod:`.declared`): the edges of a job Marquez knows no run of."""
    job.declared = ((0, declared.tie(edges)), edges)
    for origin, destination in edges:
        graph.declared_succ.setdefault(origin, set()).add(destination)
        graph.declared_pred.setdefault(destination, set()).add(origin)


class MarquezGraph(LineageGraph):
    """A graph built from Marquez's answers: its edges are current unless marked retired."""

    def __init__(self) -> None:
        super().__init__()
        self.retired_edges: set[tuple[str, str]] = set()

    def edge_state(self, edge: tuple[str, str]) -> str:
        return retirement.RETIRED if edge in self.retired_edges else declared.CURRENT

    def replace_edges(self, job: JobRecord, versions: list[JobVersion], retired: bool) -> None:
        """The job's edges: those of the newest of ``versions``; with ``retired``, the older versions'
        other edges too, marked retired. No version: no edges. A job with no run has no edge a run
        reported: the newest version is its declaration (:mod:`.declared`), none without a version."""
        for other in self.pred.pop(job.id, set()):
            self.succ.get(other, set()).discard(job.id)
        for other in self.succ.pop(job.id, set()):
            self.pred.get(other, set()).discard(job.id)
        current = versions[-1][1] if versions else set()
        if not job.runs:
            job.declared = None
            if versions:
                self._add_datasets(current)
                _declare(self, job, frozenset(current))
            return
        older = set().union(*(edges for _, edges in versions[:-1])) - current if retired else set()
        shown = current | older
        self._add_datasets(shown)
        for edge in shown:
            self.add_edge(*edge)
        self.retired_edges |= older

    def _add_datasets(self, edges: set[tuple[str, str]]) -> None:
        for edge in edges:
            for node in edge:
                if node.startswith("dataset:") and node not in self.datasets:
                    _, namespace, name = ids.split_node_id(node)
                    self.dataset(namespace, name)

    def drop_unknown(self, as_of: int) -> None:
        """Leave out jobs with no run, no edge and no declaration by ``as_of`` (they did not exist yet)."""
        for job in list(self.jobs.values()):
            if not (job.runs or job.declared is not None or self.pred.get(job.id) or self.succ.get(job.id)):
                del self.jobs[job.id]


def _ids(items: Any) -> set[str]:
    return {
        ids.dataset_id(str(item["namespace"]), str(item["name"]))
        for item in items or ()
        if isinstance(item, dict) and "namespace" in item and "name" in item
    }


def _column_nodes(graph: LineageGraph, body: Any) -> dict[str, dict[str, tuple[ColumnInput, ...]]]:
    """{dataset id: {column: inputs}} of a column-lineage graph (DATASET_FIELD nodes)."""
    columns: dict[str, dict[str, tuple[ColumnInput, ...]]] = {}
    for node in (body or {}).get("graph") or []:
        data = node.get("data") or {}
        if not {"namespace", "dataset", "field"} <= set(data):
            continue
        target = graph.dataset(data["namespace"], data["dataset"])
        inputs: list[ColumnInput] = []
        for item in data.get("inputFields") or []:
            transforms = item.get("transformations") or ()
            parsed = tuple((t.get("type"), t.get("subtype"), t.get("description")) for t in transforms)
            if not parsed and data.get("transformationType"):  # an older facet: the column's own
                parsed = ((None, data["transformationType"], data.get("transformationDescription")),)
            inputs.append((item["namespace"], item["dataset"], item["field"], parsed))
        columns.setdefault(target.id, {})[data["field"]] = tuple(sorted(inputs))
    return columns


def _version_entry(version: dict[str, Any]) -> dict[str, Any]:
    key = version.get("datasetVersionId") or {}
    return {"namespace": key.get("namespace"), "name": key.get("name"), "facets": version.get("facets") or {}}


def _micros(value: Any) -> int | None:
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        return round(value * 1_000_000)
    if isinstance(value, str):
        try:
            return w.to_micros(value)
        except ValueError:
            return None
    return None


def _owners(facets: dict[str, Any]) -> tuple[str, ...]:
    ownership = facets.get(fk.OWNERSHIP) or {}
    return tuple(
        sorted({o["name"] for o in ownership.get("owners") or [] if isinstance(o, dict) and "name" in o})
    )


def _add_dataset(graph: LineageGraph, data: dict[str, Any]) -> None:
    key = data.get("id") or {}
    record = graph.dataset(
        str(key.get("namespace", data.get("namespace"))), str(key.get("name", data.get("name")))
    )
    fields = data.get("fields")
    if fields is not None:
        record.fields = tuple((f["name"], f.get("type"), f.get("description")) for f in fields)
        record.schemas = {tuple((name, kind) for name, kind, _ in record.fields): 0}
    record.owners = _owners(data.get("facets") or {})


def _add_job(graph: LineageGraph, data: dict[str, Any]) -> set[tuple[str, str]]:
    """Add a Marquez Job and its latest runs; returns the (namespace, name) of their parent jobs."""
    key = data.get("id") or {}
    job = graph.job(str(key.get("namespace", data.get("namespace"))), str(key.get("name", data.get("name"))))
    job.owners = _owners(data.get("facets") or {})
    runs = {r["id"]: r for r in (data.get("latestRuns") or []) if isinstance(r, dict) and "id" in r}
    latest = data.get("latestRun")
    if isinstance(latest, dict) and "id" in latest:
        runs.setdefault(latest["id"], latest)
    parents = set()
    for raw in runs.values():
        graph.add_run(job, _run(raw, job.id))
        parent_job = (((raw.get("facets") or {}).get(fk.PARENT) or {}).get("job")) or {}
        if "namespace" in parent_job and "name" in parent_job:
            parents.add((str(parent_job["namespace"]), str(parent_job["name"])))
    return parents


def _run(raw: dict[str, Any], job_id: str) -> RunRecord:
    """A Marquez Run as a RunRecord; a COMPLETED run with the skip facet is SKIPPED (UPSTREAM_FAILED when
    the facet's state says so)."""
    run = RunRecord(raw.get("id"), job_id)
    run.start = _micros(raw.get("startedAt"))
    run.first_seen = run.start if run.start is not None else _micros(raw.get("createdAt"))
    run.end = _micros(raw.get("endedAt"))
    rank = RANK_OF_STATE.get(str(raw.get("state")))
    if rank is not None:
        run.rank = rank
    facets = raw.get("facets") or {}
    skip = _dict(facets.get(fk.SKIP_STATE))
    if rank is not None and skip.get("skipped") is True:
        run.skipped, run.skip_reason = True, skip.get("reason")
        run.upstream_failed = skip.get("state") == AIRFLOW_UPSTREAM_FAILED
    run.error = _dict(facets.get(fk.ERROR_MESSAGE)).get("message")
    run.exec_mode = _dict(facets.get(fk.EXECUTION_MODE)).get("mode")
    parent = _dict(facets.get(fk.PARENT))
    run.parent_run_id = _dict(parent.get("run")).get("runId")
    parent_job = _dict(parent.get("job"))
    if isinstance(parent_job.get("namespace"), str) and isinstance(parent_job.get("name"), str):
        run.parent_job_id = ids.job_id(parent_job["namespace"], parent_job["name"])
    for key in (fk.AIRFLOW_RUN, fk.AIRFLOW_DAG_RUN):
        dag_id = _dict(_dict(facets.get(key)).get("dag")).get("dag_id")
        if isinstance(dag_id, str) and dag_id:
            run.dag_id = dag_id
            break
    return run


def _dict(value: Any) -> dict[str, Any]:
    """``value`` when it is a JSON object, else an empty one (Marquez passes facets through as sent)."""
    return value if isinstance(value, dict) else {}
