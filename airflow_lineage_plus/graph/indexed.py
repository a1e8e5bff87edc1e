"""A lineage graph opened from an index (:mod:`.snapshot`), then kept up to date with appended events.

Opening reads the list of node ids only. A node's record is read the first time anything asks for it
(its job or dataset record, its edges, the first time each edge was seen, its column readers), so a
question costs the few nodes it touches, whatever the size of the log. A job's record carries, instead of
every run, a summary of its runs: its latest run, the sort key of its latest completed run, its current
edges (:mod:`.retirement`) and the sort key of its newest run.

Events appended after the snapshot are folded in as usual; a job's answers then come from its summary
merged with its new runs, which is exact because the summary keeps what the rules need:

* latest run: the newer of the summary's and the new runs';
* current edges: while the latest completed run is the summary's, its current edges plus those of new runs
  at least as new; when a new run completed and is newer than every run of the snapshot, the edges of the
  new runs from it on.

Anything else, such as an appended event of a run that began before the snapshot (found in the index's
run table), a new completed run older than some run of the snapshot, or a change to a DAG run that
skipped the job, makes the job *materialize*: its runs are folded again from its events (their places
are in the index), and from then on it is an ordinary job of the graph.
"""

from __future__ import annotations

import itertools
import marshal
import operator
from array import array
from collections.abc import Callable, Iterable, Iterator, Sequence
from pathlib import Path
from typing import Any

from airflow_lineage_plus.graph import retirement, snapshot
from airflow_lineage_plus.graph import wire as w
from airflow_lineage_plus.graph.focus import FocusedGraph, GraphCatalog
from airflow_lineage_plus.graph.model import LineageGraph, _DagRunSkips
from airflow_lineage_plus.graph.records import _DATASET_STATE, DatasetRecord, JobRecord
from airflow_lineage_plus.graph.runs import _RUN_STATE, RunRecord
from airflow_lineage_plus.graph.snapshot import RunTable, Snapshot, run_hash
from airflow_lineage_plus.graph.visibility import Visibility

Key = tuple[int, str]
Edges = frozenset[tuple[str, str]]
_DATASET_VALUES = len(_DATASET_STATE)


class JobSummary:
    """What the snapshot knew of a job's runs (see the module docstring)."""

    __slots__ = ("completed", "current", "dags", "latest", "newest", "ran", "stale")

    def __init__(
        self,
        latest: RunRecord | None,
        completed: Key | None,
        current: Edges | None,
        newest: Key | None,
        ran: bool,
        dags: frozenset[str | None],
    ) -> None:
        self.latest = latest
        self.completed = completed
        self.current = current
        self.newest = newest
        self.ran = ran  # whether a run of the job was reported (:meth:`LineageGraph.has_run`)
        self.dags = dags  # the DAGs its runs belong to (:meth:`.visibility.Visibility.runs_dags`)
        self.stale = False  # a DAG run that skipped the job changed: its runs must be folded again


class _Lazy(dict):  # type: ignore[type-arg]
    """A dict of the graph whose entries are read from the snapshot on first use: ``node_of`` names the
    node whose record holds a key; a full scan (iteration, length) reads every node of ``kind`` first."""

    def __init__(self, graph: IndexedGraph, node_of: Callable[[Any], str | None], kind: str = "") -> None:
        super().__init__()
        self.graph, self.node_of, self.kind = graph, node_of, kind

    def _ensure(self, key: Any) -> None:
        node = self.node_of(key)
        if node is not None:
            self.graph.load_node(node)

    def __missing__(self, key: Any) -> Any:
        self._ensure(key)
        if dict.__contains__(self, key):
            return dict.__getitem__(self, key)
        raise KeyError(key)

    def get(self, key: Any, default: Any = None) -> Any:
        if not dict.__contains__(self, key):
            self._ensure(key)
        return dict.get(self, key, default)

    def __contains__(self, key: object) -> bool:
        if dict.__contains__(self, key):
            return True
        self._ensure(key)
        return dict.__contains__(self, key)

    def setdefault(self, key: Any, default: Any = None) -> Any:
        if not dict.__contains__(self, key):
            self._ensure(key)
        return dict.setdefault(self, key, default)

    def _all(self) -> None:
        self.graph.load_all(self.kind)

    def __iter__(self) -> Iterator[Any]:
        self._all()
        return dict.__iter__(self)

    def __len__(self) -> int:
        self._all()
        return dict.__len__(self)

    def keys(self) -> Any:
        self._all()
        return dict.keys(self)

    def values(self) -> Any:
        self._all()
        return dict.values(self)

    def items(self) -> Any:
        self._all()
        return dict.items(self)


