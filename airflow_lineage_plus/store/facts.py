"""What one OpenLineage event says, as the rows of the folded-state tables (:mod:`.schema`).

:class:`Facts` collects, event by event, one named row type per table; :mod:`.fold` writes them with the
folding rules. Nothing here decides which fact wins: a row carries the event time (and tie-breaker) it came
from, and the store's writes keep the right one, whatever order the events arrive in.

Every field of an event is hostile. The event is decoded leniently (:mod:`.wire`: a facet or dataset of
an unexpected shape is dropped, the rest kept) and keys are hashes of the ids (:func:`key_of`), so a name
of any length indexes the same. Tie-breakers are an order-preserving byte encoding (:func:`text_tie`,
:func:`tuple_tie`): comparing them byte by byte, as every engine compares binary values, orders them as
Python orders the strings and tuples they encode.
"""

from __future__ import annotations

import functools
import hashlib
from collections.abc import Iterable, Sequence
from typing import Any, NamedTuple

import attrs
import orjson

from airflow_lineage_plus import node_ids as ids
from airflow_lineage_plus.store import wire as w

#: event type -> rank of a terminal event (the higher wins when two end a run at the same time)
TERMINAL_RANK = {"COMPLETE": 1, "ABORT": 2, "FAIL": 3}
#: the Airflow task-instance state the skip facet and ``tasksState`` use for "an upstream task failed"
AIRFLOW_UPSTREAM_FAILED = "upstream_failed"
JOB_KIND, DATASET_KIND = 0, 1

# -- declared lineage's tier of time -------------------------------------------------------------------
#: How far below every run fact a declared fact is kept (event times are epoch microseconds, ~2**51 now).
_TIER = 1 << 60
#: The time of "never": below every declared time too.
NEVER = -(1 << 62)


def declared_time(micros: int) -> int:
    """``micros`` (an event time) moved into the declared tier: earlier than any run's fact."""
    return micros - _TIER


def is_declared_time(micros: int) -> bool:
    """Whether a fact's time is in the declared tier."""
    return NEVER < micros < -(_TIER >> 1)


def declaration_tie(edges: Iterable[tuple[str, str]]) -> str:
    """A digest of a declaration's edges: breaks ties between declarations of the same time."""
    return hashlib.blake2b(repr(sorted(edges)).encode(), digest_size=8).hexdigest()


# -- keys and tie-breakers ------------------------------------------------------------------------------
@functools.lru_cache(maxsize=1 << 16)
def key_of(text: str) -> int:
    """The store's key of an id: a 63-bit BLAKE2b hash (a non-negative BIGINT on every engine)."""
    return int.from_bytes(hashlib.blake2b(text.encode(), digest_size=8).digest(), "big") >> 1


def run_key(run_id: str) -> int:
    """The key of a run id."""
    return key_of("run:" + run_id)


def column_key(dataset_id: str, column: str) -> int:
    """The key of one column of a dataset."""
    return key_of(dataset_id + "\0" + column)


_END = b"\x00\x00"  # after the last item of a tuple: below every item's first bytes


def text_tie(text: str) -> bytes:
    """``text`` as bytes that compare as Python compares the strings (prefix-free: NUL is escaped)."""
    return text.encode().replace(b"\x00", b"\x00\xff") + b"\x00\x01"


def tuple_tie(items: Iterable[str | tuple[str | None, ...] | None]) -> bytes:
    """A tuple of strings (or of tuples of strings or None: None before every string) as bytes that
    compare as Python compares the tuples."""
    parts = []
    for item in items:
        if isinstance(item, tuple):
            parts.append(b"".join(b"\x02" if part is None else b"\x03" + text_tie(part) for part in item))
        elif item is None:
            parts.append(b"\x02")
        else:
            parts.append(text_tie(item))
    return b"".join(parts) + _END


def least_tie(text: str) -> bytes:
    """A tie-breaker under which the *least* string wins (the newest rule keeps the greatest tie): the
    bytes of :func:`text_tie` inverted, which reverses their order (they are prefix-free)."""
    return bytes(255 - byte for byte in text_tie(text))


def int_tie(value: int) -> bytes:
    """A non-negative integer as bytes that compare as the integers do."""
    return value.to_bytes(8, "big")


