"""Which part of a lineage graph one reader may see, given which Airflow DAGs they may read.

The graph knows no users and no auth manager (it imports no Airflow). The caller hands in a predicate,
``may_read_dag(dag_id) -> bool`` (``dag_id`` is ``None`` for lineage that belongs to no DAG; the Lineage
view builds it in :mod:`airflow_lineage_plus.ui.permissions`), and :class:`Visibility` decides for every
job, run and dataset of a graph whether it is shown.

**Which DAG a run belongs to**, first answer wins:

1. the DAG its own facets name: the provider's ``airflow`` (task run) or ``airflowDagRun`` (DAG run)
   facet, ``dag.dag_id``;
2. else the DAG of its parent run (the ``parent`` facet's run, when that run is in the graph), climbing
   up to :data:`~.ancestry.MAX_CHAIN` parents (a longer or cyclic chain belongs to no DAG): a child run
   (dbt models under a task's run, a Spark application a task started, each with a ``parent`` facet)
   inherits the DAG of the task that started it, at any depth;
3. else the DAGs of its parent job (the ``parent`` facet's job, when that job is in the graph);
4. else ``None``: the run belongs to no DAG (or the chain to it is not in the graph).

A job belongs to the DAGs of all its runs; a job with no run belongs to ``None``.

**What is visible**:

* a job, when the reader may read *every* DAG it belongs to (an Airflow task belongs to one; a job run
  under two DAGs, say one dbt model built by both, is shown only to readers of both);
* a run, when its job is visible;
* a dataset, when a visible job reads or writes it, or when no job does at all (as Airflow's own asset
  event list shows events that have no source DAG); retired edges count (a table a hidden job used to
  write is not "touched by no job").

Walks do not pass through hidden jobs: each visible node that has hidden neighbours gets one nameless
``RESTRICTED`` node per direction (:func:`restricted_node`), so a cut edge shows that *something* the
reader may not see is there, and nothing about it.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import attrs

from airflow_lineage_plus import facet_keys as fk
from airflow_lineage_plus import node_ids as ids
from airflow_lineage_plus.graph.ancestry import MAX_CHAIN
from airflow_lineage_plus.graph.model import LineageGraph
from airflow_lineage_plus.graph.records import JobRecord
from airflow_lineage_plus.graph.runs import RunRecord

#: may_read_dag(dag_id) -> bool; ``None`` stands for lineage that belongs to no DAG
DagPredicate = Callable[[str | None], bool]

#: the node type of the placeholder that stands for the hidden neighbours of a visible node
RESTRICTED = "RESTRICTED"
#: the state of the edge between a visible node and its placeholder (whether the hidden edges it stands
#: for are current or declared is not said)
RESTRICTED_EDGE = "restricted"

_NO_DAG: frozenset[str | None] = frozenset({None})


@attrs.frozen
class DagAccess:
    """The DAGs one reader may read, against the DAGs Airflow knows (the Lineage view's and the alerts'
    rule: a DAG Airflow knows is shown when readable; lineage of no DAG, or of a DAG Airflow does not know,
    only to a reader of every DAG it knows)."""

    readable: frozenset[str]
    known: frozenset[str]

    @property
    def all_dags(self) -> bool:
        """Whether the reader may read every DAG Airflow knows (then nothing is filtered)."""
        return self.known <= self.readable

    def may_read_dag(self, dag_id: str | None) -> bool:
        """Whether lineage of ``dag_id`` is shown (``None``: lineage that belongs to no DAG)."""
        if dag_id is not None and dag_id in self.known:
            return dag_id in self.readable
        return self.all_dags

    def predicate(self) -> DagPredicate | None:
        """The filter for :class:`Visibility` and ``LineageQueries.scoped``; ``None``: everything shown."""
        return None if self.all_dags else self.may_read_dag


class Visibility:
    """What one reader may see of one graph; answers are remembered (build one per request)."""

    def __init__(self, graph: LineageGraph, may_read_dag: DagPredicate) -> None:
        self.graph = graph
        self._may_read_dag = may_read_dag
        self._dags_read: dict[str | None, bool] = {}
        self._job_dags: dict[str, frozenset[str | None]] = {}
        self._jobs: dict[str, bool] = {}
        self._datasets: dict[str, bool] = {}

    def may_read_dag(self, dag_id: str | None) -> bool:
        known = self._dags_read.get(dag_id)
        if known is None:
            known = self._dags_read[dag_id] = bool(self._may_read_dag(dag_id))
        return known

    def job_dags(self, job_id: str, depth: int = 0) -> frozenset[str | None]:
        """The DAGs the job's runs belong to (``None`` for a run that belongs to none); ``depth``: how many
        parent jobs were climbed to reach it."""
        known = self._job_dags.get(job_id)
        if known is not None:
            return known
        job = self.graph.job_record(job_id)
        if job is None or depth > MAX_CHAIN:
            return _NO_DAG
        self._job_dags[job_id] = _NO_DAG  # a job that is its own ancestor belongs to no DAG
        found = self._runs_dags(job, depth) or _NO_DAG
        self._job_dags[job_id] = found
        return found

    def _runs_dags(self, job: JobRecord, depth: int) -> frozenset[str | None]:
        runs, older = self.graph.dag_runs(job)
        dags: set[str | None] = set(older)
        for run in runs:
            if run.dag_id is not None:  # the common case, without a set per run
                dags.add(run.dag_id)
            else:
                dags |= self._dags_of_run(run, depth)
        return frozenset(dags)

    def runs_dags(self, job_id: str) -> frozenset[str | None]:
        """The DAGs of the job's runs (empty for a job without runs)."""
        job = self.graph.job_record(job_id)
        return self._runs_dags(job, 0) if job is not None else frozenset()

    def _dags_of_run(self, run: RunRecord, depth: int) -> frozenset[str | None]:
        for _ in range(MAX_CHAIN):
            if run.dag_id is not None:
                return frozenset({run.dag_id})
            parent = self.graph.runs.get(run.parent_run_id) if run.parent_run_id is not None else None
            if parent is None:
                break
            run = parent
        else:
            return _NO_DAG
        if run.parent_job_id is not None and self.graph.job_record(run.parent_job_id) is not None:
            return self.job_dags(run.parent_job_id, depth + 1)
        return _NO_DAG

    def job(self, job_id: str) -> bool:
        known = self._jobs.get(job_id)
        if known is None:
            known = self._jobs[job_id] = all(self.may_read_dag(dag) for dag in self.job_dags(job_id))
        return known

    def jobs(self, job_ids: Sequence[str]) -> list[str]:
        """The visible ones among ``job_ids``, in order. A job one of whose runs names a DAG the reader
        may not read is hidden without its records being read (the graph counts the DAG ids its runs
        name); the rest are read at once and decided by :meth:`job`."""
        named = self.graph.run_dag_ids(job_ids)
        maybe = []
        for job_id in job_ids:
            if all(self.may_read_dag(dag_id) for dag_id in named.get(job_id, ())):
                maybe.append(job_id)
            else:
                self._jobs[job_id] = False
        self.graph.prefetch_records(maybe)
        return [job_id for job_id in maybe if self.job(job_id)]

    def dataset(self, dataset_id: str) -> bool:
        """Visible when a visible job reads or writes it, or no job does; a dataset this graph does not
        hold (a column-lineage input outside a partial graph) only to readers of lineage of no DAG."""
        known = self._datasets.get(dataset_id)
        if known is None:
            if self.graph.dataset_record(dataset_id) is None:
                known = self.may_read_dag(None)
            else:  # every job that ever touched it or declares it: a hidden job's retired edge hides it too
                jobs = [
                    job
                    for upstream in (True, False)
                    for job, _ in self.graph.neighbours(dataset_id, upstream=upstream, retired=True)
                ]
                known = not jobs or any(self.job(job) for job in jobs)
            self._datasets[dataset_id] = known
        return known

    def node(self, node_id: str) -> bool:
        """Whether a job or dataset of the graph is visible (a node not in the graph: False)."""
        if node_id.startswith("job:"):
            return self.graph.job_record(node_id) is not None and self.job(node_id)
        if node_id.startswith("dataset:"):
            return self.graph.dataset_record(node_id) is not None and self.dataset(node_id)
        return False

    def run_id(self, run_id: str | None) -> bool:
        """Whether the run with this id is in the graph and visible: the job that holds it is."""
        jobs = self.graph.jobs_of_run(run_id) if run_id is not None else []
        return bool(jobs) and all(self.job(job_id) for job_id in jobs)