def _node(key: Any) -> str | None:
    return key if isinstance(key, str) else None


def _edge_job(edge: Any) -> str | None:
    return edge[0] if str(edge[0]).startswith("job:") else edge[1]


def _column_dataset(key: Any) -> str | None:
    return key[0] if isinstance(key, tuple) else None


class IndexedGraph(LineageGraph):
    """The graph of an index plus the events appended since (see the module docstring)."""

    def __init__(self, snapshot: Snapshot, log_path: Path) -> None:
        super().__init__()
        self.snapshot = snapshot
        self.log_path = log_path
        self.positions: dict[str, int] = {}  # node id -> position in the snapshot, for nodes read
        self._position_of: dict[str, int] | None = None  # every node's, once asked for a job's latest time
        self.read_nodes: set[str] = set()
        self.read_kinds: set[str] = set()
        self.jobs = _Lazy(self, _node, "job:")
        self.datasets = _Lazy(self, _node, "dataset:")
        self.pred, self.succ = _Lazy(self, _node), _Lazy(self, _node)
        self.declared_pred, self.declared_succ = _Lazy(self, _node), _Lazy(self, _node)
        self.edge_first = _Lazy(self, _edge_job)
        self.skipped_by = _Lazy(self, _node)
        self.column_readers = _Lazy(self, _column_dataset)
        self.column_readers_ever = _Lazy(self, _column_dataset)
        self.version = snapshot.header.get("version", 0)
        self.first_time, self.last_time = snapshot.header.get("times", (None, None))

    # -- reading the snapshot -------------------------------------------------------------------
    def load_node(self, node_id: str) -> None:
        """Read the node's record into the graph (once; nothing for a node the snapshot lacks)."""
        if node_id in self.read_nodes:
            return
        self.read_nodes.add(node_id)
        position = self.snapshot.position(node_id)
        if position < 0:
            return
        self.positions[node_id] = position
        record = self.snapshot.record(position)
        if record[0] == "J":
            self._put_job(node_id, record)
        else:
            self._put_dataset(node_id, record)

    def load_all(self, kind: str) -> None:
        """Read every node (of ``kind``, a node id prefix)."""
        if kind in self.read_kinds or "" in self.read_kinds:
            return
        self.read_kinds.add(kind)
        for node_id in self.snapshot.ids():
            if node_id.startswith(kind) and node_id not in self.read_nodes:
                self.load_node(node_id)

    def _put_job(self, node_id: str, record: tuple[Any, ...]) -> None:
        (_, namespace, name, owners, owners_key, ref, ref_time, latest, completed, current, newest) = record[
            :11
        ]
        pred, succ, first, skipped_by, dag_skips, declared, slo, ran, declared_edges, dags = record[11:]
        job = JobRecord(namespace, name)
        job.owners, job.owners_key, job.ref, job.ref_time = owners, owners_key, ref, ref_time
        job.declared, (job.slo_minutes, job.slo_key) = declared, slo
        restored = RunRecord.restore(latest) if latest else None
        job.summary = JobSummary(restored, completed, current, newest, ran, dags)
        job.sources, job.targets = set(pred), set(succ)
        dict.__setitem__(self.jobs, node_id, job)
        self._put_edges(node_id, pred, succ, declared_edges)
        dict.update(self.edge_first, first)
        if skipped_by:
            dict.__setitem__(self.skipped_by, node_id, set(skipped_by))
        for dag_run_id, (key, job_ids, upstream_failed) in dag_skips.items():
            self.dag_run_skips[dag_run_id] = _DagRunSkips(key, job_ids, upstream_failed, node_id)

    def _put_dataset(self, node_id: str, record: tuple[Any, ...]) -> None:
        values = record[1 : 1 + _DATASET_VALUES]
        dataset_refs, pred, succ, readers, readers_ever, declared_edges = record[1 + _DATASET_VALUES :]
        dataset = DatasetRecord.restore(values)
        dataset.columns, dataset.columns_key = values[7], values[8]
        dataset.dataset_refs = list(dataset_refs)
        dict.__setitem__(self.datasets, node_id, dataset)
        self._put_edges(node_id, pred, succ, declared_edges)
        for column, found in readers.items():
            dict.__setitem__(self.column_readers, (node_id, column), set(found))
        for column, found in readers_ever.items():
            dict.__setitem__(self.column_readers_ever, (node_id, column), set(found))

    def _put_edges(
        self, node_id: str, pred: Sequence[str], succ: Sequence[str], declared: Sequence[Sequence[str]]
    ) -> None:
        """The node's edges (and, ``declared``, its (pred, succ) declared ever) into the lazy dicts."""
        for adjacency, found in zip(
            (self.pred, self.succ, self.declared_pred, self.declared_succ),
            (pred, succ, *declared),
            strict=True,
        ):
            if found:
                dict.__setitem__(adjacency, node_id, set(found))

    # -- folding appended events ----------------------------------------------------------------
    def apply(self, event: w.Event, micros: int, ref: int) -> None:
        event_run = event.run
        if event_run is not None and event_run.runId not in self.runs:
            for job_id in self.jobs_of_run(event_run.runId):  # a run that began before the snapshot
                self.materialize(self.jobs[job_id])
        super().apply(event, micros, ref)
        if event_run is None or event.job is None:
            return
        run = self.runs.get(event_run.runId)
        job = self.jobs.get(run.job_id) if run is not None else None
        if (
            run is not None
            and job is not None
            and job.summary is not None
            and run.parent_run_id in self.skipped_by.get(job.id, ())
        ):
            job.summary.stale = True  # it ran in a DAG run that had it skipped
        skips = self.dag_run_skips.get(event_run.runId)
        if skips is not None:  # the DAG run's times changed: so did those of its skipped jobs
            self._stale(skips.job_ids)

    def set_dag_run_skips(
        self,
        dag_run_id: str,
        key: tuple[int, tuple[str, ...], tuple[str, ...]],
        skipped: tuple[str, ...],
        upstream_failed: tuple[str, ...] = (),
        dag_job: str = "",
    ) -> None:
        before = self.dag_run_skips.get(dag_run_id)
        super().set_dag_run_skips(dag_run_id, key, skipped, upstream_failed, dag_job)
        if self.dag_run_skips.get(dag_run_id) is not before:
            self._stale((*(before.job_ids if before is not None else ()), *skipped))

    def _stale(self, job_ids: Iterable[str]) -> None:
        for job_id in job_ids:
            job = self.jobs.get(job_id)
            if job is not None and job.summary is not None:
                job.summary.stale = True

    def materialize(self, job: JobRecord) -> None:
        """Fold the job's runs again from all its events; from then on its runs are all in the graph."""
        if job.summary is None:
            return
        job.summary = None
        focused = FocusedGraph(IndexCatalog(self), self.log_path)
        focused.keep_refs = False
        focused.ensure_jobs((job.id,), with_dags=False)
        folded = focused.jobs.get(job.id)
        for run in job.runs:
            if run.run_id is not None:
                self.runs.pop(run.run_id, None)
        job.runs = []
        for run in folded.runs if folded is not None else ():
            if run.job_id != job.id:
                continue
            run.io = job.shared_io(run.io)
            job.runs.append(run)
            if run.run_id is not None:
                self.runs[run.run_id] = run
        job.latest_cache = job.current_cache = None
        self.version += 1

    def _dag_runs_of(self, job: JobRecord) -> None:
        """The DAG runs that skipped the job, in the graph (their times are the skipped runs' times)."""
        for dag_run_id in self.skipped_by.get(job.id, ()):
            if dag_run_id not in self.runs:
                for job_id in self.jobs_of_run(dag_run_id):
                    self.materialize(self.jobs[job_id])

    # -- reading --------------------------------------------------------------------------------
    def indexed_dags(self, job: JobRecord) -> frozenset[str | None]:
        summary: JobSummary | None = job.summary
        return summary.dags if summary is not None else frozenset()

    def has_run(self, job: JobRecord) -> bool:
        summary: JobSummary | None = job.summary
        return bool(job.runs) or (summary is not None and summary.ran)

    def _summary(self, job: JobRecord) -> JobSummary | None:
        summary: JobSummary | None = job.summary
        if summary is not None and summary.stale:
            self.materialize(job)
            return None
        return summary

    def all_runs(self, job: JobRecord) -> Iterator[RunRecord]:
        self.materialize(job)
        self._dag_runs_of(job)
        yield from super().all_runs(job)

    def latest_run(self, job: JobRecord) -> RunRecord | None:
        summary = self._summary(job)
        if summary is None:
            self._dag_runs_of(job)
            return super().latest_run(job)
        candidates = [run for run in (summary.latest, *job.runs) if run is not None]
        return max(candidates, key=RunRecord.sort_key, default=None)

    def completed_key(self, job: JobRecord) -> Key | None:
        summary = self._summary(job)
        if summary is None:
            return super().completed_key(job)
        return _newest(summary.completed, _completed(job.runs))

    def current_io(self, job: JobRecord) -> Edges | None:
        summary = self._summary(job)
        if summary is None:
            self._dag_runs_of(job)
            return super().current_io(job)
        tail = _completed(job.runs)
        if tail is None or (summary.completed is not None and tail < summary.completed):
            if summary.completed is None or summary.current is None:
                return None
            return summary.current | _io_from(job.runs, summary.completed)
        if summary.newest is not None and tail <= summary.newest:
            self.materialize(job)  # a snapshot run may be newer than the new latest completed one
            return super().current_io(job)
        return _io_from(job.runs, tail)

    def child_jobs(self, run_id: str) -> set[str]:
        """The snapshot's (its ``children`` table; a hash collision may name one job too many, which
        :func:`.ancestry.child_runs` drops) and the appended events'."""
        node_ids = self.snapshot.ids()
        return {node_ids[at] for at in self.snapshot.jobs_under_run(run_id)} | super().child_jobs(run_id)

    def run_of(self, job: JobRecord, run_id: str) -> RunRecord | None:
        """The summary's latest run when it is that run (the usual parent: the run that ran a job's latest
        run is mostly its job's latest too), else the run among the job's runs, folded again."""
        summary = self._summary(job)
        if summary is not None and summary.latest is not None and summary.latest.run_id == run_id:
            return summary.latest
        if summary is not None and run_id not in self.runs:
            self.materialize(job)
        run = self.runs.get(run_id)
        return run if run is not None and run.job_id == job.id else None

    def refs_of(self, job_id: str) -> array:
        """Every event of the job: the snapshot's, then the appended ones."""
        job = self.jobs.get(job_id)
        position = self.positions.get(job_id)
        refs = self.snapshot.refs(position) if position is not None else array("Q")
        if job is not None:
            refs.extend(job.refs)
        return refs

    def last_event_time(self, job_id: str) -> int | None:
        """The time of the job's latest event, from its snapshot record without reading the record into
        the graph (a job with appended events has been read: its record has them)."""
        if dict.__contains__(self.jobs, job_id):
            job: JobRecord = dict.__getitem__(self.jobs, job_id)
            return job.ref_time
        if self._position_of is None:  # a source read by every job asks this of thousands at once
            self._position_of = {node_id: at for at, node_id in enumerate(self.snapshot.ids())}
        position = self._position_of.get(job_id, -1)
        if position < 0:
            return None
        record = self.snapshot.record(position)
        return int(record[6]) if record[0] == "J" else None

    def jobs_of_run(self, run_id: str) -> list[str]:
        """Ids of the jobs that may hold the run."""
        run = self.runs.get(run_id)
        if run is not None:
            return [run.job_id]
        node_ids = self.snapshot.ids()
        return [node_ids[position] for position in self.snapshot.jobs_of_run(run_id)]

    def node_ids(self, kind: str = "") -> list[str]:
        """Every node id (of ``kind``, an id prefix), without reading their records."""
        known = set(self.snapshot.ids())
        new = [key for key in (*dict.keys(self.jobs), *dict.keys(self.datasets)) if key not in known]
        return [node_id for node_id in (*known, *new) if node_id.startswith(kind)]


