"""JSON routes of the Lineage view, all read-only, all answering through the shared lineage query layer.

Every route but ``/config`` reads lineage only through its :data:`~airflow_lineage_plus.ui.access.Lineage`
parameter, which scopes the question to the DAGs the user may read, runs it in the view's own threads
within the request's deadline and turns errors into fixed texts. Every identifier comes in as a query
parameter with a bounded length and is only ever used as a key into the graph: nothing here touches the
filesystem or renders HTML, so a hostile dataset name stays data.
"""

from __future__ import annotations

import json
from http import HTTPStatus
from typing import Annotated, Any

from fastapi import APIRouter, HTTPException, Query, status

from airflow_lineage_plus import conf
from airflow_lineage_plus.graph.answers import task_instance_ids
from airflow_lineage_plus.ui.access import Lineage

MAX_DEPTH = 12
MAX_ID_LENGTH = 2048
MAX_PROPOSED_LENGTH = 64 * 1024

NodeId = Annotated[
    str, Query(min_length=1, max_length=MAX_ID_LENGTH, description="dataset:NS:NAME or job:NS:NAME")
]
Depth = Annotated[int, Query(ge=1, le=MAX_DEPTH)]
#: Whether to follow edges declared in DAG code by jobs that have not run yet (drawn dotted).
Declared = Annotated[bool, Query(description="include declared edges of jobs that have not run")]
AirflowId = Annotated[str, Query(min_length=1, max_length=512)]
#: answer as of this time (ISO-8601), from what the events up to then said
AsOf = Annotated[str | None, Query(alias="asOf", max_length=64)]
#: also the edges jobs no longer report (state ``retired``, drawn dashed)
IncludeRetired = Annotated[bool, Query(alias="includeRetired")]

router = APIRouter(prefix="/api")

#: most jobs the DAG tab merges (a DAG with more tasks shows its first ones, by name)
MAX_DAG_JOBS = 100


def _checked_node_id(node: str) -> str:
    """``node`` if it has the ``dataset:NS:NAME`` / ``job:NS:NAME`` form, else 400."""
    from airflow_lineage_plus.graph import split_node_id

    try:
        split_node_id(node)
    except ValueError:
        raise HTTPException(
            status.HTTP_400_BAD_REQUEST, "A node id looks like dataset:NAMESPACE:NAME or job:NAMESPACE:NAME"
        ) from None
    return node


def _merge_graphs(target: dict[str, Any], graphs: list[dict[str, Any]]) -> dict[str, Any]:
    """One graph from several neighbourhoods: nodes by id (nearest depth kept), edges deduplicated.

    ``truncated`` maps a drawn node to how many of its neighbours were cut; a node cut from one
    neighbourhood but drawn in another is not counted.
    """
    nodes: dict[str, dict[str, Any]] = {}
    edges: dict[tuple[str, str], dict[str, Any]] = {}
    truncated: dict[str, int] = {}
    for graph in graphs:
        for node in [graph["target"], *graph.get("nodes", [])]:
            known = nodes.get(node["id"])
            if known is None or abs(node.get("depth") or 0) < abs(known.get("depth") or 0):
                nodes[node["id"]] = node
        for edge in graph.get("edges", []):
            edges[(edge["origin"], edge["destination"])] = edge
        for node_id, count in (graph.get("truncated") or {}).items():
            truncated[node_id] = max(truncated.get(node_id, 0), int(count))
    merged: dict[str, Any] = {"target": target, "nodes": list(nodes.values()), "edges": list(edges.values())}
    if truncated:
        merged["truncated"] = truncated
    return merged


def _as_of(value: str | None) -> int | None:
    """The ``asOf`` parameter in epoch microseconds; 422 when it is not an ISO-8601 time."""
    if value is None or not value.strip():
        return None
    from airflow_lineage_plus.timestamps import to_micros

    try:
        return to_micros(value.strip())
    except ValueError:
        raise HTTPException(
            HTTPStatus.UNPROCESSABLE_ENTITY, "asOf is an ISO-8601 time, e.g. 2026-03-01T12:00:00Z"
        ) from None


def _way(as_of: str | None, include_retired: bool, declared: bool) -> dict[str, Any]:
    """The keyword arguments of a graph question: when, and which edges besides current ones."""
    return {"as_of": _as_of(as_of), "include_retired": include_retired, "include_declared": declared}


@router.get("/config")
async def view_config() -> dict[str, Any]:
    """What the page needs to know about this installation (no lineage data)."""
    return {"maxNodes": conf.ui_max_nodes(), "maxDepth": MAX_DEPTH, "source": conf.graph_source()}