def restricted_id(of: str, *, upstream: bool) -> str:
    """The id of the placeholder standing for ``of``'s hidden neighbours in one direction."""
    return f"restricted:{'upstream' if upstream else 'downstream'}:{of}"


def restricted_node(of: str, *, upstream: bool, depth: int) -> dict[str, Any]:
    """The placeholder node: no name, no namespace, nothing about what it stands for."""
    return {
        "id": restricted_id(of, upstream=upstream),
        "type": RESTRICTED,
        "namespace": "",
        "name": "",
        "depth": depth,
        "of": of,
    }


def restricted_edge(of: str, *, upstream: bool) -> dict[str, str]:
    placeholder = restricted_id(of, upstream=upstream)
    origin, destination = (placeholder, of) if upstream else (of, placeholder)
    return {"origin": origin, "destination": destination, "state": RESTRICTED_EDGE}


def visible_details(details: dict[str, Any], visibility: Visibility) -> dict[str, Any]:
    """A visible node's details (docs/graph.md) with what the reader may not see taken out.

    A job's details need nothing taken out: a visible job belongs only to DAGs the reader may read, and so
    do its runs and the datasets it reads and writes. A dataset's details lose the producers and consumers
    the reader may not see (``restrictedProducers`` / ``restrictedConsumers`` say some were left out), the
    column-lineage inputs of datasets they may not see, and the quality figures when the run that recorded
    them is hidden (or, when the source does not say which run, when any producer is hidden).
    """
    if details.get("type") != "DATASET":
        return details
    shown = dict(details)
    for key, flag in (("producers", "restrictedProducers"), ("consumers", "restrictedConsumers")):
        jobs = list(details.get(key) or [])
        shown[key] = [job for job in jobs if visibility.node(job)]
        shown[flag] = len(shown[key]) < len(jobs)
    run_id = details.get("qualityRunId")
    quality_shown = visibility.run_id(run_id) if run_id else not shown["restrictedProducers"]
    if not quality_shown:
        shown["quality"], shown["qualityRunId"] = {}, None
    shown["columnLineage"] = {
        column: [
            item
            for item in inputs
            if visibility.dataset(ids.dataset_id(str(item.get("namespace")), str(item.get("name"))))
        ]
        for column, inputs in (details.get("columnLineage") or {}).items()
    }
    return shown