def _completed(runs: Iterable[RunRecord]) -> Key | None:
    return max((run.sort_key() for run in runs if run.state == "COMPLETED"), default=None)


def _newest(a: Key | None, b: Key | None) -> Key | None:
    return b if a is None else a if b is None else max(a, b)


def _io_from(runs: Iterable[RunRecord], key: Key) -> Edges:
    found: set[tuple[str, str]] = set()
    for run in runs:
        if run.sort_key() >= key:
            found |= run.io
    return frozenset(found)


class IndexCatalog(GraphCatalog):
    """Where each node's events are, for an :class:`IndexedGraph` (the snapshot's and the appended)."""

    graph: IndexedGraph

    def job_refs(self, job_id: str) -> Sequence[int]:
        return self.graph.refs_of(job_id)

    def last_event_time(self, job_id: str) -> int | None:
        return self.graph.last_event_time(job_id)


# -- writing -------------------------------------------------------------------------------------
def _job_record(graph: LineageGraph, job: JobRecord, dag_skips: dict[str, Any], dags: Visibility) -> bytes:
    job_id = job.id
    pred, succ = sorted(graph.pred.get(job_id, ())), sorted(graph.succ.get(job_id, ()))
    edges = [(d, job_id) for d in pred] + [(job_id, d) for d in succ]
    first = {edge: graph.edge_first[edge] for edge in edges if edge in graph.edge_first}
    owners = (job.owners, job.owners_key, job.ref, job.ref_time)
    skipped_by = tuple(sorted(graph.skipped_by.get(job_id, ())))
    summary = _job_summary(graph, job)
    declared = (
        job.declared,
        (job.slo_minutes, job.slo_key),
        graph.has_run(job),
        _declared_edges(graph, job_id),
        dags.runs_dags(job_id),
    )
    return marshal.dumps(
        ("J", job.namespace, job.name, *owners, *summary, pred, succ, first, skipped_by, dag_skips, *declared)
    )


