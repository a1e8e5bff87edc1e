"""The in-memory lineage graph: jobs, datasets, directed edges, runs, schema versions, column lineage.

Everything here is order-independent: each fact carries the event time it came from and a later
(by event time, not by arrival) fact wins, with ties broken by content. So a shuffled or repeated
stream folds to the same graph as the ordered one. The records it holds are in :mod:`.runs` and
:mod:`.records`.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from dataclasses import dataclass

import msgspec

from airflow_lineage_plus import node_ids as ids
from airflow_lineage_plus.graph import declared, retirement
from airflow_lineage_plus.graph import wire as w
from airflow_lineage_plus.graph.facets import FacetReader
from airflow_lineage_plus.graph.records import (
    ColumnInput,
    DatasetRecord,
    Fields,
    FullFields,
    JobRecord,
    ListEntry,
    Transform,
    cached_facet,
)
from airflow_lineage_plus.graph.runs import (
    _TERMINAL,
    AIRFLOW_UPSTREAM_FAILED,
    FAILED_STATES,
    SCHEDULER_SKIP_REASON,
    UPSTREAM_FAILED_REASON,
    RunRecord,
)

# the names this module held before runs and records were split out of it
__all__ = [
    "FAILED_STATES",
    "SCHEDULER_SKIP_REASON",
    "ColumnInput",
    "DatasetRecord",
    "Fields",
    "FullFields",
    "JobRecord",
    "LineageGraph",
    "RunRecord",
    "Transform",
]


@dataclass
class _DagRunSkips:
    key: tuple[int, tuple[str, ...], tuple[str, ...]]
    job_ids: tuple[str, ...]  # every job the DAG run did not run
    upstream_failed: tuple[str, ...] = ()  # those of them whose upstream failed
    dag_job: str = ""  # the job whose run the DAG run is


def _same_datasets(items: list[w.Dataset], records: tuple[DatasetRecord, ...]) -> bool:
    """Whether ``items`` name ``records``, in that order."""
    if len(items) != len(records):
        return False
    for item, record in zip(items, records, strict=True):
        if item.name != record.name or item.namespace != record.namespace:
            return False
    return True


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
        self.dag_run_skips: dict[str, _DagRunSkips] = {}  # DAG run id -> jobs the scheduler skipped
        self.skipped_by: dict[str, set[str]] = {}  # job id -> DAG run ids that skipped it
        # (dataset id, field) -> {(dataset id, column)} that read it; ``column_readers_ever`` keeps the
        # readers of older column lineage too (where to look for them at an earlier time)
        self.column_readers: dict[tuple[str, str], set[tuple[str, str]]] = {}
        self.column_readers_ever: dict[tuple[str, str], set[tuple[str, str]]] = {}
        self.edge_first: dict[tuple[str, str], int] = {}  # edge -> earliest time an event reported it
        self.keep_refs = False  # whether runs remember their events' refs (for details)
        #: False when the graph could only approximate what was asked (a source that cannot time-travel)
        self.exact = True
        self.first_time: int | None = None  # the earliest and the latest event time folded
        self.last_time: int | None = None
        self.version = 0
        self.salvaged = 0  # inputs/outputs lists that had to be trimmed
        self.facet_reader = FacetReader()  # datasets' facets, what they decode to shared between datasets

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

    def declare(self, job: JobRecord, edges: frozenset[tuple[str, str]], micros: int, tie: str = "") -> None:
        """Record a declaration of ``job`` (its edges, at declared time ``micros``): it is the job's
        declaration if it is the latest. Its edges join ``declared_succ``/``declared_pred`` either way:
        they hold every edge ever declared (where an earlier time may find one), and the job's latest
        declaration says which are declared now (:meth:`declared_neighbours`)."""
        for origin, destination in edges:
            self.declared_succ.setdefault(origin, set()).add(destination)
            self.declared_pred.setdefault(destination, set()).add(origin)
        key = (micros, tie or declared.tie(edges))
        if job.declared is None or key > job.declared[0]:
            job.declared = (key, edges)

    def add_run(self, job: JobRecord, run: RunRecord) -> None:
        job.runs.append(run)
        if run.run_id is not None:
            self.runs[run.run_id] = run
        if run.parent_run_id is not None:
            self.children.setdefault(run.parent_run_id, set()).add(job.id)

    def set_fields(
        self, record: DatasetRecord, fields: Iterable[tuple[str, str | None, str | None]], micros: int
    ) -> None:
        full = tuple(fields)
        self.set_schema(record, tuple((name, kind) for name, kind, _ in full), full, micros)

    @staticmethod
    def set_schema(
        record: DatasetRecord,
        schema: Fields,
        full: tuple[tuple[str, str | None, str | None], ...],
        micros: int,
    ) -> None:
        seen = record.schemas.get(schema)
        if seen is None or micros > seen:
            record.schemas[schema] = micros
        key = (micros, schema)
        if record.fields_key is None or key > record.fields_key:
            record.fields_key = key
            record.fields = full

    def set_columns(
        self, record: DatasetRecord, columns: dict[str, tuple[ColumnInput, ...]], micros: int, tie: str = ""
    ) -> None:
        key = (micros, tie or repr(sorted(columns.items())))
        if record.columns_key is not None and key[1] == record.columns_key[1]:
            record.columns_key = max(key, record.columns_key)  # the same lineage: nothing to re-index
            return
        ever = self.column_readers_ever
        for column, inputs in columns.items():  # every lineage ever seen, winning or not
            for namespace, name, field, _ in inputs:
                ever.setdefault((ids.dataset_id(namespace, name), field), set()).add((record.id, column))
        if record.columns_key is not None and key < record.columns_key:
            return
        for column, inputs in record.columns.items():
            for namespace, name, field, _ in inputs:
                readers = self.column_readers.get((ids.dataset_id(namespace, name), field))
                if readers is not None:
                    readers.discard((record.id, column))
        record.columns_key = key
        record.columns = columns
        index = self.column_readers
        for column, inputs in columns.items():
            for namespace, name, field, _ in inputs:
                index.setdefault((ids.dataset_id(namespace, name), field), set()).add((record.id, column))

    @staticmethod
    def set_owners(record: JobRecord | DatasetRecord, owners: tuple[str, ...], micros: int) -> None:
        key = (micros, owners)
        if record.owners_key is None or key > record.owners_key:
            record.owners_key = key
            record.owners = owners

    @staticmethod
    def set_slo(job: JobRecord, minutes: int, micros: int) -> None:
        """The freshness target (minutes) of the job's outputs: the latest by event time wins."""
        key = (micros, minutes)
        if job.slo_key is None or key > job.slo_key:
            job.slo_key, job.slo_minutes = key, minutes

    # -- folding events -------------------------------------------------------------------------
    def apply(self, event: w.Event, micros: int, ref: int) -> None:
        """Fold one decoded event (``ref`` locates its bytes for details). The hot loop of a load:
        written for speed (locals, positional calls, in-place byte comparisons)."""
        self.version += 1
        if self.last_time is None or micros > self.last_time:
            self.last_time = micros
        if self.first_time is None or micros < self.first_time:
            self.first_time = micros
        event_job = event.job
        if event_job is None:
            if event.dataset is not None:
                self._apply_dataset(event.dataset, micros, ref, False).dataset_refs.append(ref)
            return
        event_run = event.run
        if event_run is None:  # a JobEvent: lineage declared in code, below every run's (:mod:`.declared`)
            micros = declared.declared_time(micros)
        job_id = "job:" + event_job.namespace + ":" + event_job.name  # ids.job_id
        job = self.jobs.get(job_id)
        if job is None:
            job = self.jobs[job_id] = JobRecord(event_job.namespace, event_job.name)
        job.refs.append(ref)
        if micros >= job.ref_time:
            job.ref, job.ref_time = ref, micros
        job_facets = event_job.facets
        if job_facets is not None and len(job_facets.ownership):
            hit = job.raw_cache.get("ownership")
            if hit is not None and hit[0] == job_facets.ownership:
                owners = hit[1]
            else:
                owners = cached_facet(job.raw_cache, "ownership", job_facets.ownership, w.decode_owner_names)
            if owners is not None:
                self.set_owners(job, owners, micros)
        if job_facets is not None and len(job_facets.sloTier):
            minutes = cached_facet(job.raw_cache, "sloTier", job_facets.sloTier, w.decode_freshness_minutes)
            if minutes is not None:
                self.set_slo(job, minutes, micros)
        if event_run is None:
            if len(event.inputs) or len(event.outputs):
                self._apply_declaration(job, event, micros, ref)
            if event.dataset is not None:
                self._apply_dataset(event.dataset, micros, ref, False).dataset_refs.append(ref)
            return
        run = self.runs.get(event_run.runId)
        if run is None:
            run = RunRecord(event_run.runId, job.id)
            self.add_run(job, run)
        terminal = event.eventType in _TERMINAL
        if len(event.inputs) > 2:
            self._apply_list(job, run, event.inputs, micros, ref, False, terminal)
        if len(event.outputs) > 2:
            self._apply_list(job, run, event.outputs, micros, ref, True, terminal)
        if event.dataset is not None:
            self._apply_dataset(event.dataset, micros, ref, False).dataset_refs.append(ref)
        facets = event_run.facets
        if (parent := run.observe(event.eventType, micros, facets)) is not None:  # the run's parent, new
            self.children.setdefault(parent, set()).add(job.id)
        if self.keep_refs:
            run.refs = [*run.refs, ref]
        if facets is not None and facets.airflowState is not None and facets.airflowState.tasksState:
            self.apply_tasks_state(job, run.run_id or "", facets.airflowState.tasksState, micros)

    def _apply_list(
        self,
        job: JobRecord,
        run: RunRecord | None,
        raw: object,
        micros: int,
        ref: int,
        output: bool,
        terminal: bool,
    ) -> None:
        """Fold an inputs/outputs list. A bare one seen before is not decoded; one naming the datasets of
        the job's last decoded list reuses its records and edges (known edges: only earlier times noted)."""
        skip_known = not (output and terminal)
        data = None
        if skip_known:
            last = job.last_outputs if output else job.last_inputs
            if last is not None and raw == last[0]:  # the job's last bare list again (compared in place)
                self._seen_list(job, run, last[1], micros)
                return
            data = bytes(raw)  # type: ignore[call-overload]
            entry = job.lists.get((output, data))
            if entry is not None:  # a bare list seen before: every edge is there, no facet to age
                self._remember_bare(job, data, entry, output)
                self._seen_list(job, run, entry, micros)
                return
        items, salvaged = w.decode_datasets(raw)  # type: ignore[arg-type]
        if salvaged:
            self.salvaged += 1
        written = output and terminal
        known = job.decoded[output]
        if known is not None and _same_datasets(items, known[0]):  # linked and entered already
            for item, record in zip(items, known[0], strict=True):
                self._dataset_seen(record, item.facets, micros, ref, written)
            self._seen_list(job, run, known[1], micros)
            return
        job_id = job.id
        linked = job.targets if output else job.sources
        bare = True
        edges = []
        records = []
        for item in items:
            bare = bare and not len(item.facets)
            record = self._apply_dataset(item, micros, ref, written)
            records.append(record)
            edge = (job_id, record.id) if output else (record.id, job_id)
            edges.append(edge)
            if record.id not in linked:
                linked.add(record.id)
                self.add_edge(*edge)
        entry = [job.shared_io(frozenset(edges)), micros]
        self._seen_list(job, run, entry, micros, new=True)
        job.decoded[output] = (tuple(records), entry)
        if bare:
            if data is None:
                data = bytes(raw)  # type: ignore[call-overload]
            cache = job.lists
            if len(cache) >= 16:
                cache.clear()
            cache[(output, data)] = entry
            self._remember_bare(job, data, entry, output)

    def _seen_list(
        self, job: JobRecord, run: RunRecord | None, entry: ListEntry, micros: int, new: bool = False
    ) -> None:
        """A list with the edges ``entry[0]`` was reported at ``micros``: the run reported them, and each
        was first seen no later than that."""
        edges: frozenset[tuple[str, str]] = entry[0]
        if new or micros < entry[1]:
            entry[1] = min(entry[1], micros)
            first = self.edge_first
            for edge in edges:
                seen = first.get(edge)
                if seen is None or micros < seen:
                    first[edge] = micros
        if run is not None and edges is not run.io and not edges <= run.io:
            run.io = job.shared_io(run.io | edges)

    def _apply_declaration(self, job: JobRecord, event: w.Event, micros: int, ref: int) -> None:
        """Fold a JobEvent's inputs and outputs as the job's declaration (its datasets' facts included)."""
        edges = set()
        for raw, output in ((event.inputs, False), (event.outputs, True)):
            if len(raw) <= 2:
                continue
            items, salvaged = w.decode_datasets(raw)
            if salvaged:
                self.salvaged += 1
            for item in items:
                record = self._apply_dataset(item, micros, ref, False)
                edges.add((job.id, record.id) if output else (record.id, job.id))
        self.declare(job, frozenset(edges), micros)

    @staticmethod
    def _remember_bare(job: JobRecord, data: bytes, entry: ListEntry, output: bool) -> None:
        if output:
            job.last_outputs = (msgspec.Raw(data), entry)
        else:
            job.last_inputs = (msgspec.Raw(data), entry)

    def _apply_dataset(self, item: w.Dataset, micros: int, ref: int, written: bool) -> DatasetRecord:
        key = "dataset:" + item.namespace + ":" + item.name
        record = self.datasets.get(key)
        if record is None:
            record = self.datasets[key] = DatasetRecord(item.namespace, item.name)
        return self._dataset_seen(record, item.facets, micros, ref, written)

    def _dataset_seen(
        self, record: DatasetRecord, facets: msgspec.Raw, micros: int, ref: int, written: bool
    ) -> DatasetRecord:
        """Fold one mention of a dataset (``written``: as a terminal event's output)."""
        if written and micros >= record.write_time:
            record.write_ref, record.write_time = ref, micros
        if not len(facets):
            return record
        if micros > record.ref_time and facets == record.facets_raw:
            return self._apply_facts_again(record, micros, ref)
        if micros >= record.ref_time:
            record.ref, record.ref_time = ref, micros
        if facets == record.facets_raw:
            schema, owners, lineage, bad = record.facts  # the same facets as last time, compared in place
        else:
            schema, owners, lineage, bad = self.facet_reader.facts(record, facets)
        if bad:
            self.salvaged += 1
            return record
        if schema is not None:
            self.set_schema(record, schema[0], schema[1], micros)
        if owners is not None:
            self.set_owners(record, owners, micros)
        if lineage is not None:
            self.set_columns(record, lineage[0], micros, lineage[1])
        return record

    def _apply_facts_again(self, record: DatasetRecord, micros: int, ref: int) -> DatasetRecord:
        """The facets folded last for ``record`` again, later than any it had: what :meth:`set_schema`,
        :meth:`set_owners` and :meth:`set_columns` would do, without their comparisons (every key the
        record holds is at most its ``ref_time``, so a later time wins them all)."""
        record.ref, record.ref_time = ref, micros
        schema, owners, lineage, bad = record.facts
        if bad:
            self.salvaged += 1
            return record
        if schema is not None:
            record.schemas[schema[0]] = micros
            record.fields_key, record.fields = (micros, schema[0]), schema[1]
        if owners is not None:
            record.owners_key, record.owners = (micros, owners), owners
        if lineage is not None:
            if record.columns_key is not None and record.columns_key[1] == lineage[1]:
                record.columns_key = (micros, lineage[1])
            else:
                self.set_columns(record, lineage[0], micros, lineage[1])
        return record

    def apply_tasks_state(
        self, dag: JobRecord, dag_run_id: str, states: dict[str, str | None], micros: int
    ) -> None:
        """Note the tasks a DAG run's ``tasksState`` says never ran: skipped, or upstream failed."""
        not_run = {task: s for task, s in states.items() if s in ("skipped", AIRFLOW_UPSTREAM_FAILED)}
        job_ids = {task: ids.job_id(dag.namespace, f"{dag.name}.{task}") for task in not_run}
        skipped = tuple(sorted(job_ids.values()))
        failed = tuple(sorted(job_ids[t] for t, s in not_run.items() if s == AIRFLOW_UPSTREAM_FAILED))
        self.set_dag_run_skips(dag_run_id, (micros, skipped, failed), skipped, failed, dag.id)

    def set_dag_run_skips(
        self,
        dag_run_id: str,
        key: tuple[int, tuple[str, ...], tuple[str, ...]],
        skipped: tuple[str, ...],
        upstream_failed: tuple[str, ...] = (),
        dag_job: str = "",
    ) -> None:
        """``skipped``: every job the DAG run did not run; ``upstream_failed``: those of them whose
        upstream failed."""
        current = self.dag_run_skips.get(dag_run_id)
        if current is not None and key <= current.key:
            return
        if current is not None:
            for job_id in current.job_ids:
                self.skipped_by.get(job_id, set()).discard(dag_run_id)
        self.dag_run_skips[dag_run_id] = _DagRunSkips(key, skipped, upstream_failed, dag_job)
        for job_id in skipped:
            self.skipped_by.setdefault(job_id, set()).add(dag_run_id)

    # -- reading (what the queries ask; lazily built graphs override these) ----------------------
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
            synthetic.terminal = (synthetic.end or 0, 1)
            synthetic.skipped = True
            skips = self.dag_run_skips.get(dag_run_id)
            synthetic.upstream_failed = skips is not None and job.id in skips.upstream_failed
            synthetic.skip_reason = (
                UPSTREAM_FAILED_REASON if synthetic.upstream_failed else SCHEDULER_SKIP_REASON
            )
            synthetic.parent_run_id = dag_run_id
            yield synthetic

    def latest_run(self, job: JobRecord) -> RunRecord | None:
        """The run that started last."""
        cached = job.latest_cache
        if cached is not None and cached[0] == self.version:
            return cached[1]
        latest = max(self.all_runs(job), key=RunRecord.sort_key, default=None)
        job.latest_cache = (self.version, latest)
        return latest

    def current_io(self, job: JobRecord) -> frozenset[tuple[str, str]] | None:
        """The job's current edges (:func:`.retirement.current_edges`); None when all its edges are."""
        cached = job.current_cache
        if cached is not None and cached[0] == self.version:
            return cached[1]
        current = retirement.current_edges(self.all_runs(job))
        job.current_cache = (self.version, current)
        return current

    def completed_key(self, job: JobRecord) -> tuple[int, str] | None:
        """Sort key of the job's latest completed run (None without one)."""
        runs = list(self.all_runs(job))
        return retirement.latest_completed_key(runs, (run.sort_key() for run in runs))

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
        return self.column_readers.get((dataset_id, column), set())
