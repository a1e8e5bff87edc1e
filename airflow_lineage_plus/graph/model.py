"""The in-memory lineage graph: jobs, datasets, directed edges, runs, schema versions, column lineage.

Everything here is order-independent: each fact carries the event time it came from and a later
(by event time, not by arrival) fact wins, with ties broken by content. So a shuffled or repeated
stream folds to the same graph as the ordered one.
"""

from __future__ import annotations

import hashlib
import marshal
import operator
import sys
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from typing import Any, TypeVar

import msgspec

from airflow_lineage_plus import node_ids as ids
from airflow_lineage_plus.graph import wire as w

_T = TypeVar("_T")

# event type -> (run state, priority when two terminal events have the same time)
_TERMINAL = {"COMPLETE": ("COMPLETED", 1), "ABORT": ("ABORTED", 2), "FAIL": ("FAILED", 3)}
FAILED_STATES = frozenset({"FAILED", "ABORTED"})
SCHEDULER_SKIP_REASON = "skipped by the scheduler (DAG run airflowState.tasksState)"

Fields = tuple[tuple[str, str | None], ...]
FullFields = tuple[tuple[str, str | None, str | None], ...]  # with descriptions
Transform = tuple[str | None, str | None, str | None]
ColumnInput = tuple[str, str, str, tuple[Transform, ...]]  # (namespace, name, field, transformations)
# (schema, owners, column lineage and its tie-breaker, bad) of a dataset's facets
_DatasetFacts = tuple[
    tuple[Fields, FullFields] | None,
    tuple[str, ...] | None,
    tuple[dict[str, tuple[ColumnInput, ...]], str] | None,
    bool,
]