def json_text(value: Any) -> str:
    return orjson.dumps(value).decode()


# -- one row type per table -----------------------------------------------------------------------------
class NodeRow(NamedTuple):
    node_key: int
    kind: int
    node_id: str
    namespace: str
    name: str


class EdgeRow(NamedTuple):
    job_key: int
    dataset_key: int
    output: int
    job_id: str
    dataset_id: str
    first_reported: int | None
    declared: int


class RunRow(NamedTuple):
    run_key: int
    run_id: str
    job_key: int
    start: int | None
    first_seen: int
    sort_time: int
    dag_id: str | None
    airflow_run_key: int | None


class RunStateRow(NamedTuple):
    run_key: int
    end_time: int
    rank: int
    skipped: int
    upstream_failed: int
    reason_tie: bytes
    skip_reason: str


class RunParentRow(NamedTuple):
    run_key: int
    parent_run_id: str
    parent_job_id: str
    parent_key: int


class RunTriggerRow(NamedTuple):
    """An upstream job run a run's ``jobDependencies`` facet names (``upstream_run_id`` '' when it names
    no run): for an asset-triggered DAG run, a task run whose asset event started it."""

    run_key: int
    upstream_job_key: int
    upstream_run_key: int
    run_id: str
    upstream_job_id: str
    upstream_run_id: str


class RunIoRow(NamedTuple):
    run_key: int
    dataset_key: int
    output: int


class RunEventRow(NamedTuple):
    run_key: int
    ref: int


class FactRow(NamedTuple):
    subject_key: int
    fact: str
    event_time: int
    tie: bytes
    value: str


class SchemaRow(NamedTuple):
    dataset_key: int
    digest: bytes
    fields: str
    last_seen: int


class ColumnReaderRow(NamedTuple):
    input_key: int
    reader_key: int
    column_key: int
    reader_column: str


class SkippedTaskRow(NamedTuple):
    job_key: int
    dag_run_key: int
    event_time: int
    tie: bytes
    upstream_failed: int


#: the facts kept in ``lineage_plus_fact`` (its ``fact`` column)
JOB_REF, OWNERS, SLO, DECLARED = "ref", "owners", "slo", "declared"
DATASET_REF, WRITE, FIELDS, COLUMNS = "ref", "write", "fields", "columns"
ERROR, MODE, TASKS = "error", "mode", "tasks"