def _job_summary(graph: LineageGraph, job: JobRecord) -> tuple[Any, ...]:
    """What an index keeps of the job's runs: (latest run, latest completed run's key, current edges,
    newest run's key)."""
    if isinstance(graph, IndexedGraph):  # the index's summary with the appended runs
        latest = graph.latest_run(job)
        if latest is None:
            return (None, None, graph.current_io(job), None)
        values = list(operator.attrgetter(*_RUN_STATE)(latest))
        values[_RUN_STATE.index("refs")] = []
        return (tuple(values), graph.completed_key(job), graph.current_io(job), latest.sort_key())
    runs = list(graph.all_runs(job))  # a whole fold: one pass over the job's runs (a year: thousands)
    if not runs:
        return (None, None, None, None)
    keys = list(map(RunRecord.sort_key, runs))
    latest_at = keys.index(max(keys))  # the first of equals, as latest_run
    completed = retirement.latest_completed_key(runs, keys)
    values = list(operator.attrgetter(*_RUN_STATE)(runs[latest_at]))
    values[_RUN_STATE.index("refs")] = []
    current = retirement.current_edges_by_key(runs, keys, completed)
    return (tuple(values), completed, current, keys[latest_at])


def _declared_edges(graph: LineageGraph, node_id: str) -> tuple[list[str], list[str]]:
    """The node's (upstream, downstream) neighbours over edges ever declared."""
    return (sorted(graph.declared_pred.get(node_id, ())), sorted(graph.declared_succ.get(node_id, ())))


