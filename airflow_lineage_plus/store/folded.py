"""Reading the folded state: the rows a question needs, a batch of keys at a time.

Each read takes many keys at once (one query per table and batch, whatever the number of keys), so a
walk costs a few queries per level, not per node. A :class:`FoldedState` reads through one connection in
one transaction (one snapshot) for each step of a question (:meth:`FoldedState.batch`), and a question
asked through :class:`~airflow_lineage_plus.graph.LineageQueries` holds one for all of its steps
(:meth:`LineageStore.read`): what it reads is consistent, and it pays for a connection once. Rows come
back as the named row types of :mod:`.facts` (or small named tuples of their own); the ids stored beside
the hashed keys are compared with the ids asked for, so two ids with one key never mix. What the rows mean
is the graph's business (:mod:`airflow_lineage_plus.graph.stored_graph`).
"""

from __future__ import annotations

import contextlib
import threading
from collections.abc import Iterable, Iterator, Sequence
from typing import Any, NamedTuple, TypeVar

import sqlalchemy as sa

from airflow_lineage_plus.store import adjacent as a
from airflow_lineage_plus.store import facts as f
from airflow_lineage_plus.store import schema
from airflow_lineage_plus.store.database import LineageStore
from airflow_lineage_plus.store.keys import key_in

#: keys per query (well under every engine's limit of bound parameters)
CHUNK = 500
#: before every time a run sorts by
_EARLIEST = -(2**62)
_T = TypeVar("_T")


class Run(NamedTuple):
    """A run with its state (None before it ended), its parent (None without one) and its facts (the
    newest error and execution mode; a DAG run's tasksState)."""

    row: f.RunRow
    state: f.RunStateRow | None
    parent: f.RunParentRow | None
    facts: dict[str, f.FactRow]


class RunIo(NamedTuple):
    """An edge a run reported: the dataset's id, and whether the run wrote it."""

    run_key: int
    dataset_id: str
    output: int


class Child(NamedTuple):
    """A run whose parent is ``parent_run_id``, and its job."""

    parent_run_id: str
    run_key: int
    job_id: str


class SkippedIn(NamedTuple):
    """A DAG run whose latest ``tasksState`` says the job did not run."""

    job_key: int
    dag_run_key: int
    upstream_failed: int
    #: when that tasksState was sent (its DAG run started before)
    event_time: int


def _chunks(keys: Iterable[_T]) -> Iterator[list[_T]]:
    items = sorted(set(keys))  # type: ignore[type-var]
    for start in range(0, len(items), CHUNK):
        yield items[start : start + CHUNK]