@attrs.define
class Facts:
    """The rows of a batch of events, table by table, and what could not be read (``problems``)."""

    nodes: list[NodeRow] = attrs.Factory(list)
    edges: list[EdgeRow] = attrs.Factory(list)
    runs: list[RunRow] = attrs.Factory(list)
    run_states: list[RunStateRow] = attrs.Factory(list)
    parents: list[RunParentRow] = attrs.Factory(list)
    triggers: list[RunTriggerRow] = attrs.Factory(list)
    run_io: list[RunIoRow] = attrs.Factory(list)
    run_events: list[RunEventRow] = attrs.Factory(list)
    facts: list[FactRow] = attrs.Factory(list)
    schemas: list[SchemaRow] = attrs.Factory(list)
    column_readers: list[ColumnReaderRow] = attrs.Factory(list)
    skipped_tasks: list[SkippedTaskRow] = attrs.Factory(list)
    problems: dict[str, int] = attrs.Factory(dict)
    events: int = 0
    #: the earliest and the latest event time of the events read (epoch µs), None before any
    first_time: int | None = None
    last_time: int | None = None

    def __len__(self) -> int:
        return self.events

    def add_bytes(self, payload: bytes | memoryview, ref: int) -> bool:
        """Read one event's JSON bytes (``ref``: where it is kept); whether the graph can use it (else
        the reason is counted in ``problems``)."""
        try:
            event, micros, salvaged = w.decode(payload)
        except w.BadEventError as exc:
            self._problem(exc.kind)
            return False
        if salvaged:
            self._problem("salvaged")
        self.add(event, micros, ref)
        return True

    def add(self, event: w.Event, micros: int, ref: int) -> None:
        """Read one decoded event (``micros``: its time)."""
        self.events += 1
        if self.first_time is None or micros < self.first_time:
            self.first_time = micros
        if self.last_time is None or micros > self.last_time:
            self.last_time = micros
        job = event.job
        if job is None:
            if event.dataset is not None:
                self._dataset(event.dataset, micros, ref, written=False)
            return
        run = event.run
        if run is None:  # a JobEvent: lineage declared in code, below every run's facts
            micros = declared_time(micros)
        job_id = ids.job_id(job.namespace, job.name)
        job_key = key_of(job_id)
        self.nodes.append(NodeRow(job_key, JOB_KIND, job_id, job.namespace, job.name))
        self.facts.append(FactRow(job_key, JOB_REF, micros, int_tie(ref), str(ref)))
        self._job_facets(job, job_key, micros)
        if run is None:
            self._declaration(event, job_id, job_key, micros, ref)
            if event.dataset is not None:
                self._dataset(event.dataset, micros, ref, written=False)
            return
        self._run(event, run, job_id, job_key, micros, ref)

    def of_dataset(self, dataset_id: str) -> Facts:
        """The rows of what these events say of one dataset only (its node, facts, schemas and the
        column lineage it has), as if only its facets had been read."""
        key = key_of(dataset_id)
        return Facts(
            nodes=[row for row in self.nodes if row.node_key == key and row.node_id == dataset_id],
            facts=[row for row in self.facts if row.subject_key == key],
            schemas=[row for row in self.schemas if row.dataset_key == key],
            column_readers=[row for row in self.column_readers if row.reader_key == key],
            problems=self.problems,
            events=self.events,
            first_time=self.first_time,
            last_time=self.last_time,
        )

    def _problem(self, kind: str) -> None:
        self.problems[kind] = self.problems.get(kind, 0) + 1

    def _job_facets(self, job: w.Job, job_key: int, micros: int) -> None:
        facets = job.facets
        if facets is None:
            return
        if len(facets.ownership):
            owners = _owners(bytes(facets.ownership))
            if owners is not None:
                self.facts.append(FactRow(job_key, OWNERS, micros, *owners))
        if len(facets.sloTier):
            minutes = w.decode_freshness_minutes(bytes(facets.sloTier))
            if minutes is not None:
                self.facts.append(FactRow(job_key, SLO, micros, int_tie(minutes), str(minutes)))

    def _declaration(self, event: w.Event, job_id: str, job_key: int, micros: int, ref: int) -> None:
        """A JobEvent's inputs and outputs: the job's declaration (its datasets' facts included)."""
        edges: set[tuple[str, str]] = set()
        for raw, output in ((event.inputs, 0), (event.outputs, 1)):
            for item in self._datasets(raw):
                dataset_id, dataset_key = self._dataset(item, micros, ref, written=False)
                edges.add((job_id, dataset_id) if output else (dataset_id, job_id))
                self.edges.append(EdgeRow(job_key, dataset_key, output, job_id, dataset_id, None, 1))
        if len(event.inputs) or len(event.outputs):  # even an empty list declares: nothing
            tie = declaration_tie(edges)
            self.facts.append(FactRow(job_key, DECLARED, micros, tie.encode(), json_text(sorted(edges))))

    def _run(self, event: w.Event, run: w.Run, job_id: str, job_key: int, micros: int, ref: int) -> None:
        key = run_key(run.runId)
        facets = run.facets
        start = micros if event.eventType == "START" else None
        dag_id, airflow_run = _airflow_ids(facets) if facets is not None else (None, None)
        airflow_run_key = key_of(airflow_run) if airflow_run is not None else None
        self.runs.append(RunRow(key, run.runId, job_key, start, micros, micros, dag_id, airflow_run_key))
        self.run_events.append(RunEventRow(key, ref))
        rank = TERMINAL_RANK.get(event.eventType or "")
        if rank is not None:
            skip = facets.skipState if facets is not None else None
            skipped = bool(skip and skip.skipped)
            reason = (skip.reason or "") if skip is not None and skipped else ""
            failed = skipped and skip is not None and skip.state == AIRFLOW_UPSTREAM_FAILED
            state = RunStateRow(key, micros, rank, int(skipped), int(failed), least_tie(reason), reason)
            self.run_states.append(state)
        for raw, output in ((event.inputs, 0), (event.outputs, 1)):
            for item in self._datasets(raw):
                written = bool(output) and rank is not None
                dataset_id, dataset_key = self._dataset(item, micros, ref, written=written)
                self.edges.append(EdgeRow(job_key, dataset_key, output, job_id, dataset_id, micros, 0))
                self.run_io.append(RunIoRow(key, dataset_key, output))
        if event.dataset is not None:
            self._dataset(event.dataset, micros, ref, written=False)
        if facets is not None:
            self._run_facets(facets, key, run.runId, event.job, micros)

    def _run_facets(self, facets: w.RunFacets, key: int, run_id: str, job: w.Job | None, micros: int) -> None:
        if facets.errorMessage is not None and facets.errorMessage.message is not None:
            message = facets.errorMessage.message
            self.facts.append(FactRow(key, ERROR, micros, text_tie(message), json_text(message)))
        mode = facets.executionMode.mode if facets.executionMode is not None else None
        if mode is not None:
            self.facts.append(FactRow(key, MODE, micros, least_tie(mode), json_text(mode)))
        if facets.parent is not None:
            parent = facets.parent
            parent_job = ids.job_id(parent.job.namespace, parent.job.name) if parent.job is not None else ""
            self.parents.append(RunParentRow(key, parent.run.runId, parent_job, run_key(parent.run.runId)))
        if facets.jobDependencies is not None:
            for dependency in facets.jobDependencies.upstream or ():
                upstream_job = ids.job_id(dependency.job.namespace, dependency.job.name)
                upstream_run = dependency.run.runId if dependency.run is not None else ""
                self.triggers.append(
                    RunTriggerRow(
                        key, key_of(upstream_job), run_key(upstream_run), run_id, upstream_job, upstream_run
                    )
                )
        if job is not None and facets.airflowState is not None and facets.airflowState.tasksState:
            self._tasks_state(facets.airflowState.tasksState, key, run_id, job, micros)

    def _tasks_state(
        self, states: dict[str, str | None], key: int, run_id: str, dag: w.Job, micros: int
    ) -> None:
        """The tasks a DAG run's ``tasksState`` says never ran: skipped, or upstream failed."""
        dag_job_id = ids.job_id(dag.namespace, dag.name)
        skipped, failed = not_run(dag.namespace, dag.name, states)
        tie = tuple_tie((skipped, failed))
        value = {"dag_run_id": run_id, "dag_job": dag_job_id, "skipped": skipped, "upstream_failed": failed}
        self.facts.append(FactRow(key, TASKS, micros, tie, json_text(value)))
        failed_set = set(failed)
        for job_id in skipped:
            self.skipped_tasks.append(
                SkippedTaskRow(key_of(job_id), key, micros, tie, int(job_id in failed_set))
            )

    def _datasets(self, raw: Any) -> Sequence[w.Dataset]:
        if len(raw) <= 2:
            return ()
        items, salvaged = w.decode_datasets(raw)
        if salvaged:
            self._problem("salvaged")
        return items

    def _dataset(self, item: w.Dataset, micros: int, ref: int, *, written: bool) -> tuple[str, int]:
        """One mention of a dataset (``written``: as a terminal event's output): (its id, its key)."""
        dataset_id = ids.dataset_id(item.namespace, item.name)
        key = key_of(dataset_id)
        self.nodes.append(NodeRow(key, DATASET_KIND, dataset_id, item.namespace, item.name))
        if written:
            self.facts.append(FactRow(key, WRITE, micros, int_tie(ref), str(ref)))
        if len(item.facets):
            self.facts.append(FactRow(key, DATASET_REF, micros, int_tie(ref), str(ref)))
            self._dataset_facets(bytes(item.facets), dataset_id, key, micros)
        return dataset_id, key

    def _dataset_facets(self, raw: bytes, dataset_id: str, key: int, micros: int) -> None:
        facets = _dataset_facets(raw)
        if facets is None:
            self._problem("salvaged")
            return
        if facets.fields is not None:
            tie, full, digest, names = facets.fields
            self.facts.append(FactRow(key, FIELDS, micros, tie, full))
            self.schemas.append(SchemaRow(key, digest, names, micros))
        if facets.owners is not None:
            self.facts.append(FactRow(key, OWNERS, micros, *facets.owners))
        if facets.columns is not None:
            tie, columns, readers = facets.columns
            self.facts.append(FactRow(key, COLUMNS, micros, tie, columns))
            for source, reading, column in readers:
                self.column_readers.append(ColumnReaderRow(source, key, reading, column))