def _dataset_record(graph: LineageGraph, record: DatasetRecord, columns: Iterable[str]) -> bytes:
    dataset_id = record.id
    readers, ever = {}, {}
    for column in columns:
        found = graph.column_readers.get((dataset_id, column))
        if found:
            readers[column] = tuple(sorted(found))
        found = graph.column_readers_ever.get((dataset_id, column))
        if found:
            ever[column] = tuple(sorted(found))
    pred, succ = sorted(graph.pred.get(dataset_id, ())), sorted(graph.succ.get(dataset_id, ()))
    values = operator.attrgetter(*_DATASET_STATE)(record)
    declared = _declared_edges(graph, dataset_id)
    return marshal.dumps(("D", *values, tuple(record.dataset_refs), pred, succ, readers, ever, declared))


def _grouped(graph: LineageGraph) -> tuple[dict[str, dict[str, Any]], dict[str, set[str]]]:
    """The scheduler's skips by DAG job, and the columns read from each dataset."""
    dag_skips: dict[str, dict[str, Any]] = {}
    for dag_run_id, skips in dict.items(graph.dag_run_skips):
        found = (skips.key, skips.job_ids, skips.upstream_failed)
        dag_skips.setdefault(skips.dag_job, {})[dag_run_id] = found
    columns: dict[str, set[str]] = {}
    for readers in (graph.column_readers, graph.column_readers_ever):
        for dataset_id, column in dict.keys(readers):
            columns.setdefault(dataset_id, set()).add(column)
    return dag_skips, columns