def visible_ran_by(ran_by: list[dict[str, Any]], visibility: Visibility) -> list[dict[str, Any]]:
    """A ``ranBy`` list (:mod:`.ancestry`) without the runs of jobs the reader may not see (a job shared by
    two DAGs that ran a job of the reader's DAG)."""
    return [parent for parent in ran_by if visibility.job(str(parent.get("id")))]


def visible_run_details(details: dict[str, Any], visibility: Visibility) -> dict[str, Any]:
    """A visible run's details without a ``parent`` facet (or its ``root``), a ``ranBy`` entry, or a
    ``jobDependencies`` entry naming a job the reader may not see: a child of a job shared by two DAGs, a
    DAG run started by another system, a DAG run started by the asset event of a DAG they may not read."""
    if details.get("ranBy"):
        details = {**details, "ranBy": visible_ran_by(details["ranBy"], visibility)}
    facets = details.get("facets")
    if not isinstance(facets, dict):
        return details
    facets = dict(facets)
    parent = facets.get(fk.PARENT)
    if isinstance(parent, dict):
        shown = dict(parent)
        root = shown.get("root")
        if isinstance(root, dict) and not _job_shown(visibility, root.get("job")):
            del shown["root"]
        if _job_shown(visibility, shown.get("job")):
            facets[fk.PARENT] = shown
        else:
            del facets[fk.PARENT]
    dependencies = facets.get(fk.JOB_DEPENDENCIES)
    if isinstance(dependencies, dict):
        facets[fk.JOB_DEPENDENCIES] = {
            key: [e for e in value if isinstance(e, dict) and _job_shown(visibility, e.get("job"))]
            if key in ("upstream", "downstream") and isinstance(value, list)
            else value
            for key, value in dependencies.items()
        }
    return {**details, "facets": facets}


def _job_shown(visibility: Visibility, job: Any) -> bool:
    """Whether a facet's ``{"namespace", "name"}`` job is one the reader may see (one outside the graph:
    only by a reader of lineage of no DAG)."""
    if not isinstance(job, dict):
        return True
    job_id = ids.job_id(str(job.get("namespace")), str(job.get("name")))
    known = visibility.graph.job_record(job_id) is not None
    return visibility.job(job_id) if known else visibility.may_read_dag(None)