class DatasetFacets(NamedTuple):
    """What the folded state keeps of a dataset's facets, whichever dataset they are of: the schema's
    (tie, fields with descriptions, digest, (name, type) fields), the owners' (tie, names) and the column
    lineage's (tie, columns, the columns it reads as (source key, column key, column))."""

    fields: tuple[bytes, str, bytes, str] | None
    owners: tuple[bytes, str] | None
    columns: tuple[bytes, str, tuple[tuple[int, int, str], ...]] | None


def _dataset_facets(raw: bytes) -> DatasetFacets | None:
    """A dataset's facets; None when they are not an object. Each facet is read once per distinct bytes
    (a dataset carries the same schema and column lineage run after run, beside figures that change)."""
    facets = w.decode_dataset_facets(raw)
    if facets is None:
        return None
    return DatasetFacets(
        _schema(bytes(facets.schema)) if len(facets.schema) else None,
        _owners(bytes(facets.ownership)) if len(facets.ownership) else None,
        _columns(bytes(facets.columnLineage)) if len(facets.columnLineage) else None,
    )


@functools.lru_cache(maxsize=1 << 15)
def _schema(raw: bytes) -> tuple[bytes, str, bytes, str] | None:
    schema = w.decode_schema(raw)
    if schema is None or schema.fields is None:
        return None
    full = [(f.name, f.type, f.description) for f in schema.fields]
    names = tuple((name, kind) for name, kind, _ in full)
    tie = tuple_tie(names)
    return tie, json_text(full), hashlib.blake2b(tie, digest_size=16).digest(), json_text(names)