def save(path: Path, graph: LineageGraph, header: dict[str, Any]) -> None:
    """Write ``graph`` (folded from a whole log, or an :class:`IndexedGraph` with appended events) as
    an index (:mod:`.snapshot`). Nodes of an index that were never read are copied as they are."""
    dag_skips, columns = _grouped(graph)
    indexed = graph if isinstance(graph, IndexedGraph) else None
    if indexed is not None:
        base = indexed.snapshot
        old = base.ids()
        known = set(old)
        node_ids = old + sorted(
            k for k in (*dict.keys(graph.jobs), *dict.keys(graph.datasets)) if k not in known
        )
        table, children = base.table("runs"), base.table("children")
    else:
        node_ids = sorted((*graph.jobs, *graph.datasets))
        table, children = RunTable.empty(0), RunTable.empty(0)  # filled at once below
    position = {node_id: at for at, node_id in enumerate(node_ids)}
    # arrays filled from generators: a list of millions of ints first would cost ~40 bytes each
    runs = graph.runs
    job_ids = operator.attrgetter("job_id")
    table.add_all(
        array("Q", map(run_hash, runs)), array("I", map(position.__getitem__, map(job_ids, runs.values())))
    )
    if indexed is None:  # a whole fold: its children map holds each (parent run, job) once
        parents, jobs_under = array("Q"), array("I")
        for parent, jobs in graph.children.items():
            parents.extend(itertools.repeat(run_hash(parent), len(jobs)))
            jobs_under.extend(map(position.__getitem__, jobs))
        children.add_all(parents, jobs_under, distinct=True)
    else:  # the appended runs
        children.add_all(
            array("Q", (run_hash(r.parent_run_id) for r in runs.values() if r.parent_run_id is not None)),
            array("I", (position[r.job_id] for r in runs.values() if r.parent_run_id is not None)),
        )

    dags = Visibility(graph, lambda _: True)  # which DAGs each job's runs belong to

    def nodes() -> Iterator[tuple[str, bytes, array]]:
        for at, node_id in enumerate(node_ids):
            if indexed is not None and at < len(old) and node_id not in indexed.read_nodes:
                yield node_id, indexed.snapshot.record_bytes(at), indexed.snapshot.refs(at)
            elif node_id.startswith("job:"):
                job = graph.jobs[node_id]
                refs = indexed.refs_of(node_id) if indexed is not None else job.refs
                yield node_id, _job_record(graph, job, dag_skips.get(node_id, {}), dags), refs
            else:
                record = graph.datasets[node_id]
                yield node_id, _dataset_record(graph, record, columns.get(node_id, ())), array("Q")

    header = {**header, "version": graph.version, "times": (graph.first_time, graph.last_time)}
    snapshot.write(path, header, nodes(), {"runs": table, "children": children})