@router.get("/search")
async def search(
    lineage: Lineage,
    q: Annotated[str, Query(max_length=512)] = "",
    limit: Annotated[int, Query(ge=1, le=200)] = 20,
) -> dict[str, Any]:
    """Datasets and jobs whose name matches ``q``."""
    if not q.strip():
        return {"results": []}
    return {"results": await lineage.ask(lambda queries: queries.search(q.strip(), limit=limit))}


@router.get("/lineage")
async def lineage_graph(
    lineage: Lineage,
    node: NodeId,
    depth: Depth = 6,
    direction: Annotated[str, Query(pattern="^(both|upstream|downstream)$")] = "both",
    declared: Declared = True,
    as_of: AsOf = None,
    include_retired: IncludeRetired = False,
) -> dict[str, Any]:
    """The graph around ``node``; for a dataset also the upstream jobs whose latest run failed. Each edge
    has a ``state``: ``current`` (reported by a run), ``declared`` (in DAG code; the job has not run) or,
    with ``includeRetired``, ``retired`` (no longer reported by the job). ``asOf``: as of that time."""
    _checked_node_id(node)
    limit = conf.ui_max_nodes()
    way = _way(as_of, include_retired, declared)

    def query(queries: Any) -> dict[str, Any]:
        with queries.source.one_view():  # the walks below read each record once
            return _lineage_answer(queries)

    def _lineage_answer(queries: Any) -> dict[str, Any]:
        if direction == "upstream":
            graph: dict[str, Any] = queries.upstream(node, depth, limit=limit, **way)
        elif direction == "downstream":
            graph = queries.downstream(node, depth, limit=limit, **way)
        else:
            graph = queries.lineage(node, depth, limit=limit, **way)
            # a task that ran dbt: the lineage of dbt's jobs too
            children = queries.descendants(node, as_of=way["as_of"])
            if children:
                around = [queries.lineage(c, depth, limit=limit, **way) for c in children]
                graph = _merge_graphs(graph["target"], [graph, *around])
        if graph["target"]["type"] == "DATASET":
            failed = queries.failed_upstream(node, depth, **way)
            graph["failedUpstream"] = failed.get("nodes", []) if isinstance(failed, dict) else list(failed)
        return graph

    return await lineage.ask(query)


@router.get("/node")
async def node_details(lineage: Lineage, node: NodeId, as_of: AsOf = None) -> dict[str, Any]:
    """Everything known about one dataset or job (schema, quality, runs, SQL, owners...), as of ``asOf``
    when given.

    A job's recent runs also carry the Airflow ids of their task instance (``airflow``: dag_id, run_id,
    task_id, try_number, map_index) so the page can link each run to Airflow.
    """
    _checked_node_id(node)
    when = _as_of(as_of)

    def query(queries: Any) -> dict[str, Any]:
        details: dict[str, Any] = queries.node_details(node, as_of=when)
        if details.get("type") == "JOB":
            for run in details.get("runs") or []:
                if run.get("airflow") is None and run.get("runId"):  # not said, or a run a task ran (dbt's)
                    run["airflow"] = _run_task_instance(queries, run["runId"])
        return details

    return await lineage.ask(query)


@router.get("/freshness")
async def freshness(lineage: Lineage) -> dict[str, Any]:
    """Datasets older than their freshness target (``SloTier``), with the job responsible (docs/alerts.md):
    only datasets and jobs the reader may see."""
    from airflow_lineage_plus.act.freshness import report

    result: dict[str, Any] = await lineage.ask(
        lambda queries: report(queries.source, may_read_dag=queries.may_read_dag)
    )
    return result


@router.get("/run")
async def run_details(
    lineage: Lineage, run: Annotated[str, Query(min_length=1, max_length=256)]
) -> dict[str, Any]:
    """Inputs, outputs and facets of one run."""
    result: dict[str, Any] = await lineage.ask(lambda queries: queries.run_details(run))
    return result


def _task_jobs(queries: Any, dag_id: str, task_id: str | None) -> list[dict[str, Any]]:
    """Job nodes of a DAG's tasks (or of one task), as the provider names them: ``dag_id.task_id``.

    Only jobs the reader may see, of a DAG they may read: anything else is "no lineage recorded"."""
    if not queries.may_read(dag_id):
        return []
    prefix = f"{dag_id}."
    wanted = f"{dag_id}.{task_id}" if task_id else None
    found = queries.search(wanted or prefix, limit=500)
    jobs = [
        node
        for node in found
        if node.get("type") == "JOB"
        and (node.get("name") == wanted if wanted else str(node.get("name", "")).startswith(prefix))
    ]
    namespace = conf.openlineage_namespace()
    jobs.sort(key=lambda node: (node.get("namespace") != namespace, node.get("name", "")))
    return jobs


