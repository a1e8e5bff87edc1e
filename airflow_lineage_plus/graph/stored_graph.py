"""A lineage graph read from a store's folded state, as the questions touch it.

Nothing is folded here: the store's writes folded every event (:mod:`airflow_lineage_plus.store.fold`),
and a :class:`StoredGraph` reads the records of the nodes a question touches (a job with its runs, a
dataset with its schemas, the edges next to a node) the first time they are touched, a batch at a time
(:class:`~airflow_lineage_plus.store.folded.FoldedState`). One is made per question, so what it read stays
consistent for the question, and the next one sees what was written since.

A job's newest :data:`RUN_WINDOW` runs are read at first (more, :data:`GROWTH` times as many, until one
of them completed, or when a question asks for more: :meth:`~.model.LineageGraph.newest_runs`); what
needs every run reads the rest when it asks (:meth:`StoredGraph.all_runs`), so a question costs the same
after a year of hourly runs as after a day (docs/graph.md, "A job's newest runs"). A *scratch* store holds
the folded state of events kept elsewhere (a log given to ``--events``, the events up to a past time),
folded into it before they are read (the hooks ``_prepare_*``, which :class:`~.focus.FocusedGraph` fills).
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence

import orjson

from airflow_lineage_plus.graph import retirement, stored_rows
from airflow_lineage_plus.graph.catalog import Catalog, StoreCatalog
from airflow_lineage_plus.graph.model import LineageGraph, latest_first, newest_first, time_span
from airflow_lineage_plus.graph.records import DatasetRecord, JobRecord
from airflow_lineage_plus.graph.runs import RunRecord
from airflow_lineage_plus.graph.stored_rows import LazyRecords
from airflow_lineage_plus.store import LineageStore
from airflow_lineage_plus.store import facts as f
from airflow_lineage_plus.store.folded import FoldedState, Run, RunIo
from airflow_lineage_plus.store.reach import reach

#: a job's newest runs a question reads at first (more when it asks): enough for its latest run, its
#: current edges and a history of 2 x 7 + 1 runs (what-changed's default baseline) with one to spare
RUN_WINDOW = 16
#: when a question needs more of a job's runs than were read, this many times as many are read
GROWTH = 4
#: a walk reaching at most this many nodes by the store's edges has their records read at once
REACH_AT_ONCE = 2_000


class StoredGraph(LineageGraph):
    """The graph of a store's folded state, read where questions look (see the module docstring).

    ``keep_refs``: runs know where their events are (for details and run histories), read when asked
    (:meth:`read_refs`)."""

    #: the newest runs of a job read at first (:data:`RUN_WINDOW`)
    run_window = RUN_WINDOW

    def __init__(self, store: LineageStore, *, keep_refs: bool = False) -> None:
        super().__init__()
        self.store = store
        self.state = FoldedState(store)
        self.keep_refs = keep_refs
        #: where the store's nodes' events are (what a question about the past folds)
        self.catalog: Catalog = StoreCatalog(store)
        self.jobs = LazyRecords(self.load_jobs)
        self.datasets = LazyRecords(self.load_datasets)
        self.runs = LazyRecords(self.load_runs)
        self._jobs_read: set[str] = set()
        self._datasets_read: set[str] = set()
        self._edges_read: set[str] = set()
        self._writers_read: set[str] = set()  # datasets whose writers' edges are read (not the readers')
        self._runs_read: set[str] = set()
        self._children_read: set[str] = set()
        self._io_read: set[str] = set()
        self._refs_read: set[str] = set()
        self._triggers_read: set[str] = set()
        self._reached: set[tuple[str, int, bool, int]] = set()  # the walks whose reach was read
        #: jobs whose older runs are not read: the start (else first event) time their read runs begin at
        self._partial: dict[str, int] = {}
        #: of each such job, how many of its newest runs were asked for
        self._windows: dict[str, int] = {}
        #: of such jobs, (t, s): no run of theirs started before s ended at t or later (:meth:`note_ended`)
        self._quiet: dict[str, tuple[int, int]] = {}
        #: (dataset, writers, readers) -> what :meth:`newest_adjacent` found
        self._adjacent: dict[tuple[str, bool, bool], tuple[list[tuple[str, int | None]], bool]] = {}
        #: how many runs of such a job name each DAG id (:meth:`dag_runs`)
        self._dag_counts: dict[str, dict[str | None, int]] = {}

    # -- hooks of a scratch store: fold what the nodes need before reading them ---------------------
    def _prepare_jobs(self, job_ids: list[str]) -> None:
        """Make the folded state of these jobs complete (a scratch store folds their events here)."""

    def _prepare_datasets(self, dataset_ids: list[str]) -> None:
        """Make the folded state of these datasets complete."""

    def _prepare_edges(self, node_ids: list[str]) -> None:
        """Make the edges of these nodes, and the jobs at their other ends, complete."""

    def _prepare_writers(self, dataset_ids: list[str]) -> None:
        """Make the edges into these datasets, and the jobs that write them, complete."""

    def _prepare_children(self, run_ids: list[str]) -> None:
        """Make the runs whose parent is one of these complete."""

    # -- reading records ----------------------------------------------------------------------------
    def load_jobs(self, job_ids: Iterable[str], window: int | None = None) -> None:
        """Read the jobs not read yet: each with its newest ``window`` runs (default :attr:`run_window`;
        more until one completed: see the module docstring) and the DAG runs that skipped it."""
        wanted = [j for j in dict.fromkeys(job_ids) if j not in self._jobs_read and j.startswith("job:")]
        if not wanted:
            return
        self._prepare_jobs(wanted)
        self._jobs_read.update(wanted)
        with self.state.batch():
            nodes = self.state.nodes(wanted)
            self._add_edges(self.state.edges(nodes))  # a job's edges are its own facts
            self._edges_read.update(nodes)
            keys = {}
            for job_id, (node, facts) in nodes.items():
                job = JobRecord(node.namespace, node.name)
                stored_rows.job_facts(job, facts)
                dict.__setitem__(self.jobs, job_id, job)
                keys[node.node_key] = job_id
            window = window or self.run_window
            rows, partial = self.state.newest_job_runs(keys, window)
            self._add_runs(self._run_records(rows, keys))
            self._partial.update((keys[key], since) for key, since in partial.items())
            self._windows.update((keys[key], window) for key in partial)
            # its current edges start at its latest completed run: read more runs until one is read
            while waiting := [
                job_id
                for job_id in keys.values()
                if job_id in self._partial
                and not any(run.completed for run in dict.__getitem__(self.jobs, job_id).runs)
            ]:
                window *= GROWTH
                self._read_rest(waiting, window)
            self._read_io([self.jobs[job_id] for job_id in keys.values()])
            self._skips(keys)

    def _read_rest(self, job_ids: list[str], window: int | None = None) -> None:
        """Read every run of these jobs, or their newest ``window`` (those read already stay the same
        objects)."""
        wanted = [job_id for job_id in job_ids if self._partial.pop(job_id, None) is not None]
        if not wanted:
            return
        keys = {f.key_of(job_id): job_id for job_id in wanted}
        with self.state.batch():
            partial: dict[int, int] = {}
            if window is None:
                rows = self.state.job_runs(keys)
            else:
                rows, partial = self.state.newest_job_runs(keys, window)
            runs = self._run_records(rows, keys)
        self._partial.update((keys[key], since) for key, since in partial.items())
        self._windows.update((keys[key], window) for key in partial if window is not None)
        have = {run.run_id for job_id in wanted for run in dict.__getitem__(self.jobs, job_id).runs}
        self._add_runs([run for run in runs if run.run_id not in have])
        for job_id in wanted:
            dict.__getitem__(self.jobs, job_id).runs.sort(key=RunRecord.sort_key)
        self._skips(keys)

    def _add_runs(self, runs: Iterable[RunRecord]) -> None:
        for run in sorted(runs, key=RunRecord.sort_key):
            owner: JobRecord | None = dict.get(self.jobs, run.job_id)
            if owner is not None:
                self.add_run(owner, run)

    def _read_io(self, jobs: Iterable[JobRecord]) -> None:
        """Read what the runs that decide each job's current edges reported: its latest completed run
        and the runs that started after it, or every run when none completed (:mod:`.retirement`; the
        edges of older runs count nowhere, so they are not read)."""
        wanted: dict[int, tuple[JobRecord, RunRecord, str]] = {}
        for job in jobs:
            runs = job.runs
            started = [run.sort_key() for run in runs]
            latest = retirement.latest_completed_key(runs, started)
            for run, order in zip(runs, started, strict=True):
                run_id = run.run_id
                if run_id is None or run_id in self._io_read:
                    continue
                if latest is None or order >= latest:
                    wanted[f.run_key(run_id)] = (job, run, run_id)
        if not wanted:
            return
        self._io_read.update(run_id for _, _, run_id in wanted.values())
        io: dict[int, list[RunIo]] = {}
        for item in self.state.run_io(wanted):
            io.setdefault(item.run_key, []).append(item)
        for key, (job, run, _) in wanted.items():
            run.io = job.shared_io(
                frozenset(
                    (job.id, item.dataset_id) if item.output else (item.dataset_id, job.id)
                    for item in io.get(key, ())
                )
            )

    def load_runs(self, run_ids: Iterable[str]) -> None:
        """Read the runs not read yet by their ids (not their jobs: :meth:`load_jobs` adds them there)."""
        wanted = [r for r in dict.fromkeys(run_ids) if r not in self._runs_read]
        if not wanted:
            return
        self._runs_read.update(wanted)
        with self.state.batch():
            runs = self.state.runs(wanted)
            self._run_records(runs, self.state.node_ids_of({run.row.job_key for run in runs}))

    def _run_records(self, runs: Sequence[Run], job_ids: dict[int, str]) -> list[RunRecord]:
        """The records of these runs (one object per run id, whoever read it first); ``job_ids``: the
        ids of their jobs by key."""
        fresh = [run for run in runs if not dict.__contains__(self.runs, run.row.run_id)]
        self._runs_read.update(run.row.run_id for run in runs)
        for row, state, parent, facts in fresh:
            job_id = job_ids.get(row.job_key)
            if job_id is None:
                continue
            record = stored_rows.run_record(row, job_id, state, parent)
            stored_rows.run_facts(record, facts)
            self._tasks_state(facts.get(f.TASKS))
            dict.__setitem__(self.runs, row.run_id, record)
        return [found for run in runs if (found := dict.get(self.runs, run.row.run_id)) is not None]

    def read_refs(self, runs: Iterable[RunRecord]) -> None:
        """With ``keep_refs``, read where the events of these runs are, for those not read yet."""
        if not self.keep_refs:
            return
        wanted = {f.run_key(r.run_id): r for r in runs if r.run_id and r.run_id not in self._refs_read}
        if not wanted:
            return
        self._refs_read.update(run.run_id for run in wanted.values() if run.run_id)
        with self.state.batch():
            found = self.state.run_refs(wanted)
        for key, run in wanted.items():
            run.refs = found.get(key, [])

    def add_run(self, job: JobRecord, run: RunRecord) -> None:
        job.runs.append(run)
        if run.parent_run_id is not None:
            self.children.setdefault(run.parent_run_id, set()).add(job.id)

    def _skips(self, job_keys: dict[int, str]) -> None:
        """The DAG runs whose latest ``tasksState`` says these jobs did not run, and those DAG runs; of a
        job whose older runs are not read, those sent since its runs read began (an older one is of a DAG
        run that started before them, read with them: :meth:`_read_rest`)."""
        since = {key: self._partial.get(job_id) for key, job_id in job_keys.items()}
        skipped = [
            row
            for row in self.state.skipped_in(job_keys)
            if (begin := since.get(row.job_key)) is None or row.event_time >= begin
        ]
        if not skipped:
            return
        tasks = self.state.facts({row.dag_run_key for row in skipped})
        self.load_runs(
            dag_run for found in tasks.values() if (dag_run := self._tasks_state(found.get(f.TASKS)))
        )

    def _tasks_state(self, fact: f.FactRow | None) -> str | None:
        """Note which jobs a DAG run's latest ``tasksState`` says did not run; the DAG run's id."""
        if fact is None:
            return None
        value = orjson.loads(fact.value)
        self.set_dag_run_skips(value["dag_run_id"], tuple(value["skipped"]), tuple(value["upstream_failed"]))
        return str(value["dag_run_id"])

    def load_triggers(self, run_ids: Iterable[str]) -> None:
        """Read the triggers of these runs not read yet (cross-DAG lineage, :mod:`.triggers`), the task
        runs they name (with their jobs) and the DAG jobs of those task runs."""
        wanted = [r for r in dict.fromkeys(run_ids) if r not in self._triggers_read]
        if not wanted:
            return
        self._triggers_read.update(wanted)
        rows = self.state.triggers(wanted)  # (the jobs are read, and a scratch store folds them, after)
        for row in rows:
            self.triggers.setdefault(row.run_id, set()).add((row.upstream_job_id, row.upstream_run_id))
        self.load_jobs(row.upstream_job_id for row in rows)
        tasks = [run for row in rows if (run := dict.get(self.runs, row.upstream_run_id)) is not None]
        self.load_jobs(run.parent_job_id for run in tasks if run.parent_job_id is not None)

    def load_datasets(self, dataset_ids: Iterable[str]) -> None:
        """Read the datasets not read yet, with their schemas."""
        wanted = [
            d for d in dict.fromkeys(dataset_ids) if d not in self._datasets_read and d.startswith("dataset:")
        ]
        if not wanted:
            return
        self._prepare_datasets(wanted)
        self._datasets_read.update(wanted)
        with self.state.batch():
            records = {}
            for dataset_id, (node, facts) in self.state.nodes(wanted).items():
                record = records[node.node_key] = DatasetRecord(node.namespace, node.name)
                stored_rows.dataset_facts(record, facts)
                dict.__setitem__(self.datasets, dataset_id, record)
            for schema in self.state.schemas(records):
                found = records.get(schema.dataset_key)
                if found is not None:
                    found.schemas[stored_rows.fields(schema.fields)] = schema.last_seen

    def load_edges(self, node_ids: Iterable[str]) -> None:
        """Read the edges of these nodes not read yet (reported, declared), and the jobs at their ends."""
        wanted = [n for n in dict.fromkeys(node_ids) if n not in self._edges_read]
        if not wanted:
            return
        self._prepare_edges(wanted)
        self._edges_read.update(wanted)
        with self.state.batch():
            self._add_edges(self.state.edges(wanted))

    def load_writers(self, dataset_ids: Iterable[str]) -> None:
        """Read the edges into these datasets (their writers', reported and declared) not read yet, and
        not those of their readers: :attr:`pred` of each is complete after, :attr:`succ` only after
        :meth:`load_edges` (an upstream walk through a source every job reads reads one edge of it)."""
        wanted = [
            d
            for d in dict.fromkeys(dataset_ids)
            if d.startswith("dataset:") and d not in self._edges_read and d not in self._writers_read
        ]
        if not wanted:
            return
        self._prepare_writers(wanted)
        self._writers_read.update(wanted)
        with self.state.batch():
            self._add_edges(self.state.writer_edges(wanted))

    def _add_edges(self, rows: Iterable[f.EdgeRow]) -> None:
        """Put edge rows in the graph (reported and declared ones)."""
        for row in rows:
            edge = (row.job_id, row.dataset_id) if row.output else (row.dataset_id, row.job_id)
            if row.first_reported is not None:
                self.add_edge(*edge)
                self.edge_first[edge] = row.first_reported
            if row.declared:
                self.declared_succ.setdefault(edge[0], set()).add(edge[1])
                self.declared_pred.setdefault(edge[1], set()).add(edge[0])

    def prefetch(self, node_ids: Iterable[str], *, upstream: bool) -> None:
        nodes = list(node_ids)
        if upstream:  # a dataset's writers only (the jobs' edges are their own: all of them)
            self.load_edges(n for n in nodes if n.startswith("job:"))
            self.load_writers(nodes)
        else:
            self.load_edges(nodes)
        side = self.pred if upstream else self.succ
        declared = self.declared_pred if upstream else self.declared_succ
        jobs = [n for n in nodes if n.startswith("job:")]
        for node in nodes:
            if node.startswith("dataset:"):
                jobs.extend(side.get(node, ()))
                jobs.extend(declared.get(node, ()))
        self.load_jobs(jobs)
        if upstream:  # the DAG runs that started the jobs' latest runs (cross-DAG lineage)
            latest = [self.latest_run(job) for n in nodes if (job := dict.get(self.jobs, n)) is not None]
            self.load_triggers(
                r for run in latest if run is not None for r in (run.run_id, run.parent_run_id) if r
            )

    def prefetch_reach(self, start: str, depth: int, *, upstream: bool, limit: int) -> None:
        """Read at once the records of what a walk from ``start`` may reach by the store's edges
        (:mod:`airflow_lineage_plus.store.reach`; a few queries, not a few per level), unless that is more
        than the walk takes or :data:`REACH_AT_ONCE` nodes (or this is a scratch store: it folds where the
        walk looks)."""
        asked = (start, depth, upstream, min(limit, REACH_AT_ONCE))
        if self.store.scratch or asked in self._reached:  # (a request's walks share one graph)
            return
        self._reached.add(asked)
        found = reach(self.store, start, depth, upstream=upstream, limit=asked[3])
        if not found:
            return
        jobs = [node for node in found if node.startswith("job:")]
        self.load_jobs(jobs)  # with their own edges
        datasets = [node for node in found if node.startswith("dataset:")]
        (self.load_writers if upstream else self.load_edges)(datasets)
        self.prefetch(jobs, upstream=upstream)  # what else a level reads (upstream: the triggers)

    def prefetch_records(self, node_ids: Iterable[str], *, runs: int | None = None) -> None:
        nodes = list(node_ids)
        self.load_jobs((n for n in nodes if n.startswith("job:")), runs)
        self.load_datasets(n for n in nodes if n.startswith("dataset:"))

    def prefetch_edges(self, node_ids: Iterable[str]) -> None:
        self.load_edges(node_ids)

    def last_event_times(self, job_ids: Iterable[str]) -> dict[str, int | None]:
        return self.catalog.last_event_times(job_ids)

    def newest_adjacent(
        self, dataset_ids: Iterable[str], *, writers: bool, readers: bool, limit: int
    ) -> dict[str, tuple[list[tuple[str, int | None]], bool]]:
        """Asked of the store (:meth:`.FoldedState.newest_adjacent`: of a source every job reads, the few
        that ran last, by an index), at once for the datasets not asked for as far yet."""
        wanted = [
            d
            for d in dict.fromkeys(dataset_ids)
            if (known := self._adjacent.get((d, writers, readers))) is None
            or (not known[1] and len(known[0]) < limit)
        ]
        if wanted:
            sides = [side for side, asked in ((1, writers), (0, readers)) if asked]
            for dataset_id, (times, complete) in self.state.newest_adjacent(wanted, sides, limit).items():
                self._adjacent[(dataset_id, writers, readers)] = (latest_first(times), complete)
        return {d: self._adjacent.get((d, writers, readers), ([], True)) for d in dataset_ids}

    # -- what the queries read ----------------------------------------------------------------------
    def all_runs(self, job: JobRecord) -> Iterator[RunRecord]:
        """Every run of the job (its older runs read first, when they were not)."""
        if job.id in self._partial:
            self._read_rest([job.id])
        return super().all_runs(job)

    def state_runs(self, job: JobRecord) -> Iterator[RunRecord]:
        """The runs read (enough for its latest run and current edges: :meth:`load_jobs`)."""
        return super().all_runs(job)

    def dag_runs(self, job: JobRecord) -> tuple[list[RunRecord], frozenset[str]]:
        """The runs read and the DAG ids the others name, counted in the store; every run when one of the
        others names no DAG (its parent's decides)."""
        if job.id not in self._partial:
            return job.runs, frozenset()
        if job.id not in self._dag_counts:  # those of every job read so far with runs not read, at once
            wanted = {f.key_of(j): j for j in self._partial if j not in self._dag_counts}
            found = self.state.job_dags(wanted)
            self._dag_counts.update((job_id, found.get(key, {})) for key, job_id in wanted.items())
        dags = self._dag_counts[job.id]
        if dags.get(None, 0) > sum(run.dag_id is None for run in job.runs):
            self._read_rest([job.id])
            return job.runs, frozenset()
        return job.runs, frozenset(dag for dag in dags if dag is not None)

    def newest_runs(
        self,
        job: JobRecord,
        count: int,
        as_of: int | None = None,
        *,
        completed: int | None = None,
        ended_since: int | None = None,
    ) -> list[RunRecord]:
        """The runs read, once they hold the newest ``count`` runs and ``completed`` (default ``count``)
        completed ones started at or before ``as_of``, or (``ended_since``) once no run older than them
        ended at that time or later (the store asked); else :data:`GROWTH` times as many are read, at
        least as many as asked for, until they do; or every run."""
        wanted = count if completed is None else completed
        window = self._windows.get(job.id, self.run_window)
        while (since := self._partial.get(job.id)) is not None:
            runs = newest_first(self.state_runs(job), as_of)
            # what starts at ``since`` or later is every run of that span: the newest of all runs
            read = [run for run in runs if run.sort_key()[0] >= since]
            if len(read) >= count and sum(run.completed for run in read) >= wanted:
                return read
            if ended_since is not None and not self._ended_before(job.id, since, ended_since):
                return read
            window = max(window * GROWTH, count, wanted)
            self._read_rest([job.id], window)
        return super().newest_runs(job, count, as_of, completed=completed)

    def note_ended(self, job_ids: Iterable[str], since: int) -> None:
        """Ask the store at once which of these jobs have an older run than those read that ended at
        ``since`` or later (what :meth:`newest_runs` with ``ended_since`` asks of each job), and keep the
        answer of those that have none: it holds for any later time too."""
        partial = {f.key_of(job_id): job_id for job_id in job_ids if job_id in self._partial}
        if not partial:
            return
        late = {
            key for key, start in self.state.ended_runs(partial, since) if start < self._partial[partial[key]]
        }
        for key, job_id in partial.items():
            if key not in late:
                self._quiet[job_id] = (since, self._partial[job_id])

    def _ended_before(self, job_id: str, before: int, since: int) -> bool:
        """Whether a run of the job started before ``before`` ended at ``since`` or later."""
        quiet = self._quiet.get(job_id)
        if quiet is not None and quiet[0] <= since and quiet[1] >= before:
            return False
        return self.state.ended_since(f.key_of(job_id), before, since)

    def has_node(self, node_id: str) -> bool:
        if node_id.startswith("job:"):
            return self.job_record(node_id) is not None
        return self.dataset_record(node_id) is not None

    def neighbours(
        self, node_id: str, *, upstream: bool, retired: bool = False, declared_too: bool = True
    ) -> list[tuple[str, str]]:
        if upstream and node_id.startswith("dataset:"):  # its writers (a job's edges are its own: all)
            self.load_writers((node_id,))
        else:
            self.load_edges((node_id,))
        if node_id.startswith("job:"):
            self.load_jobs((node_id,))
        else:  # the jobs on that side say whether each edge is current (and the declared ones, declared)
            side = self.pred if upstream else self.succ
            declared = self.declared_pred if upstream else self.declared_succ
            self.load_jobs([*side.get(node_id, ()), *declared.get(node_id, ())])
        return super().neighbours(node_id, upstream=upstream, retired=retired, declared_too=declared_too)

    def child_jobs(self, run_id: str) -> set[str]:
        if run_id not in self._children_read:
            self._prepare_children([run_id])
            self._children_read.add(run_id)
            self.load_jobs(child.job_id for child in self.state.children((run_id,)))
        return super().child_jobs(run_id)

    def _column_candidates(self, dataset_id: str, column: str) -> list[tuple[str, str]]:
        return self.state.column_readers(dataset_id, column)

    def read_job_ids(self) -> set[str]:
        """The jobs read so far (whose edges the graph holds)."""
        return set(dict.keys(self.jobs))

    def all_job_ids(self) -> list[str]:
        """Every job the store knows, sorted."""
        return sorted(self.state.node_ids(f.JOB_KIND))

    def all_dataset_ids(self) -> list[str]:
        """Every dataset the store knows."""
        return self.state.node_ids(f.DATASET_KIND)

    def run_dag_ids(self, job_ids: Iterable[str]) -> dict[str, frozenset[str]]:
        """Counted in the store (a query, no run read)."""
        keys = {f.key_of(job_id): job_id for job_id in job_ids}
        found = {
            keys[key]: frozenset(dag for dag in dags if dag is not None)
            for key, dags in self.state.job_dags(keys).items()
            if key in keys
        }
        return {job_id: dags for job_id, dags in found.items() if dags}

    def run_times(self, job_ids: Iterable[str]) -> tuple[int | None, int | None]:
        """The span of the runs in the store (a query, no run read), and of the not-run runs of the jobs
        with skip records (those jobs read whole: a not-run run has its DAG run's times)."""
        keys = {f.key_of(job_id): job_id for job_id in job_ids}
        skipped = sorted({keys[row.job_key] for row in self.state.skipped_in(keys) if row.job_key in keys})
        self.load_jobs(skipped)
        self._read_rest(skipped)
        return time_span((*self.state.run_times(keys), *super().run_times(skipped)))

    def maybe_failed_job_ids(self) -> list[str]:
        """The jobs whose newest run ended badly (a query of the folded state), read."""
        found = self.state.jobs_ended_badly()
        self.load_jobs(found)
        return found

    def job_ids_with_slo(self) -> list[str]:
        """The jobs with a freshness target (a query of the folded state), read."""
        found = self.state.jobs_with(f.SLO)
        self.load_jobs(found)
        return [job_id for job_id in found if (job := self.jobs.get(job_id)) and job.slo_minutes is not None]

    def written_since(self, since: int, limit: int) -> list[str]:
        """The datasets last written since ``since`` (a query of the folded state's index), read."""
        found = self.state.written_since(since, limit)
        self.load_datasets(found)
        return found

    def load_all(self) -> None:
        """Read every job and dataset (for questions about all of them: freshness, the summary)."""
        self.load_jobs(self.all_job_ids())
        self.load_datasets(self.all_dataset_ids())