_node, _fact, _edge, _run = schema.node, schema.fact, schema.edge, schema.run
_state, _parent = schema.run_state, schema.run_parent
_NODES = (
    sa.select(*_node.c, *_fact.c)
    .outerjoin(_fact, _fact.c.subject_key == _node.c.node_key)
    .where(key_in(_node.c.node_key))
)
_FACTS = sa.select(*_fact.c).where(key_in(_fact.c.subject_key))
_LAST_EVENTS = sa.select(_fact.c.subject_key, _fact.c.event_time).where(
    key_in(_fact.c.subject_key), _fact.c.fact == f.JOB_REF
)
_LAST_SKIPS = (
    sa.select(schema.skipped_task.c.job_key, sa.func.max(schema.skipped_task.c.event_time))
    .where(key_in(schema.skipped_task.c.job_key))
    .group_by(schema.skipped_task.c.job_key)
)
_JOB_EDGES = sa.select(*_edge.c).where(key_in(_edge.c.job_key))
_DATASET_EDGES = sa.select(*_edge.c).where(key_in(_edge.c.dataset_key))
_WRITER_EDGES = _DATASET_EDGES.where(_edge.c.output == 1)
#: the facts a run has (the newest error and execution mode; a DAG run's tasksState)
_RUN_FACTS = frozenset({f.ERROR, f.MODE, f.TASKS})
#: a run with its state, parent and facts: a row per fact it has (one probe of the fact key for them
#: all; only a run's own facts have its key), one when it has none; :func:`_runs_of` puts them together
_RUN_COLUMNS = sa.select(*_run.c, *_state.c, *_parent.c, *_fact.c).select_from(
    _run.outerjoin(_state, _state.c.run_key == _run.c.run_key)
    .outerjoin(_parent, _parent.c.run_key == _run.c.run_key)
    .outerjoin(_fact, _fact.c.subject_key == _run.c.run_key)
)
_JOB_RUNS = _RUN_COLUMNS.where(key_in(_run.c.job_key))
#: each job's newest runs: those started (else first seen) at or after the ``skip + 1``-th newest's time
#: (all, when fewer), and whether it has older ones; each a few index probes, however many runs it has.
#: The OFFSET keeps the jobs' times a subquery of their own: PostgreSQL would otherwise pull it into the
#: outer query and find each job's time again for every run (and again for ``partial``), 4x the time
_newer, _older = _run.alias("newer"), _run.alias("older")
_windows = (
    sa.select(
        _node.c.node_key.label("job_key"),
        sa.select(_newer.c.sort_time)
        .where(_newer.c.job_key == _node.c.node_key)
        .order_by(_newer.c.sort_time.desc())
        .limit(1)
        .offset(sa.bindparam("skip"))
        .scalar_subquery()
        .label("since"),
    )
    .where(key_in(_node.c.node_key))
    .offset(0)
    .subquery()
)
_NEWEST_RUNS = _RUN_COLUMNS.add_columns(
    _windows.c.since,
    sa.exists()
    .where(_older.c.job_key == _windows.c.job_key, _older.c.sort_time < _windows.c.since)
    .label("partial"),
).where(
    _run.c.job_key == _windows.c.job_key,
    _run.c.sort_time >= sa.func.coalesce(_windows.c.since, _EARLIEST),
)
_ENDED_RUNS = (
    sa.select(_run.c.job_key, _run.c.sort_time)
    .select_from(_run.join(_state, _state.c.run_key == _run.c.run_key))
    .where(key_in(_run.c.job_key), _state.c.end_time >= sa.bindparam("since"))
)
_JOB_DAGS = (
    sa.select(_run.c.job_key, _run.c.dag_id, sa.func.count())
    .where(key_in(_run.c.job_key))
    .group_by(_run.c.job_key, _run.c.dag_id)
)
#: the earliest and the latest of the runs' first event, start and end times (one row per chunk of jobs)
_RUN_TIMES = (
    sa.select(
        *(
            aggregate(column)
            for aggregate in (sa.func.min, sa.func.max)
            for column in (_run.c.first_seen, _run.c.start, _state.c.end_time)
        )
    )
    .select_from(_run.outerjoin(_state, _state.c.run_key == _run.c.run_key))
    .where(key_in(_run.c.job_key))
)
_RUNS = _RUN_COLUMNS.where(key_in(_run.c.run_key))
_AIRFLOW_RUNS = (
    sa.select(_run.c.run_id)
    .where(
        _run.c.job_key == sa.bindparam("job_key"), _run.c.airflow_run_key == sa.bindparam("airflow_run_key")
    )
    .order_by(_run.c.sort_time.desc(), _run.c.run_id.desc())
    .limit(sa.bindparam("limit"))
)
_JOB_IDS = sa.select(_node.c.node_key, _node.c.node_id).where(key_in(_node.c.node_key))
_IO = (
    sa.select(schema.run_io.c.run_key, _node.c.node_id, schema.run_io.c.output)
    .join(_node, _node.c.node_key == schema.run_io.c.dataset_key)
    .where(key_in(schema.run_io.c.run_key))
)
_REFS = sa.select(schema.run_event.c.run_key, schema.run_event.c.ref).where(
    key_in(schema.run_event.c.run_key)
)
#: where the events are of the runs of some jobs that reported one dataset
_NAMING_REFS = (
    sa.select(schema.run_event.c.ref)
    .select_from(
        _run.join(schema.run_io, schema.run_io.c.run_key == _run.c.run_key).join(
            schema.run_event, schema.run_event.c.run_key == _run.c.run_key
        )
    )
    .where(
        key_in(_run.c.job_key),
        schema.run_io.c.dataset_key == sa.bindparam("dataset"),
        _run.c.first_seen <= sa.bindparam("before"),
    )
)
_CHILDREN = (
    sa.select(_parent.c.parent_run_id, _parent.c.run_key, _node.c.node_id)
    .join(_run, _run.c.run_key == _parent.c.run_key)
    .join(_node, _node.c.node_key == _run.c.job_key)
    .where(key_in(_parent.c.parent_key))
)
_TRIGGERS = sa.select(*schema.run_trigger.c).where(key_in(schema.run_trigger.c.run_key))
_SCHEMAS = sa.select(*schema.dataset_schema.c).where(key_in(schema.dataset_schema.c.dataset_key))
_READERS = (
    sa.select(schema.column_reader.c.input_key, _node.c.node_id, schema.column_reader.c.reader_column)
    .join(_node, _node.c.node_key == schema.column_reader.c.reader_key)
    .where(key_in(schema.column_reader.c.input_key))
)
_SKIPPED = (
    sa.select(
        schema.skipped_task.c.job_key,
        schema.skipped_task.c.dag_run_key,
        schema.skipped_task.c.upstream_failed,
        schema.skipped_task.c.event_time,
    )
    .join(
        _fact,
        sa.and_(
            _fact.c.subject_key == schema.skipped_task.c.dag_run_key,
            _fact.c.fact == f.TASKS,
            _fact.c.event_time == schema.skipped_task.c.event_time,
            _fact.c.tie == schema.skipped_task.c.tie,
        ),
    )
    .where(key_in(schema.skipped_task.c.job_key))
)
#: the jobs with a run started (else first seen) at their newest run's time that ended ABORTED or FAILED:
#: a few index probes per job (driven by the jobs: the run table is not scanned)
_newest_time = (
    sa.select(_newer.c.sort_time)
    .where(_newer.c.job_key == _node.c.node_key)
    .order_by(_newer.c.sort_time.desc())
    .limit(1)
    .correlate(_node)
    .scalar_subquery()
)
_LATEST_ENDED_BADLY = sa.select(_node.c.node_id).where(
    _node.c.kind == f.JOB_KIND,
    sa.exists()
    .select_from(_run.join(_state, _state.c.run_key == _run.c.run_key))
    .correlate(_node)
    .where(
        _run.c.job_key == _node.c.node_key,
        _run.c.sort_time == _newest_time,
        _state.c.rank >= f.TERMINAL_RANK["ABORT"],
    ),
)
#: the jobs with a fact of one kind (a probe of the fact table's key per job)
_JOBS_WITH = (
    sa.select(_node.c.node_id)
    .join(_fact, sa.and_(_fact.c.subject_key == _node.c.node_key, _fact.c.fact == sa.bindparam("fact")))
    .where(_node.c.kind == f.JOB_KIND)
)
#: the datasets last written at or after a time, newest first (``lineage_plus_fact_write_idx``)
_WRITTEN_SINCE = (
    sa.select(_node.c.node_id)
    .select_from(_fact)
    .join(_node, _node.c.node_key == _fact.c.subject_key)
    .where(_fact.c.fact == f.WRITE, _fact.c.event_time >= sa.bindparam("since"))
    .order_by(_fact.c.event_time.desc(), _node.c.node_id)
    .limit(sa.bindparam("limit"))
)
_NODE_WIDTH, _FACT_WIDTH = len(_node.c), len(_fact.c)
_RUN_WIDTH, _STATE_WIDTH, _PARENT_WIDTH = len(_run.c), len(_state.c), len(_parent.c)