@router.get("/dag")
async def dag_lineage(
    lineage: Lineage,
    dag_id: AirflowId,
    depth: Depth = 2,
    declared: Declared = True,
    as_of: AsOf = None,
    include_retired: IncludeRetired = False,
) -> dict[str, Any]:
    """The lineage of all tasks of one DAG, merged into one graph centred on the DAG (a DAG that has not
    run yet shows the lineage its tasks declare, published with ``lineage-plus publish-static``); as of
    ``asOf``, with retired edges when ``includeRetired``."""
    limit = conf.ui_max_nodes()
    way = _way(as_of, include_retired, declared)

    def query(queries: Any) -> dict[str, Any]:
        jobs = _task_jobs(queries, dag_id, None)[:MAX_DAG_JOBS]
        if not jobs:
            raise HTTPException(status.HTTP_404_NOT_FOUND, "No lineage recorded for this DAG")
        # and the jobs the tasks ran (dbt's), which carry the lineage of tasks that report none themselves
        ran = [child for job in jobs for child in queries.descendants(job["id"], as_of=way["as_of"])]
        graphs = [
            queries.lineage(job_id, depth, limit=limit, **way) for job_id in [j["id"] for j in jobs] + ran
        ]
        target = {"id": f"dag:{dag_id}", "type": "DAG", "name": dag_id, "namespace": "", "depth": 0}
        merged = _merge_graphs(target, graphs)
        merged["dagJobs"] = [job["id"] for job in jobs]
        return merged

    return await lineage.ask(query)


def _run_task_instance(queries: Any, run_id: str) -> dict[str, Any] | None:
    """The Airflow ids of a run's task instance; for a run a task ran (dbt's), those of that task."""
    details = queries.run_details(run_id)
    found = task_instance_ids(details.get("facets"))
    for parent in details.get("ranBy") or ():
        if found is not None:
            break
        found = task_instance_ids(queries.run_details(parent["runId"]).get("facets"))
    return found


@router.get("/task-instance")
async def task_instance(
    lineage: Lineage,
    dag_id: AirflowId,
    task_id: AirflowId,
    run_id: Annotated[str | None, Query(max_length=512)] = None,
    map_index: Annotated[int | None, Query(ge=-1)] = None,
) -> dict[str, Any]:
    """A task's job and, for an Airflow DAG run, its latest recorded try there: inputs, outputs, facets.

    ``tries`` lists every recorded try of that task instance, newest first, however old the DAG run.
    Without ``run_id`` the DAG run of the job's latest run is shown.
    """

    def query(queries: Any) -> dict[str, Any]:
        jobs = _task_jobs(queries, dag_id, task_id)
        if not jobs:
            raise HTTPException(status.HTTP_404_NOT_FOUND, "No lineage recorded for this task")
        job = jobs[0]
        wanted = run_id
        tries: list[dict[str, Any]] = []
        if wanted is None:
            latest = next(iter(queries.node_details(job["id"]).get("runs") or ()), None)
            wanted = ((latest or {}).get("airflow") or {}).get("run_id")
            if wanted is None and latest is not None and latest.get("runId"):  # a run Airflow did not name
                tries.append({**queries.run_details(latest["runId"]), "airflow": None, "tryNumber": None})
        for found in queries.airflow_runs(job["id"], wanted) if wanted is not None else ():
            run = queries.run_details(found)
            ids = task_instance_ids(run.get("facets"))
            if ids is None or ids["run_id"] != wanted:
                continue  # another DAG run's, whose Airflow run_id shares the hashed key
            if map_index is not None and ids["map_index"] not in (None, map_index):
                continue
            tries.append({**run, "airflow": ids, "tryNumber": ids.get("try_number")})
        tries.sort(key=lambda run: (run["tryNumber"] or 0, run.get("startedAt") or ""), reverse=True)
        chosen = tries[0] if tries else None
        summaries = [
            {key: value for key, value in run.items() if key not in ("facets", "inputs", "outputs")}
            for run in tries
        ]
        return {"job": job, "tries": summaries, "run": chosen}

    return await lineage.ask(query)


# -- impact, schema changes, column paths, the time range (the view's panels and its time slider) ---------


@router.get("/failed-upstream")
async def failed_upstream(
    lineage: Lineage,
    node: NodeId,
    depth: Depth = 10,
    as_of: AsOf = None,
    include_retired: IncludeRetired = False,
    declared: Declared = True,
) -> dict[str, Any]:
    """The jobs upstream of a dataset whose latest run failed, and the dataset's own failed assertions
    (``lineage-plus failed-upstream``), of what the reader may see."""
    _checked_node_id(node)
    way = _way(as_of, include_retired, declared)
    result: dict[str, Any] = await lineage.ask(lambda queries: queries.failed_upstream(node, depth, **way))
    return result