@functools.lru_cache(maxsize=1 << 12)
def _owners(raw: bytes) -> tuple[bytes, str] | None:
    names = w.decode_owner_names(raw)
    return None if names is None else (tuple_tie(names), json_text(names))


@functools.lru_cache(maxsize=1 << 15)
def _columns(raw: bytes) -> tuple[bytes, str, tuple[tuple[int, int, str], ...]] | None:
    lineage = w.decode_column_lineage(raw)
    if lineage is None or lineage.fields is None:
        return None
    found = w.column_inputs(lineage)
    readers = tuple(
        (column_key(ids.dataset_id(namespace, name), field), key_of(column), column)
        for column, inputs in found.items()
        for namespace, name, field, _ in inputs
    )
    return hashlib.blake2b(raw, digest_size=16).hexdigest().encode(), json_text(found), readers


def not_run(
    namespace: str, dag: str, states: dict[str, str | None]
) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """(every job a DAG run's ``tasksState`` says did not run, those of them whose upstream failed),
    sorted ids: the jobs ``<dag>.<task>`` of the DAG's namespace, skipped or upstream failed."""
    gone = {task: s for task, s in states.items() if s in ("skipped", AIRFLOW_UPSTREAM_FAILED)}
    job_ids = {task: ids.job_id(namespace, f"{dag}.{task}") for task in gone}
    skipped = tuple(sorted(job_ids.values()))
    failed = tuple(sorted(job_ids[t] for t, s in gone.items() if s == AIRFLOW_UPSTREAM_FAILED))
    return skipped, failed


def _airflow_ids(facets: w.RunFacets) -> tuple[str | None, str | None]:
    """The DAG id and the DAG run's Airflow ``run_id`` the provider's ``airflow`` (task) or
    ``airflowDagRun`` (DAG run) facet names (each None when no facet names it)."""
    dag_id = run_id = None
    for facet in (facets.airflow, facets.airflowDagRun):
        if facet is None:
            continue
        if dag_id is None and facet.dag is not None and facet.dag.dag_id:
            dag_id = facet.dag.dag_id
        if run_id is None and facet.dagRun is not None and facet.dagRun.run_id:
            run_id = facet.dagRun.run_id
    return dag_id, run_id