def _fact_row(row: Sequence[Any]) -> f.FactRow:
    return f.FactRow(row[0], row[1], row[2], bytes(row[3]), row[4])


class FoldedState:
    """The folded state of one store, read in batches of keys through one connection (see the module
    docstring); thread-safe."""

    def __init__(self, store: LineageStore) -> None:
        self.store = store
        self._local = threading.local()

    @contextlib.contextmanager
    def batch(self) -> Iterator[None]:
        """Read through one connection, in one transaction, until the block ends (the reads of one
        step of a question: a few queries for a batch of nodes)."""
        if getattr(self._local, "connection", None) is not None:
            yield  # already in one
            return
        with self.store.read() as connection:
            self._local.connection = connection
            try:
                yield
            finally:
                self._local.connection = None

    def _rows(self, statement: Any, keys: Iterable[Any]) -> list[Any]:
        found: list[Any] = []
        chunks = list(_chunks(keys))
        if not chunks:
            return found
        with self.batch():
            connection = self._local.connection
            for chunk in chunks:
                found.extend(connection.execute(statement, {"keys": chunk}).all())
        return found

    # -- nodes --------------------------------------------------------------------------------------
    def nodes(self, ids: Iterable[str]) -> dict[str, tuple[f.NodeRow, dict[str, f.FactRow]]]:
        """The nodes among ``ids`` (job or dataset ids) the store knows, with their facts, by id."""
        wanted = {f.key_of(node_id): node_id for node_id in ids}
        found: dict[str, tuple[f.NodeRow, dict[str, f.FactRow]]] = {}
        for row in self._rows(_NODES, wanted):
            node = f.NodeRow(*row[:_NODE_WIDTH])
            if wanted.get(node.node_key) != node.node_id:
                continue
            entry = found.setdefault(node.node_id, (node, {}))
            if row[_NODE_WIDTH] is not None:
                fact = _fact_row(row[_NODE_WIDTH:])
                entry[1][fact.fact] = fact
        return found

    def facts(self, keys: Iterable[int]) -> dict[int, dict[str, f.FactRow]]:
        """Every fact of the subjects ``keys`` (nodes, runs), by subject and fact."""
        found: dict[int, dict[str, f.FactRow]] = {}
        for row in self._rows(_FACTS, keys):
            fact = _fact_row(row)
            found.setdefault(fact.subject_key, {})[fact.fact] = fact
        return found

    def last_event_times(self, job_keys: Iterable[int]) -> dict[int, int]:
        """No run of each job starts later than this, by key: the time of its latest event (its newest
        ``ref`` fact) or of the latest DAG-run event that said it did not run (a skip record: the DAG run,
        which started before, is when its not-run run starts), whichever is later; jobs with neither are
        left out."""
        keys = list(job_keys)
        found = {int(key): int(at) for key, at in self._rows(_LAST_EVENTS, keys)}
        for key, at in self._rows(_LAST_SKIPS, keys):
            found[int(key)] = max(found.get(int(key), int(at)), int(at))
        return found

    def newest_adjacent(
        self, dataset_ids: Iterable[str], sides: Sequence[int], limit: int
    ) -> dict[str, tuple[dict[str, int | None], bool]]:
        """{dataset id: ({job id: :meth:`last_event_times` time, None when not known} of the jobs next to
        it by an edge a run reported, on ``sides`` (1: its writers, 0: its readers), at least each whose
        time is at or after the ``limit``-th latest's; whether they are every job next to it)}.

        A dataset with at most :data:`.adjacent.READ_WHOLE` edges has them read whole (with the others,
        at once). For more (a source every job reads), its jobs come from the newest latest events of
        all nodes (:data:`.adjacent.SCAN` per job asked for, by an index), then the later skip records of
        the jobs next to it: a few index probes per job asked for, not one per job next to it. When the
        newest events hold too few of its jobs, they are read whole after all."""
        wanted = {f.key_of(d): d for d in dataset_ids}
        found: dict[str, tuple[dict[str, int | None], bool]] = {}
        with self.batch():
            crowded = self._rows(a.CROWDED.params(sides=list(sides), whole=a.READ_WHOLE), wanted)
            for (key,) in crowded:
                if newest := self._newest(wanted[key], sides, limit):
                    found[wanted[key]] = (newest, False)
            whole = {key: d for key, d in wanted.items() if d not in found}
            rows = self._rows(a.ADJACENT.params(sides=list(sides)), whole)
            times: dict[str, dict[str, int | None]] = {d: {} for d in whole.values()}
            for job_id, dataset_id, at, _ in rows:
                if dataset_id in times:
                    times[dataset_id][job_id] = a.later(times[dataset_id].get(job_id), at)
            skips = dict(self._rows(_LAST_SKIPS, {f.key_of(j) for jobs in times.values() for j in jobs}))
            for dataset_id, jobs in times.items():
                for job_id in jobs:
                    jobs[job_id] = a.later(jobs[job_id], skips.get(f.key_of(job_id)))
                found[dataset_id] = (jobs, True)
        return found

    def _newest(self, dataset_id: str, sides: Sequence[int], limit: int) -> dict[str, int | None] | None:
        """The jobs of :meth:`newest_adjacent` of one dataset, from the newest latest events of all; None
        when those hold too few of its jobs."""
        connection = self._local.connection
        params = {"dataset": f.key_of(dataset_id), "sides": list(sides)}
        scan = {**params, "scan": max(a.SCAN * limit, a.READ_WHOLE)}
        found = a.latest_times(connection.execute(a.NEWEST_ADJACENT, scan).all(), dataset_id)
        times = sorted((at for at in found.values() if at is not None), reverse=True)
        # one older than the limit-th: no job past the scan has the limit-th's time
        if len(times) <= limit or times[limit - 1] == times[-1]:
            return None
        # every job later than the oldest found is in the scan: all of those, not only the limit asked
        # for (a later question asking for more is answered without a scan)
        since = min(at for at in times if at > times[-1])
        skipped: dict[int, int] = {}
        for key, at in connection.execute(a.SKIPPED_SINCE, {"since": since}).all():
            skipped[int(key)] = max(skipped.get(int(key), int(at)), int(at))
        for job_id, row_dataset, key in self._rows(a.JOBS_NEXT_TO.params(**params), skipped):
            if row_dataset == dataset_id:
                found[job_id] = a.later(found.get(job_id), skipped[int(key)])
        return {job_id: at for job_id, at in found.items() if at is not None and at >= since}

    def node_ids_of(self, keys: Iterable[int]) -> dict[int, str]:
        """The ids of the nodes with these keys."""
        return {int(key): str(node_id) for key, node_id in self._rows(_JOB_IDS, keys)}

    def edges(self, ids: Iterable[str]) -> list[f.EdgeRow]:
        """Every edge of the nodes ``ids`` (jobs' and datasets' alike)."""
        ids = list(ids)
        jobs = {f.key_of(i): i for i in ids if i.startswith("job:")}
        datasets = {f.key_of(i): i for i in ids if i.startswith("dataset:")}
        rows = [f.EdgeRow(*row) for row in self._rows(_JOB_EDGES, jobs)]
        rows += [f.EdgeRow(*row) for row in self._rows(_DATASET_EDGES, datasets)]
        return [
            row
            for row in rows
            if jobs.get(row.job_key) == row.job_id or datasets.get(row.dataset_key) == row.dataset_id
        ]

    def writer_edges(self, dataset_ids: Iterable[str]) -> list[f.EdgeRow]:
        """The edges into the datasets ``dataset_ids`` (their writers'), not the readers' (a source read
        by every job has as many)."""
        wanted = {f.key_of(i): i for i in dataset_ids}
        rows = [f.EdgeRow(*row) for row in self._rows(_WRITER_EDGES, wanted)]
        return [row for row in rows if wanted.get(row.dataset_key) == row.dataset_id]

    # -- runs ---------------------------------------------------------------------------------------
    def job_runs(self, job_keys: Iterable[int]) -> list[Run]:
        """Every run of the jobs ``job_keys``, with its state and parent."""
        return [run for run, _ in _runs_of(self._rows(_JOB_RUNS, job_keys))]

    def newest_job_runs(self, job_keys: Iterable[int], window: int) -> tuple[list[Run], dict[int, int]]:
        """The newest ``window`` runs of each job (by start, else first event; more when several share
        the ``window``-th's time: every run from that time on), and, for the jobs with older runs, the
        time those read start at."""
        runs, partial = [], {}
        for chunk in _chunks(job_keys):
            with self.batch():
                found = self._local.connection.execute(_NEWEST_RUNS, {"keys": chunk, "skip": window - 1})
                rows = found.all()
            for run, (since, older) in _runs_of(rows, tail=2):
                runs.append(run)
                if older:
                    partial[run.row.job_key] = int(since)
        return runs, partial

    def ended_since(self, job_key: int, before: int, since: int) -> bool:
        """Whether a run of the job started (else first seen) before ``before`` ended at ``since`` or
        later (:meth:`ended_runs` of the one job; its runs probed through the run index, none read)."""
        return any(start < before for _, start in self.ended_runs([job_key], since))

    def ended_runs(self, job_keys: Iterable[int], since: int) -> list[tuple[int, int]]:
        """(job key, start else first event) of the runs of the jobs ``job_keys`` that ended at ``since``
        or later: :meth:`ended_since` of many jobs in one query."""
        return [
            (int(key), int(start)) for key, start in self._rows(_ENDED_RUNS.params(since=since), job_keys)
        ]

    def job_dags(self, job_keys: Iterable[int]) -> dict[int, dict[str | None, int]]:
        """How many runs of each job name each DAG id (``None``: runs naming none), by job key."""
        found: dict[int, dict[str | None, int]] = {}
        for job_key, dag_id, number in self._rows(_JOB_DAGS, job_keys):
            found.setdefault(int(job_key), {})[dag_id] = int(number)
        return found

    def run_times(self, job_keys: Iterable[int]) -> tuple[int | None, int | None]:
        """The earliest and the latest first event, start or end time of any run of the jobs ``job_keys``
        (None: they have no run), without reading the runs."""
        times = [
            int(moment) for row in self._rows(_RUN_TIMES, job_keys) for moment in row if moment is not None
        ]
        return min(times, default=None), max(times, default=None)

    def airflow_run_ids(self, job_id: str, airflow_run_id: str, limit: int) -> list[str]:
        """The ids of the job's runs whose events name the Airflow DAG run ``airflow_run_id`` (its
        ``run_id``), the newest ``limit``: every try of a task instance, however old the DAG run. Keys are
        hashed, so a caller compares the ids its runs' facets name (a shared key is possible, not
        likely)."""
        keys = {"job_key": f.key_of(job_id), "airflow_run_key": f.key_of(airflow_run_id), "limit": limit}
        with self.batch():
            rows = self._local.connection.execute(_AIRFLOW_RUNS, keys).all()
        return [str(row[0]) for row in rows]

    def runs(self, run_ids: Iterable[str]) -> list[Run]:
        """The runs among ``run_ids`` the store knows, with their states and parents."""
        wanted = {f.run_key(run_id): run_id for run_id in run_ids}
        found = (run for run, _ in _runs_of(self._rows(_RUNS, wanted)))
        return [run for run in found if wanted.get(run.row.run_key) == run.row.run_id]

    def run_io(self, run_keys: Iterable[int]) -> list[RunIo]:
        return [RunIo(*row) for row in self._rows(_IO, run_keys)]

    def run_refs(self, run_keys: Iterable[int]) -> dict[int, list[int]]:
        """Where each run's events are, in order."""
        found: dict[int, list[int]] = {}
        for run_key, ref in self._rows(_REFS, run_keys):
            found.setdefault(run_key, []).append(int(ref))
        for refs in found.values():
            refs.sort()
        return found

    def naming_refs(self, dataset_id: str, job_keys: Iterable[int], before: int | None = None) -> list[int]:
        """Where the events are of the runs of the jobs ``job_keys`` that reported the dataset as an input
        or output (each run's events, those that do not name it too), of the runs first seen at or
        before ``before`` if given, in order."""
        limit = -_EARLIEST if before is None else before
        statement = _NAMING_REFS.params(dataset=f.key_of(dataset_id), before=limit)
        return sorted({int(ref) for (ref,) in self._rows(statement, job_keys)})

    def children(self, run_ids: Iterable[str]) -> list[Child]:
        """The runs whose parent is one of ``run_ids``, with their jobs."""
        wanted = {f.run_key(run_id): run_id for run_id in run_ids}
        names = set(wanted.values())
        rows = (Child(*row) for row in self._rows(_CHILDREN, wanted))
        return [row for row in rows if row.parent_run_id in names]

    def triggers(self, run_ids: Iterable[str]) -> list[f.RunTriggerRow]:
        """The upstream job runs the ``jobDependencies`` facets of these runs name (cross-DAG lineage)."""
        wanted = {f.run_key(run_id): run_id for run_id in run_ids}
        rows = (f.RunTriggerRow(*row) for row in self._rows(_TRIGGERS, wanted))
        return [row for row in rows if wanted.get(row.run_key) == row.run_id]

    def skipped_in(self, job_keys: Iterable[int]) -> list[SkippedIn]:
        """The DAG runs whose latest ``tasksState`` says one of the jobs did not run."""
        return [SkippedIn(*row) for row in self._rows(_SKIPPED, job_keys)]

    # -- datasets -----------------------------------------------------------------------------------
    def schemas(self, dataset_keys: Iterable[int]) -> list[f.SchemaRow]:
        return [
            f.SchemaRow(row[0], bytes(row[1]), row[2], row[3]) for row in self._rows(_SCHEMAS, dataset_keys)
        ]

    def column_readers(self, dataset_id: str, column: str) -> list[tuple[str, str]]:
        """(dataset id, column) of every column whose lineage ever read ``column`` of ``dataset_id``
        (a reader whose key collides may be among them: the caller checks the reader's lineage)."""
        rows = self._rows(_READERS, [f.column_key(dataset_id, column)])
        return sorted({(str(reader), str(reader_column)) for _, reader, reader_column in rows})

    # -- every node ---------------------------------------------------------------------------------
    def _all(self, statement: Any, parameters: dict[str, Any] | None = None) -> Sequence[Any]:
        with self.store.read() as connection:
            return connection.execute(statement, parameters).all()

    def node_ids(self, kind: int) -> list[str]:
        """The ids of every job (``kind`` 0) or dataset (1)."""
        rows = self._all(sa.select(_node.c.node_id).where(_node.c.kind == kind))
        return [str(node_id) for (node_id,) in rows]

    def names(self, kind: int) -> list[tuple[str, str]]:
        """(namespace, name) of every job (``kind`` 0) or dataset (1)."""
        rows = self._all(sa.select(_node.c.namespace, _node.c.name).where(_node.c.kind == kind))
        return [(str(ns), str(n)) for ns, n in rows]

    def jobs_ended_badly(self) -> list[str]:
        """The ids of the jobs whose newest run (by start, else first event; every run of that time)
        ended ABORTED or FAILED: those whose latest run may have failed (a later not-run run, a skip
        record, may still be their latest), each a few index probes."""
        return sorted({str(node_id) for (node_id,) in self._all(_LATEST_ENDED_BADLY)})

    def jobs_with(self, fact: str) -> list[str]:
        """The ids of the jobs with a ``fact`` (:data:`~.facts.SLO`: the jobs with a freshness target)."""
        return sorted(str(node_id) for (node_id,) in self._all(_JOBS_WITH, {"fact": fact}))

    def written_since(self, since: int, limit: int) -> list[str]:
        """The ids of up to ``limit`` datasets last written at or after ``since`` (epoch microseconds),
        newest first."""
        rows = self._all(_WRITTEN_SINCE, {"since": since, "limit": limit})
        return [str(node_id) for (node_id,) in rows]

    def counts(self) -> tuple[int, int]:
        """(datasets, jobs)."""
        found = {
            int(kind): int(number)
            for kind, number in self._all(sa.select(_node.c.kind, sa.func.count()).group_by(_node.c.kind))
        }
        return found.get(f.DATASET_KIND, 0), found.get(f.JOB_KIND, 0)


