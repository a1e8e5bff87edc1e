"""The lineage graph the queries read: jobs, datasets, directed edges, runs, schema versions, column lineage.

A graph is read from a lineage store's folded state as questions touch it (:mod:`.stored_graph`), or
built from another source's answers (Marquez, :mod:`.marquez`), which say the facts already decided:
no rule of the store's fold is applied here. The records it holds are in :mod:`.runs` and
:mod:`.records`.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass

from airflow_lineage_plus import node_ids as ids
from airflow_lineage_plus.graph import declared, retirement
from airflow_lineage_plus.graph.records import ColumnInput, DatasetRecord, JobRecord
from airflow_lineage_plus.graph.runs import SCHEDULER_SKIP_REASON, UPSTREAM_FAILED_REASON, RunRecord
from airflow_lineage_plus.store.facts import TERMINAL_RANK


@dataclass
class _DagRunSkips:
    job_ids: tuple[str, ...]  # every job the DAG run did not run
    upstream_failed: tuple[str, ...]  # those of them whose upstream failed


class LineageGraph:
    """Directed graph: input dataset -> job -> output dataset, plus per-node history."""

    def __init__(self) -> None:
        self.jobs: dict[str, JobRecord] = {}
        self.datasets: dict[str, DatasetRecord] = {}
        self.succ: dict[str, set[str]] = {}  # edges runs reported
        self.pred: dict[str, set[str]] = {}
        # edges declared ever (:mod:`.declared`); those of a job's latest declaration are shown while it
        # has no run
        self.declared_succ: dict[str, set[str]] = {}
        self.declared_pred: dict[str, set[str]] = {}
        self.runs: dict[str, RunRecord] = {}
        self.children: dict[str, set[str]] = {}  # parent run id -> ids of jobs with a run under it
        # run id -> {(job id, run id or '')} of the upstream job runs its jobDependencies facet names: the
        # task runs whose asset events started an asset-triggered DAG run (:mod:`.triggers`)
        self.triggers: dict[str, set[tuple[str, str]]] = {}
        self.dag_run_skips: dict[str, _DagRunSkips] = {}  # DAG run id -> jobs the scheduler skipped
        self.skipped_by: dict[str, set[str]] = {}  # job id -> DAG run ids that skipped it
        self.edge_first: dict[tuple[str, str], int] = {}  # edge -> earliest time an event reported it
        self.keep_refs = False  # whether runs remember their events' refs (for details)
        #: False when the graph could only approximate what was asked (a source that cannot time-travel)
        self.exact = True
        self.version = 0

    # -- building -------------------------------------------------------------------------------
    def job(self, namespace: str, name: str) -> JobRecord:
        key = ids.job_id(namespace, name)
        record = self.jobs.get(key)
        if record is None:
            record = self.jobs[key] = JobRecord(namespace, name)
        return record

    def dataset(self, namespace: str, name: str) -> DatasetRecord:
        key = ids.dataset_id(namespace, name)
        record = self.datasets.get(key)
        if record is None:
            record = self.datasets[key] = DatasetRecord(namespace, name)
        return record

    def add_edge(self, origin: str, destination: str) -> None:
        out = self.succ.get(origin)
        if out is None:
            out = self.succ[origin] = set()
        out.add(destination)
        into = self.pred.get(destination)
        if into is None:
            into = self.pred[destination] = set()
        into.add(origin)

    def add_run(self, job: JobRecord, run: RunRecord) -> None:
        job.runs.append(run)
        if run.run_id is not None:
            self.runs[run.run_id] = run
        if run.parent_run_id is not None:
            self.children.setdefault(run.parent_run_id, set()).add(job.id)

    def set_dag_run_skips(
        self, dag_run_id: str, skipped: tuple[str, ...], upstream_failed: tuple[str, ...]
    ) -> None:
        """What a DAG run's latest ``tasksState`` says (:func:`~airflow_lineage_plus.store.facts.not_run`):
        ``skipped``, every job it did not run; ``upstream_failed``, those of them whose upstream failed."""
        current = self.dag_run_skips.get(dag_run_id)
        for job_id in current.job_ids if current is not None else ():
            self.skipped_by.get(job_id, set()).discard(dag_run_id)
        self.dag_run_skips[dag_run_id] = _DagRunSkips(skipped, upstream_failed)
        for job_id in skipped:
            self.skipped_by.setdefault(job_id, set()).add(dag_run_id)

    # -- reading (what the queries ask; a graph read from a store loads what they touch) -----------
    def all_runs(self, job: JobRecord) -> Iterator[RunRecord]:
        """The job's runs, plus a SKIPPED (or UPSTREAM_FAILED) run for each DAG run whose tasksState says
        it did not run, when it has no run of its own there."""
        yield from job.runs
        skipped_in = self.skipped_by.get(job.id)
        if not skipped_in:
            return
        ran_in = {run.parent_run_id for run in job.runs}
        for dag_run_id in sorted(skipped_in):
            if dag_run_id in ran_in:
                continue
            dag_run = self.runs.get(dag_run_id)
            synthetic = RunRecord(None, job.id)
            if dag_run is not None:
                synthetic.start, synthetic.end = dag_run.started_at, dag_run.end
                synthetic.dag_id, synthetic.parent_job_id = dag_run.dag_id, dag_run.job_id
            synthetic.rank = TERMINAL_RANK["COMPLETE"]
            synthetic.skipped = True
            skips = self.dag_run_skips.get(dag_run_id)
            synthetic.upstream_failed = skips is not None and job.id in skips.upstream_failed
            synthetic.skip_reason = (
                UPSTREAM_FAILED_REASON if synthetic.upstream_failed else SCHEDULER_SKIP_REASON
            )
            synthetic.parent_run_id = dag_run_id
            yield synthetic

    def state_runs(self, job: JobRecord) -> Iterator[RunRecord]:
        """The runs that decide the job's latest run and current edges: :meth:`all_runs` here; a graph
        that reads a job's newest runs only gives those it read (they decide both)."""
        return self.all_runs(job)

    def dag_runs(self, job: JobRecord) -> tuple[list[RunRecord], frozenset[str]]:
        """What says which DAGs the job's runs belong to: its runs, and the DAG ids of runs not among them
        (none here; a graph that reads a job's newest runs only counts the others' DAGs)."""
        return job.runs, frozenset()

    def newest_runs(
        self,
        job: JobRecord,
        count: int,
        as_of: int | None = None,
        *,
        completed: int | None = None,
        ended_since: int | None = None,
    ) -> list[RunRecord]:
        """The job's runs started at or before ``as_of`` (all: None), newest first: every one here; a
        graph that reads a job's newest runs only may give fewer, never fewer than the newest ``count``
        and than those holding its newest ``completed`` (default ``count``) completed ones, unless
        (``ended_since``, epoch microseconds) none of the runs it leaves out ended at that time or later:
        for a caller that counts only those."""
        return newest_first(self.all_runs(job), as_of)

    def read_refs(self, runs: Iterable[RunRecord]) -> None:
        """Make the ``refs`` of these runs known before they are read (a graph of a store reads them here,
        at once, as few as asked for; a log's graph knows them all)."""

    def latest_run(self, job: JobRecord) -> RunRecord | None:
        """The run that started last."""
        cached = job.latest_cache
        if cached is not None and cached[0] == self.version:
            return cached[1]
        latest = max(self.state_runs(job), key=RunRecord.sort_key, default=None)
        job.latest_cache = (self.version, latest)
        return latest

    def current_io(self, job: JobRecord) -> frozenset[tuple[str, str]] | None:
        """The job's current edges (:func:`.retirement.current_edges`); None when all its edges are."""
        cached = job.current_cache
        if cached is not None and cached[0] == self.version:
            return cached[1]
        current = retirement.current_edges(self.state_runs(job))
        job.current_cache = (self.version, current)
        return current

    def prefetch(self, node_ids: Iterable[str], *, upstream: bool) -> None:
        """The next questions touch these nodes and their neighbours up- or downstream: a graph that reads
        its records as they are touched reads them at once (this one holds everything already)."""

    def prefetch_reach(self, start: str, depth: int, *, upstream: bool, limit: int) -> None:
        """A walk from ``start`` to ``depth`` (of at most ``limit`` nodes) begins: a graph that reads its
        records as they are touched may read at once what the walk may reach (this one holds everything
        already)."""

    def prefetch_records(self, node_ids: Iterable[str], *, runs: int | None = None) -> None:
        """The next questions read these nodes' records: read them at once (see :meth:`prefetch`);
        ``runs``: they read only so many of each job's newest runs (None: as many as usual)."""

    def prefetch_edges(self, node_ids: Iterable[str]) -> None:
        """The next questions read these nodes' edges (:attr:`pred`, :attr:`succ`), not the jobs at their
        other ends: read them at once (see :meth:`prefetch`)."""

    def last_event_times(self, job_ids: Iterable[str]) -> dict[str, int | None]:
        """A time no run of each job starts after (its latest event, or a later skip record: not-run runs
        count), where it is known without reading the job's records; None where it is not."""
        return dict.fromkeys(job_ids)

    def newest_adjacent(
        self, dataset_ids: Iterable[str], *, writers: bool, readers: bool, limit: int
    ) -> dict[str, tuple[list[tuple[str, int | None]], bool]]:
        """{dataset id: ((job id, :meth:`last_event_times` time) of the jobs next to it by an edge a run
        reported, its writers, its readers or both, newest first (an unknown time first, then the latest,
        then by id): at least the ``limit`` first and each as late as the last of them; whether they are
        every job next to it)}. Here every job, read at once; a graph that reads its records as they are
        touched may ask its store for the few that ran last (a source every job reads)."""
        wanted = list(dict.fromkeys(dataset_ids))
        self.prefetch_edges(wanted)
        found = {}
        for dataset_id in wanted:
            jobs = {
                *(self.pred.get(dataset_id, ()) if writers else ()),
                *(self.succ.get(dataset_id, ()) if readers else ()),
            }
            found[dataset_id] = (latest_first(self.last_event_times(jobs)), True)
        return found

    def load_triggers(self, run_ids: Iterable[str]) -> None:
        """The next questions read the triggers of these runs (:attr:`triggers`), and the upstream runs
        and jobs they name: a graph that reads its records as they are touched reads them at once."""

    # -- questions about every node (a graph that reads records as touched finds the few they need) --
    def all_job_ids(self) -> list[str]:
        """The id of every job, sorted (a graph that reads its records as they are touched asks its
        store, without reading them)."""
        return sorted(self.jobs)

    def run_dag_ids(self, job_ids: Iterable[str]) -> dict[str, frozenset[str]]:
        """The DAG ids the runs of each of these jobs name themselves (not those a run without one
        inherits from its parent: :mod:`.visibility`); a job with none, or not in the graph, is left
        out."""
        found = {}
        for job_id in job_ids:
            job = self.job_record(job_id)
            dags = frozenset(run.dag_id for run in job.runs if run.dag_id is not None) if job else None
            if dags:
                found[job_id] = dags
        return found

    def run_times(self, job_ids: Iterable[str]) -> tuple[int | None, int | None]:
        """The earliest and the latest first event, start or end time of these jobs' runs, not-run runs
        included (:meth:`all_runs`); ``(None, None)`` when they have none."""
        return time_span(
            moment
            for job_id in job_ids
            if (job := self.job_record(job_id)) is not None
            for run in self.all_runs(job)
            for moment in (run.first_seen, run.start, run.end)
        )

    def maybe_failed_job_ids(self) -> list[str]:
        """Ids of the jobs whose latest run may have FAILED or ABORTED (every job here; a graph that reads
        its records as they are touched gives fewer, never leaving one out): the caller decides by
        :meth:`latest_run`."""
        return sorted(self.jobs)

    def job_ids_with_slo(self) -> list[str]:
        """Ids of the jobs with a freshness target (``slo_minutes``), sorted."""
        return sorted(job.id for job in self.jobs.values() if job.slo_minutes is not None)

    def written_since(self, since: int, limit: int) -> list[str]:
        """Ids of up to ``limit`` datasets last written at or after ``since`` (epoch microseconds),
        newest first."""
        found = [
            (record.write_time, node_id)
            for node_id, record in self.datasets.items()
            if record.write_ref is not None and record.write_time >= since  # (never written: no ref)
        ]
        found.sort(key=lambda item: (-item[0], item[1]))
        return [node_id for _, node_id in found[:limit]]

    def has_node(self, node_id: str) -> bool:
        return node_id in self.jobs or node_id in self.datasets

    def job_record(self, node_id: str) -> JobRecord | None:
        return self.jobs.get(node_id)

    def dataset_record(self, node_id: str) -> DatasetRecord | None:
        return self.datasets.get(node_id)

    def neighbours(
        self, node_id: str, *, upstream: bool, retired: bool = False, declared_too: bool = True
    ) -> list[tuple[str, str]]:
        """(neighbour, edge state) of ``node_id`` one edge up- or downstream: the edges runs reported,
        current or (only when ``retired``) retired (:mod:`.retirement`), and (``declared_too``) the
        declared edges of jobs that have not run (:mod:`.declared`)."""
        found = []
        for other in (self.pred if upstream else self.succ).get(node_id, ()):
            state = self.edge_state((other, node_id) if upstream else (node_id, other))
            if retired or state != retirement.RETIRED:
                found.append((other, state))
        if declared_too:
            found.extend(self.declared_neighbours(node_id, upstream=upstream, known={o for o, _ in found}))
        return found

    def declared_neighbours(self, node_id: str, *, upstream: bool, known: set[str]) -> list[tuple[str, str]]:
        """(neighbour, DECLARED) one declared edge away, of jobs whose latest declaration has that edge
        and that have not run; neighbours in ``known`` left out."""
        found = []
        for other in (self.declared_pred if upstream else self.declared_succ).get(node_id, ()):
            if other in known:
                continue
            edge = (other, node_id) if upstream else (node_id, other)
            job = self.job_record(edge[0] if edge[0].startswith("job:") else edge[1])
            if job is None or job.declared is None or edge not in job.declared[1]:
                continue
            if not self.has_run(job):
                found.append((other, declared.DECLARED))
        return found

    def edge_state(self, edge: tuple[str, str]) -> str:
        """CURRENT or RETIRED, for an edge a run reported (:mod:`.retirement`)."""
        job = self.jobs.get(edge[0]) or self.jobs.get(edge[1])
        current = self.current_io(job) if job is not None else None
        return retirement.RETIRED if current is not None and edge not in current else declared.CURRENT

    def has_run(self, job: JobRecord) -> bool:
        """Whether a run of the job was reported (a job the scheduler only skipped has none)."""
        return bool(job.runs)

    def child_jobs(self, run_id: str) -> set[str]:
        """Ids of the jobs with a run whose parent run is ``run_id`` (:mod:`.ancestry`)."""
        return self.children.get(run_id, set())

    def jobs_of_run(self, run_id: str) -> list[str]:
        """Ids of the jobs that hold the run: its job, or none when the graph does not know it."""
        run = self.runs.get(run_id)
        return [run.job_id] if run is not None else []

    def declared_only(self, job: JobRecord) -> bool:
        """Whether the job is known only from its declaration: it has not run yet."""
        return job.declared is not None and not self.has_run(job)

    def column_inputs(self, dataset_id: str, column: str) -> tuple[ColumnInput, ...]:
        record = self.dataset_record(dataset_id)
        return record.columns.get(column, ()) if record is not None else ()

    def column_readers_of(self, dataset_id: str, column: str) -> set[tuple[str, str]]:
        """The columns whose current lineage reads ``column``: of the candidates
        (:meth:`_column_candidates`), those whose dataset's column lineage names it."""
        found = set()
        for reader, reader_column in self._column_candidates(dataset_id, column):
            record = self.dataset_record(reader)
            if record is None:
                continue
            for namespace, name, field, _ in record.columns.get(reader_column, ()):
                if ids.dataset_id(namespace, name) == dataset_id and field == column:
                    found.add((reader, reader_column))
        return found

    def _column_candidates(self, dataset_id: str, column: str) -> list[tuple[str, str]]:
        """(dataset id, column) that may read ``column``: every column of the graph here; a graph read
        from a store asks it for those whose lineage ever did."""
        return [(record.id, reader) for record in self.datasets.values() for reader in record.columns]


def newest_first(runs: Iterable[RunRecord], as_of: int | None = None) -> list[RunRecord]:
    """``runs`` started at or before ``as_of`` (all: None), newest first."""
    started = (r for r in runs if as_of is None or (r.started_at or 0) <= as_of)
    return sorted(started, key=RunRecord.sort_key, reverse=True)


def time_span(moments: Iterable[int | None]) -> tuple[int | None, int | None]:
    """The earliest and the latest of ``moments`` (None skipped); ``(None, None)`` when none is known."""
    known = [moment for moment in moments if moment is not None]
    return min(known, default=None), max(known, default=None)


def latest_first(times: Mapping[str, int | None]) -> list[tuple[str, int | None]]:
    """(job id, time) of jobs by the time no run of theirs starts after: unknown first, then the latest,
    then by id."""
    return sorted(times.items(), key=lambda item: (item[1] is not None, -(item[1] or 0), item[0]))