class RunRecord:
    """One run, folded from all its events whatever their arrival order."""

    __slots__ = (
        "end",
        "error",
        "error_key",
        "exec_mode",
        "exec_mode_time",
        "first_seen",
        "job_id",
        "parent_run_id",
        "refs",
        "run_id",
        "skip_reason",
        "skipped",
        "start",
        "terminal",
    )

    def __init__(self, run_id: str | None, job_id: str) -> None:
        self.run_id = run_id
        self.job_id = job_id
        self.start: int | None = None  # time of the earliest START
        self.first_seen: int | None = None
        self.terminal: tuple[int, int] | None = None  # (time, priority) of the winning terminal event
        self.end: int | None = None
        self.error: str | None = None
        self.error_key: tuple[int, str] | None = None
        self.skipped = False
        self.skip_reason: str | None = None
        self.exec_mode: str | None = None
        self.exec_mode_time = -1
        self.parent_run_id: str | None = None
        self.refs: list[int] = []

    @property
    def state(self) -> str:
        if self.terminal is None:
            return "RUNNING"
        if self.skipped and self.terminal[1] != _TERMINAL["FAIL"][1]:
            return "SKIPPED"
        return {1: "COMPLETED", 2: "ABORTED", 3: "FAILED"}[self.terminal[1]]

    @property
    def started_at(self) -> int | None:
        return self.start if self.start is not None else self.first_seen

    def sort_key(self) -> tuple[int, str]:
        started = self.started_at
        return (started if started is not None else -(2**62), self.run_id or "")

    def summary(self) -> dict[str, object]:
        return {
            "runId": self.run_id,
            "state": self.state,
            "startedAt": w.format_micros(self.started_at),
            "endedAt": w.format_micros(self.end),
            "errorMessage": self.error,
        }

    def observe(self, event_type: str | None, micros: int, facets: w.RunFacets | None) -> None:
        if self.first_seen is None or micros < self.first_seen:
            self.first_seen = micros
        if event_type == "START" and (self.start is None or micros < self.start):
            self.start = micros
        terminal = _TERMINAL.get(event_type or "")
        skip = facets.skipState if facets is not None else None
        if terminal is not None:
            key = (micros, terminal[1])
            if self.terminal is None or key > self.terminal:
                self.terminal = key
                self.end = micros
                self.skipped = bool(skip and skip.skipped)
                self.skip_reason = skip.reason if skip and skip.skipped else None
            elif key == self.terminal and skip is not None and skip.skipped:
                self.skipped = True
                if skip.reason is not None and (self.skip_reason is None or skip.reason < self.skip_reason):
                    self.skip_reason = skip.reason
        if facets is None:
            return
        if facets.errorMessage is not None and facets.errorMessage.message is not None:
            error_key = (micros, facets.errorMessage.message)
            if self.error_key is None or error_key > self.error_key:
                self.error_key = error_key
                self.error = facets.errorMessage.message
        mode = facets.executionMode.mode if facets.executionMode is not None else None
        if mode is not None and (
            micros > self.exec_mode_time or (micros == self.exec_mode_time and mode < (self.exec_mode or ""))
        ):
            self.exec_mode = mode
            self.exec_mode_time = micros
        if facets.parent is not None and self.parent_run_id is None:
            self.parent_run_id = sys.intern(facets.parent.run.runId)  # shared by the DAG run's tasks

    @classmethod
    def restore(cls, state: tuple[Any, ...]) -> RunRecord:
        """A record from its exported ``_RUN_STATE`` values."""
        run = cls.__new__(cls)
        (
            run.run_id,
            run.job_id,
            run.start,
            run.first_seen,
            run.terminal,
            run.end,
            run.error,
            run.error_key,
            run.skipped,
            run.skip_reason,
            run.exec_mode,
            run.exec_mode_time,
            run.parent_run_id,
            run.refs,
        ) = state
        return run

    def absorb(self, later: RunRecord) -> None:
        """Fold in the same run as folded from events that come after this record's in the log.

        Gives exactly the record one fold over both event sequences gives (each rule below is the
        one :meth:`observe` applies event by event)."""
        if later.first_seen is not None and (self.first_seen is None or later.first_seen < self.first_seen):
            self.first_seen = later.first_seen
        if later.start is not None and (self.start is None or later.start < self.start):
            self.start = later.start
        if later.terminal is not None:
            if self.terminal is None or later.terminal > self.terminal:
                self.terminal, self.end = later.terminal, later.end
                self.skipped, self.skip_reason = later.skipped, later.skip_reason
            elif later.terminal == self.terminal and later.skipped:
                self.skipped = True
                reasons = [r for r in (self.skip_reason, later.skip_reason) if r is not None]
                self.skip_reason = min(reasons) if reasons else None
        if later.error_key is not None and (self.error_key is None or later.error_key > self.error_key):
            self.error_key, self.error = later.error_key, later.error
        mode = later.exec_mode
        if mode is not None and (
            later.exec_mode_time > self.exec_mode_time
            or (later.exec_mode_time == self.exec_mode_time and mode < (self.exec_mode or ""))
        ):
            self.exec_mode, self.exec_mode_time = mode, later.exec_mode_time
        if self.parent_run_id is None:
            self.parent_run_id = later.parent_run_id
        self.refs.extend(later.refs)


#: the fields of each record that a graph exported from a worker process carries (caches are left out)
_RUN_STATE = (
    "run_id",
    "job_id",
    "start",
    "first_seen",
    "terminal",
    "end",
    "error",
    "error_key",
    "skipped",
    "skip_reason",
    "exec_mode",
    "exec_mode_time",
    "parent_run_id",
    "refs",
)
_JOB_STATE = ("namespace", "name", "owners", "owners_key", "ref", "ref_time")  # + edges, from ``succ``
_DATASET_STATE = (
    "namespace",
    "name",
    "schemas",
    "fields",
    "fields_key",
    "owners",
    "owners_key",
    "columns",
    "columns_key",
    "ref",
    "ref_time",
    "write_ref",
    "write_time",
)