@router.get("/impact")
async def impact(
    lineage: Lineage,
    node: NodeId,
    depth: Depth = 10,
    as_of: AsOf = None,
    include_retired: IncludeRetired = False,
    declared: Declared = True,
) -> dict[str, Any]:
    """Everything downstream of a dataset the reader may see: the level (HIGH, MEDIUM, LOW), the jobs and
    the owners."""
    _checked_node_id(node)
    way = _way(as_of, include_retired, declared)
    result: dict[str, Any] = await lineage.ask(lambda queries: queries.impact(node, depth, **way))
    return result


@router.get("/schema-diff")
async def schema_diff(
    lineage: Lineage,
    node: NodeId,
    proposed: Annotated[str | None, Query(max_length=MAX_PROPOSED_LENGTH)] = None,
    as_of: AsOf = None,
) -> dict[str, Any]:
    """The last two schema versions of a dataset and what changed between them; with ``proposed`` (JSON:
    ``[{"name", "type"}]``, ``{"fields": [...]}`` or ``{"col": "TYPE"}``), what it would change."""
    _checked_node_id(node)
    when = _as_of(as_of)
    schema = None
    if proposed is not None and proposed.strip():
        try:
            schema = json.loads(proposed)
        except ValueError:
            raise HTTPException(HTTPStatus.UNPROCESSABLE_ENTITY, "proposed is not JSON") from None

    def query(queries: Any) -> dict[str, Any]:
        try:
            answer: dict[str, Any] = queries.schema_diff(node, schema, as_of=when)
        except ValueError as error:  # a proposed schema of another shape: say which
            raise HTTPException(HTTPStatus.UNPROCESSABLE_ENTITY, str(error)) from None
        return answer

    return await lineage.ask(query)


@router.get("/columns")
async def columns(
    lineage: Lineage,
    node: NodeId,
    column: Annotated[str, Query(min_length=1, max_length=512)],
    depth: Depth = 10,
    as_of: AsOf = None,
) -> dict[str, Any]:
    """The columns a column comes from (upstream) and feeds (downstream), hop by hop (columns of datasets
    the reader may not see left out)."""
    _checked_node_id(node)
    when = _as_of(as_of)
    result: dict[str, Any] = await lineage.ask(
        lambda queries: queries.columns(node, column, depth, as_of=when)
    )
    return result


@router.get("/time-range")
async def time_range(lineage: Lineage) -> dict[str, Any]:
    """The first and the last event time the source knows (the time slider's ends; null when unknown)."""
    result: dict[str, Any] = await lineage.ask(lambda queries: queries.time_range())
    return result


# -- what changed, and what needs attention (docs/what-changed.md) ---------------------------------------


def _thresholds() -> Any:
    from airflow_lineage_plus.graph.changes import Thresholds

    return Thresholds(**conf.what_changed_thresholds())


@router.get("/what-changed")
async def what_changed(
    lineage: Lineage,
    node: NodeId,
    baseline_runs: Annotated[int | None, Query(alias="baselineRuns", ge=1, le=100)] = None,
    depth: Depth = 10,
    as_of: AsOf = None,
) -> dict[str, Any]:
    """What changed upstream of a dataset (the dataset included) against each node's last runs, the likely
    cause first; nodes the reader may not see are never named."""
    _checked_node_id(node)
    when = _as_of(as_of)
    runs = baseline_runs or conf.what_changed_baseline_runs()
    thresholds, max_nodes = _thresholds(), conf.what_changed_max_nodes()
    result: dict[str, Any] = await lineage.ask(
        lambda queries: queries.what_changed(
            node, runs, depth, as_of=when, thresholds=thresholds, max_nodes=max_nodes
        )
    )
    return result


@router.get("/attention")
async def attention(lineage: Lineage) -> dict[str, Any]:
    """The view's first page: jobs whose latest run failed, stale datasets (``stale``: the freshness
    breaches) and the largest changes of the last day, all filtered to what the reader may see."""
    import time

    from airflow_lineage_plus.act.freshness import report
    from airflow_lineage_plus.graph.attention import attention as needs_attention

    runs, thresholds = conf.what_changed_baseline_runs(), _thresholds()

    def query(queries: Any) -> dict[str, Any]:
        now = time.time_ns() // 1000
        found = needs_attention(queries, now=now, baseline_runs=runs, thresholds=thresholds)
        found["stale"] = report(queries.source, may_read_dag=queries.may_read_dag)["breaches"]
        return found

    result: dict[str, Any] = await lineage.ask(query)
    return result