def _runs_of(rows: Iterable[Sequence[Any]], tail: int = 0) -> list[tuple[Run, Sequence[Any]]]:
    """The runs of rows of :data:`_RUN_COLUMNS` (several rows of a run with several facts), in the order
    of their first rows, each with the ``tail`` columns after those (of its first row)."""
    found: dict[tuple[int, str], tuple[Run, Sequence[Any]]] = {}
    state_at, parent_at = _RUN_WIDTH, _RUN_WIDTH + _STATE_WIDTH
    facts_at = parent_at + _PARENT_WIDTH
    for row in rows:
        known = found.get((row[0], row[1]))  # (key, id): two runs sharing a key stay two
        if known is None:
            state, parent = row[state_at:parent_at], row[parent_at:facts_at]
            run = Run(
                f.RunRow(*row[:_RUN_WIDTH]),
                f.RunStateRow(state[0], state[1], state[2], state[3], state[4], bytes(state[5]), state[6])
                if state[0] is not None
                else None,
                f.RunParentRow(*parent) if parent[0] is not None else None,
                {},
            )
            known = found[(row[0], row[1])] = (run, row[len(row) - tail :] if tail else ())
        if row[facts_at] is not None and row[facts_at + 1] in _RUN_FACTS:
            fact = _fact_row(row[facts_at : facts_at + _FACT_WIDTH])
            known[0].facts[fact.fact] = fact
    return list(found.values())