class JobRecord:
    __slots__ = (
        "blob_cache",
        "id",
        "last_inputs",
        "last_outputs",
        "latest_cache",
        "name",
        "namespace",
        "owners",
        "owners_key",
        "raw_cache",
        "ref",
        "ref_time",
        "runs",
        "sources",
        "targets",
    )

    def __init__(self, namespace: str, name: str) -> None:
        self.id = ids.job_id(namespace, name)
        self.namespace = namespace
        self.name = name
        self.runs: list[RunRecord] = []
        self.owners: tuple[str, ...] = ()
        self.owners_key: tuple[int, tuple[str, ...]] | None = None
        self.ref: int | None = None  # latest event of this job (for facets shown in details)
        self.ref_time = -1
        self.latest_cache: tuple[int, RunRecord | None] | None = None
        self.raw_cache: dict[str, tuple[msgspec.Raw, Any]] = {}
        self.blob_cache: dict[bytes, None] = {}  # bare inputs/outputs lists already folded
        self.last_inputs: msgspec.Raw | None = None  # the last of them, per direction
        self.last_outputs: msgspec.Raw | None = None
        self.sources: set[str] = set()  # input dataset ids already linked
        self.targets: set[str] = set()  # output dataset ids already linked


class DatasetRecord:
    __slots__ = (
        "columns",
        "columns_key",
        "facets_raw",
        "facts",
        "fields",
        "fields_key",
        "id",
        "name",
        "namespace",
        "owners",
        "owners_key",
        "raw_cache",
        "ref",
        "ref_time",
        "schemas",
        "write_ref",
        "write_time",
    )

    def __init__(self, namespace: str, name: str) -> None:
        self.id = ids.dataset_id(namespace, name)
        self.namespace = namespace
        self.name = name
        self.schemas: dict[Fields, int] = {}  # distinct (name, type) schema -> last time seen
        self.fields: tuple[tuple[str, str | None, str | None], ...] = ()  # latest schema, with descriptions
        self.fields_key: tuple[int, Fields] | None = None
        self.owners: tuple[str, ...] = ()
        self.owners_key: tuple[int, tuple[str, ...]] | None = None
        self.columns: dict[str, tuple[ColumnInput, ...]] = {}
        self.columns_key: tuple[int, str] | None = None
        self.ref: int | None = None
        self.ref_time = -1
        self.write_ref: int | None = None  # latest event that wrote it (quality figures)
        self.write_time = -1
        self.raw_cache: dict[str, tuple[msgspec.Raw, Any]] = {}  # facet -> (last raw bytes, decoded)
        self.facets_raw: msgspec.Raw | None = None  # the last facets seen, and what was kept of them
        self.facts: _DatasetFacts = (None, None, None, False)

    @classmethod
    def restore(cls, state: tuple[Any, ...]) -> DatasetRecord:
        """A record from its exported ``_DATASET_STATE`` values, without its column lineage (which
        :meth:`LineageGraph.set_columns` adds, indexing it)."""
        record = cls(state[0], state[1])
        (
            record.schemas,
            record.fields,
            record.fields_key,
            record.owners,
            record.owners_key,
            _,
            _,
            record.ref,
            record.ref_time,
            record.write_ref,
            record.write_time,
        ) = state[2:]
        return record

    def absorb_state(self, state: tuple[Any, ...]) -> None:
        """Fold in the same dataset's exported state (``_DATASET_STATE``) as folded from later events
        of the log; column lineage is left to :meth:`LineageGraph.set_columns`."""
        later_schemas, fields, fields_key, owners, owners_key = state[2:7]
        ref, ref_time, write_ref, write_time = state[9:]
        schemas = self.schemas
        for schema, seen in later_schemas.items():
            mine = schemas.get(schema)
            if mine is None or seen > mine:
                schemas[schema] = seen
        if fields_key is not None and (self.fields_key is None or fields_key > self.fields_key):
            self.fields_key, self.fields = fields_key, fields
        if owners_key is not None and (self.owners_key is None or owners_key > self.owners_key):
            self.owners_key, self.owners = owners_key, owners
        if ref is not None and ref_time >= self.ref_time:
            self.ref, self.ref_time = ref, ref_time
        if write_ref is not None and write_time >= self.write_time:
            self.write_ref, self.write_time = write_ref, write_time

    def schema_versions(self) -> list[Fields]:
        """Distinct schemas, newest first (ordered by the last time each was seen)."""
        return [
            schema for schema, _ in sorted(self.schemas.items(), key=lambda kv: (kv[1], kv[0]), reverse=True)
        ]


@dataclass
class _DagRunSkips:
    key: tuple[int, tuple[str, ...]]
    job_ids: tuple[str, ...]


class LineageGraph:
    """Directed graph: input dataset -> job -> output dataset, plus per-node history."""

    def __init__(self) -> None:
        self.jobs: dict[str, JobRecord] = {}
        self.datasets: dict[str, DatasetRecord] = {}
        self.succ: dict[str, set[str]] = {}
        self.pred: dict[str, set[str]] = {}
        self.runs: dict[str, RunRecord] = {}
        self.children: dict[str, set[str]] = {}  # parent run id -> job ids with a run under it
        self.dag_run_skips: dict[str, _DagRunSkips] = {}  # DAG run id -> jobs the scheduler skipped
        self.skipped_by: dict[str, set[str]] = {}  # job id -> DAG run ids that skipped it
        # (dataset id, field) -> {(dataset id, column)} that read it
        self.column_readers: dict[tuple[str, str], set[tuple[str, str]]] = {}
        self.version = 0
        self.salvaged = 0  # inputs/outputs lists that had to be trimmed
        # equal schema / column-lineage tuples shared by every dataset that has them (less memory, and
        # export_state writes each once)
        self.shared: dict[Any, Any] = {}
        self.shared_schemas: dict[FullFields, tuple[Fields, FullFields]] = {}

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
        if record.columns_key is not None and key <= record.columns_key:
            return
        if record.columns_key is not None and key[1] == record.columns_key[1]:
            record.columns_key = key  # same lineage seen later: nothing to re-index
            return
        for column, inputs in record.columns.items():
            for namespace, name, field, _ in inputs:
                readers = self.column_readers.get((ids.dataset_id(namespace, name), field))
                if readers is not None:
                    readers.discard((record.id, column))
        record.columns_key = key
        record.columns = columns
        for column, inputs in columns.items():
            for namespace, name, field, _ in inputs:
                self.column_readers.setdefault((ids.dataset_id(namespace, name), field), set()).add(
                    (record.id, column)
                )

    @staticmethod
    def set_owners(record: JobRecord | DatasetRecord, owners: tuple[str, ...], micros: int) -> None:
        key = (micros, owners)
        if record.owners_key is None or key > record.owners_key:
            record.owners_key = key
            record.owners = owners

    # -- folding events -------------------------------------------------------------------------
    def apply(self, event: w.Event, micros: int, ref: int) -> None:
        """Fold one decoded event (``ref`` locates its bytes for details). The hot loop of a load:
        written for speed (locals, positional calls, in-place byte comparisons)."""
        self.version += 1
        event_job = event.job
        if event_job is None:
            if event.dataset is not None:
                self._apply_dataset(event.dataset, micros, ref, False)
            return
        job_id = "job:" + event_job.namespace + ":" + event_job.name  # ids.job_id
        job = self.jobs.get(job_id)
        if job is None:
            job = self.jobs[job_id] = JobRecord(event_job.namespace, event_job.name)
        if micros >= job.ref_time:
            job.ref, job.ref_time = ref, micros
        job_facets = event_job.facets
        if job_facets is not None and len(job_facets.ownership):
            hit = job.raw_cache.get("ownership")
            if hit is not None and hit[0] == job_facets.ownership:
                owners = hit[1]
            else:
                owners = _cached(job.raw_cache, "ownership", job_facets.ownership, _parse_owners)
            if owners is not None:
                self.set_owners(job, owners, micros)
        event_type = event.eventType
        terminal = event_type in _TERMINAL
        if len(event.inputs) > 2:
            self._apply_list(job, event.inputs, micros, ref, False, terminal)
        if len(event.outputs) > 2:
            self._apply_list(job, event.outputs, micros, ref, True, terminal)
        if event.dataset is not None:
            self._apply_dataset(event.dataset, micros, ref, False)
        event_run = event.run
        if event_run is None:
            return
        facets = event_run.facets
        run = self.runs.get(event_run.runId)
        if run is None:
            run = RunRecord(event_run.runId, job_id)
            run.observe(event_type, micros, facets)
            self.add_run(job, run)
        else:
            had_parent = run.parent_run_id
            run.observe(event_type, micros, facets)
            if had_parent is None and run.parent_run_id is not None:
                self.children.setdefault(run.parent_run_id, set()).add(run.job_id)
        run.refs.append(ref)
        if facets is not None and facets.airflowState is not None and facets.airflowState.tasksState:
            self.apply_tasks_state(job, event_run.runId, facets.airflowState.tasksState, micros)

    def _apply_list(
        self, job: JobRecord, raw: object, micros: int, ref: int, output: bool, terminal: bool
    ) -> None:
        """Fold an inputs/outputs list. A list already seen for this job with no facets is skipped."""
        skip_known = not (output and terminal)
        data = None
        if skip_known:
            if raw == (job.last_outputs if output else job.last_inputs):
                return  # the job's last bare list again (compared in place, without a copy)
            data = bytes(raw)  # type: ignore[call-overload]
            if data in job.blob_cache:
                self._remember_bare(job, data, output)
                return  # the same bare list as before: every edge is already there, no facet to age
        items, salvaged = w.decode_datasets(raw)  # type: ignore[arg-type]
        if salvaged:
            self.salvaged += 1
        job_id = job.id
        linked = job.targets if output else job.sources
        bare = True
        for item in items:
            bare = bare and not len(item.facets)
            record = self._apply_dataset(item, micros, ref, output and terminal)
            if record.id not in linked:
                linked.add(record.id)
                if output:
                    self.add_edge(job_id, record.id)
                else:
                    self.add_edge(record.id, job_id)
        if bare:
            if data is None:
                data = bytes(raw)  # type: ignore[call-overload]
            cache = job.blob_cache
            if len(cache) >= 8:
                cache.clear()
            cache[data] = None
            self._remember_bare(job, data, output)

    @staticmethod
    def _remember_bare(job: JobRecord, data: bytes, output: bool) -> None:
        if output:
            job.last_outputs = msgspec.Raw(data)
        else:
            job.last_inputs = msgspec.Raw(data)

    def _apply_dataset(self, item: w.Dataset, micros: int, ref: int, written: bool) -> DatasetRecord:
        key = "dataset:" + item.namespace + ":" + item.name
        record = self.datasets.get(key)
        if record is None:
            record = self.datasets[key] = DatasetRecord(item.namespace, item.name)
        if written and micros >= record.write_time:
            record.write_ref, record.write_time = ref, micros
        facets = item.facets
        if not len(facets):
            return record
        if micros >= record.ref_time:
            record.ref, record.ref_time = ref, micros
        if facets == record.facets_raw:
            schema, owners, lineage, bad = record.facts  # the same facets as last time, compared in place
        else:
            schema, owners, lineage, bad = self._dataset_facts(record, facets)
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

    def _dataset_facts(self, record: DatasetRecord, raw: msgspec.Raw) -> _DatasetFacts:
        """What the graph keeps of a dataset's facets (each facet decoded only when it changed), cached
        with the bytes they came from. ``bad``: the facets are not a JSON object."""
        data = bytes(raw)
        facets = w.decode_dataset_facets(data)
        if facets is None:
            facts: _DatasetFacts = (None, None, None, True)
        else:
            cache = record.raw_cache
            facts = (
                _cached(cache, "schema", facets.schema, self._parse_schema) if len(facets.schema) else None,
                _cached(cache, "ownership", facets.ownership, _parse_owners)
                if len(facets.ownership)
                else None,
                _cached(cache, "columnLineage", facets.columnLineage, self._parse_columns)
                if len(facets.columnLineage)
                else None,
                False,
            )
        record.facets_raw, record.facts = msgspec.Raw(data), facts
        return facts

    def apply_tasks_state(
        self, dag: JobRecord, dag_run_id: str, states: dict[str, str | None], micros: int
    ) -> None:
        skipped = tuple(
            sorted(
                ids.job_id(dag.namespace, f"{dag.name}.{task}")
                for task, s in states.items()
                if s == "skipped"
            )
        )
        self._set_dag_run_skips(dag_run_id, (micros, skipped), skipped)

    def _set_dag_run_skips(
        self, dag_run_id: str, key: tuple[int, tuple[str, ...]], skipped: tuple[str, ...]
    ) -> None:
        current = self.dag_run_skips.get(dag_run_id)
        if current is not None and key <= current.key:
            return
        if current is not None:
            for job_id in current.job_ids:
                self.skipped_by.get(job_id, set()).discard(dag_run_id)
        self.dag_run_skips[dag_run_id] = _DagRunSkips(key, skipped)
        for job_id in skipped:
            self.skipped_by.setdefault(job_id, set()).add(dag_run_id)

    def _parse_schema(self, raw: bytes) -> tuple[Fields, FullFields] | None:
        schema = w.decode_schema(raw)
        if schema is None or schema.fields is None:
            return None
        full = tuple([(f.name, f.type, f.description) for f in schema.fields])
        known = self.shared_schemas.get(full)
        if known is None:  # a schema no dataset had yet: share its fields with the other schemas
            share = self.shared.setdefault
            full = tuple([share(field, field) for field in full])
            names = tuple([share(pair, pair) for pair in [(name, kind) for name, kind, _ in full]])
            known = self.shared_schemas[full] = (share(names, names), full)
        return known

    def _parse_columns(self, raw: bytes) -> tuple[dict[str, tuple[ColumnInput, ...]], str] | None:
        """The column lineage, and a digest of its bytes that breaks ties between lineages of one time."""
        lineage = w.decode_column_lineage(raw)
        if lineage is None or lineage.fields is None:
            return None
        share = self.shared.setdefault
        columns = {column: share(inputs, inputs) for column, inputs in _columns(lineage).items()}
        return columns, hashlib.blake2b(raw, digest_size=16).hexdigest()

    # -- reading --------------------------------------------------------------------------------
    def all_runs(self, job: JobRecord) -> Iterator[RunRecord]:
        """The job's runs, plus a SKIPPED run for each DAG run whose tasksState skipped it without a run."""
        yield from job.runs
        for dag_run_id in self.skipped_by.get(job.id, ()):
            if job.id in self.children.get(dag_run_id, ()):
                continue
            dag_run = self.runs.get(dag_run_id)
            synthetic = RunRecord(None, job.id)
            if dag_run is not None:
                synthetic.start, synthetic.end = dag_run.started_at, dag_run.end
            synthetic.terminal = (synthetic.end or 0, 1)
            synthetic.skipped = True
            synthetic.skip_reason = SCHEDULER_SKIP_REASON
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

    def has_node(self, node_id: str) -> bool:
        return node_id in self.jobs or node_id in self.datasets

    # -- folding a log in parts -----------------------------------------------------------------
    def export_state(self) -> bytes:
        """Everything the graph knows, as compact bytes for :meth:`absorb` in another process.

        ``marshal`` of plain tuples: the graph holds only str/int/None/tuple/dict/set values, and
        this is several times faster than pickling the slotted records."""
        return marshal.dumps(
            (
                list(map(operator.attrgetter(*_JOB_STATE), self.jobs.values())),
                list(map(operator.attrgetter(*_RUN_STATE), self.runs.values())),
                list(map(operator.attrgetter(*_DATASET_STATE), self.datasets.values())),
                self.succ,  # pred, and each job's sources and targets, are its mirror image
                {dag_run: (skips.key, skips.job_ids) for dag_run, skips in self.dag_run_skips.items()},
                self.version,
                self.salvaged,
            )
        )

    def absorb(self, exported: bytes) -> None:
        """Merge in the :meth:`export_state` of a graph folded from the events that follow this graph's
        in the log. The result is the graph one fold over both parts in log order gives: every fact is
        "latest by event time, ties broken by content" (or, for event references, by log order), and
        both parts are folded with the same rules (``tests/graph/test_split_load.py`` checks this)."""
        jobs, runs, datasets, succ, skips, version, salvaged = marshal.loads(exported)
        for namespace, name, owners, owners_key, ref, ref_time in jobs:
            job = self.job(namespace, name)
            if owners_key is not None and (job.owners_key is None or owners_key > job.owners_key):
                job.owners_key, job.owners = owners_key, owners
            if ref is not None and ref_time >= job.ref_time:
                job.ref, job.ref_time = ref, ref_time
        runs_by_id, children, restore = self.runs, self.children, RunRecord.restore
        for values in runs:
            later = restore(values)
            run = runs_by_id.get(values[0])
            if run is None:  # add_run, inlined: most runs are in one part only
                self.jobs[later.job_id].runs.append(later)
                runs_by_id[values[0]] = later
                if later.parent_run_id is not None:
                    children.setdefault(later.parent_run_id, set()).add(later.job_id)
                continue
            had_parent = run.parent_run_id
            run.absorb(later)
            if had_parent is None and run.parent_run_id is not None:
                self.children.setdefault(run.parent_run_id, set()).add(run.job_id)
        for values in datasets:
            key = ids.dataset_id(values[0], values[1])
            record = self.datasets.get(key)
            if record is None:
                record = self.datasets[key] = DatasetRecord.restore(values)
            else:
                record.absorb_state(values)
            columns, columns_key = values[7], values[8]
            if columns_key is not None:
                self.set_columns(record, columns, columns_key[0], columns_key[1])
        jobs_by_id, add_edge = self.jobs, self.add_edge
        for origin, destinations in succ.items():
            origin_job = jobs_by_id.get(origin)
            for destination in destinations:
                add_edge(origin, destination)
                if origin_job is not None:
                    origin_job.targets.add(destination)
                else:
                    jobs_by_id[destination].sources.add(origin)
        for dag_run_id, (key, job_ids) in skips.items():
            self._set_dag_run_skips(dag_run_id, key, job_ids)
        self.version += version
        self.salvaged += salvaged


def _cached(
    cache: dict[str, tuple[msgspec.Raw, Any]], facet: str, raw: Any, decode: Callable[[bytes], _T]
) -> _T:
    """The decoded facet, decoding only when its bytes differ from the last ones seen for this record
    (compared in place; copied only when they differ)."""
    hit = cache.get(facet)
    if hit is not None and hit[0] == raw:
        return hit[1]  # type: ignore[no-any-return]
    data = bytes(raw)
    value = decode(data)
    cache[facet] = (msgspec.Raw(data), value)
    return value


def _parse_owners(raw: bytes) -> tuple[str, ...] | None:
    ownership = w.decode_ownership(raw)
    return None if ownership is None else _owner_names(ownership)


def _owner_names(ownership: w.Ownership) -> tuple[str, ...]:
    return tuple(sorted({owner.name for owner in ownership.owners or ()}))


def _columns(lineage: w.ColumnLineage) -> dict[str, tuple[ColumnInput, ...]]:
    columns: dict[str, tuple[ColumnInput, ...]] = {}
    for column, spec in (lineage.fields or {}).items():
        inputs: list[ColumnInput] = []
        for field in spec.inputFields or ():
            if field.transformations:
                transforms = tuple((t.type, t.subtype, t.description) for t in field.transformations)
            elif spec.transformationType is not None:
                transforms = ((None, spec.transformationType, spec.transformationDescription),)
            else:
                transforms = ()
            inputs.append((field.namespace, field.name, field.field, transforms))
        columns[column] = tuple(sorted(inputs))
    return columns
