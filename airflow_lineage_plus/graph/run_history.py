"""The per-run history (:mod:`.history`) of a graph's nodes, read back from each run's events.

Like the details (:mod:`.details`), the graph keeps only where each run's events are (refs); the facts a
history needs (the job's SQL and code, the Airflow try number, the datasets' figures, schemas, assertions
and partitions) are read back, in one pass, for the runs asked for only, and boiled down to
:class:`RunFacts` (the newest ``RUNS_KEPT`` kept by the source's :class:`RunReader`). A dataset's history
and its latest assertions read only the jobs next to it that can have run last (newest first, by each
job's latest event or skip record: :meth:`.model.LineageGraph.newest_adjacent`), so a source every job
reads costs the few that read it last; the answer is the one reading all of them gives. What that costs,
and why: docs/what-changed.md, "For another lineage source", and docs/graph.md.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any

import attrs

from airflow_lineage_plus import facet_keys as fk
from airflow_lineage_plus import node_ids as ids
from airflow_lineage_plus.graph.history import (
    Assertions,
    DatasetRun,
    History,
    JobRun,
    LatestAssertions,
    digest,
)
from airflow_lineage_plus.graph.model import LineageGraph, latest_first, newest_first
from airflow_lineage_plus.graph.records import JobRecord
from airflow_lineage_plus.graph.runs import RunRecord
from airflow_lineage_plus.graph.stored_graph import StoredGraph

#: refs -> {ref: the event as a JSON object, or None where it cannot be read}, in one pass
ReadRefs = Callable[[Sequence[int]], Mapping[int, "dict[str, Any] | None"]]
#: a run's events merged: (run facets, job facets, {dataset id: (direction, facets)})
Merged = tuple[dict[str, Any], dict[str, Any], dict[str, tuple[str, dict[str, Any]]]]
#: at most this many assertions are read of one dataset in one run, each name and column cut to
#: :data:`MAX_TEXT` characters (an event is hostile input)
MAX_ASSERTIONS = 200
MAX_TEXT = 200
#: ``latest_assertions`` reads back the assertions of at most this many datasets (the first asked for: a
#: walk's nearest) and, of each, of the jobs next to it that ran last (a query has a bounded cost)
MAX_DATASETS = 200
MAX_JOBS = 10
MAX_REFS = 32
#: a dataset's figures in one run: DatasetRun's fields after run_id, job_id and at
Figures = tuple[Any, ...]
#: runs whose facts are kept between questions (a few hundred bytes each)
RUNS_KEPT = 20_000
#: a source's readers are folded newest first, at first as many as runs are asked for (at least this
#: many), then twice as many each time more are needed
MIN_CHUNK = 2
#: a source's readers are read with their newest run at first: a reader's older runs count only when one
#: ended after the newest reads found so far (the store is asked), so most readers cost that one run
READER_RUNS = 1


@attrs.frozen
class RunFacts:
    """What a history needs of one run's events: the Airflow try number, versions of the job's SQL and
    code, and the figures of each dataset the events name."""

    tries: int | None = None
    sql: str | None = None
    source_code: str | None = None
    datasets: Mapping[str, Figures] = attrs.field(factory=dict)


_NO_FACTS = RunFacts()


class RunReader:
    """Reads the events of many runs at once and keeps each run's :class:`RunFacts` (by its refs: the
    same refs are the same events of the same source)."""

    def __init__(self, read_refs: ReadRefs, keep: int = RUNS_KEPT) -> None:
        self.read_refs = read_refs
        self.keep = keep
        self.kept: dict[tuple[int, ...], RunFacts] = {}
        self.events_read = 0  # events read back since this reader was made

    def facts(self, runs: Sequence[RunRecord]) -> list[RunFacts]:
        """The facts of each run (of a run without events: none), the events not kept read in one pass."""
        keys = [tuple(run.refs) for run in runs]
        missing = sorted({ref for key in keys if key not in self.kept for ref in key})
        events = self.read_refs(missing) if missing else {}
        self.events_read += len(missing)
        found = []
        for key in keys:
            facts = self.kept.get(key)
            if facts is None:
                facts = _facts(_merge(e for e in (events.get(r) for r in key) if e)) if key else _NO_FACTS
                if len(self.kept) >= self.keep:
                    del self.kept[next(iter(self.kept))]  # the oldest kept
                self.kept[key] = facts
            found.append(facts)
        return found


def _merge(events: Iterable[dict[str, Any]]) -> Merged:
    """The facets of a run's events, later events (by event time) winning."""
    ordered = sorted((e for e in events if isinstance(e, dict)), key=lambda e: str(e.get("eventTime") or ""))
    run_facets: dict[str, Any] = {}
    job_facets: dict[str, Any] = {}
    datasets: dict[str, tuple[str, dict[str, Any]]] = {}
    for event in ordered:
        run_facets.update(_dict(_dict(event.get("run")).get("facets")))
        job_facets.update(_dict(_dict(event.get("job")).get("facets")))
        for direction in ("inputs", "outputs"):
            for item in event.get(direction) or ():
                if not isinstance(item, dict) or "namespace" not in item or "name" not in item:
                    continue
                key = ids.dataset_id(str(item["namespace"]), str(item["name"]))
                facets = datasets.setdefault(key, (direction, {}))[1]
                for facet_key in ("facets", "inputFacets", "outputFacets"):
                    facets.update(_dict(item.get(facet_key)))
    return run_facets, job_facets, datasets


def _facts(merged: Merged) -> RunFacts:
    run_facets, job_facets, datasets = merged
    task_instance = _dict(_dict(run_facets.get(fk.AIRFLOW_RUN)).get("taskInstance"))
    tries = task_instance.get("try_number")
    return RunFacts(
        tries=tries if _is_int(tries) else None,
        sql=digest(_text(_dict(job_facets.get(fk.SQL)).get("query"))),
        source_code=_code_version(job_facets),
        datasets={key: _figures(facets) for key, (_, facets) in datasets.items()},
    )


def _dict(value: Any) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


def run_history(
    graph: StoredGraph,
    node_ids: Sequence[str],
    runs: int,
    reader: RunReader,
    as_of: int | None = None,
    bounds: dict[str, int | None] | None = None,
    dataset_runs: int | None = None,
) -> dict[str, History]:
    """:meth:`LineageSource.run_history` over ``graph`` (a graph of a store that keeps its runs'
    refs); ``bounds`` keeps each job's latest event time between questions."""
    counts = (runs, runs if dataset_runs is None else dataset_runs)
    question = _Question(graph, counts, reader, as_of, bounds if bounds is not None else {})
    known = question.prepare(node_ids)
    question.read_refs_first(node_ids, known)
    found: dict[str, History] = {}
    for node_id in node_ids:
        if node_id.startswith("job:"):
            job = graph.job_record(node_id)
            if job is not None:
                found[node_id] = History(node_id, tuple(question.job_runs(job)))
        elif node_id in known:
            history = question.dataset_history(node_id)
            if history.runs or question.has_dataset(node_id):  # runs that name it: it is there
                found[node_id] = history
    return found


class _Question:
    """One ``run_history`` call: the runs of each job sorted once."""

    def __init__(
        self,
        graph: StoredGraph,
        counts: tuple[int, int],
        reader: RunReader,
        as_of: int | None,
        bounds: dict[str, int | None],
    ) -> None:
        """``counts``: how many runs a job's history holds, and how many a dataset's."""
        self.graph, self.reader, self.as_of, self.bounds = graph, reader, as_of, bounds
        self.count, self.dataset_count = counts
        self.recent: dict[str, list[RunRecord]] = {}
        self.readers: dict[str, _Newest] = {}  # of each source, its readers that ran last first

    def prepare(self, node_ids: Sequence[str]) -> set[str]:
        """Read at once what the histories of these nodes start from: which datasets the catalog knows,
        their writers (with their runs and the time of each one's latest event), and the readers of each
        source that ran last (the store finds those without reading the others: a source every job
        reads); the datasets the catalog knows."""
        graph = self.graph
        known = graph.catalog.known(n for n in node_ids if n.startswith("dataset:"))
        graph.load_writers(sorted(known))
        writers = sorted({job for dataset in known for job in graph.pred.get(dataset, ())})
        graph.load_jobs(writers)
        _read_bounds(graph, writers, self.bounds)
        # a source (no writer) is read by its readers that ran last (:meth:`newest`): the first batch of
        # each source's, at once
        sources = sorted(d for d in known if not graph.pred.get(d))
        first = max(self.dataset_count, MIN_CHUNK)
        self.readers = _Newest.of(graph, sources, writers=False, readers=True, first=first)
        readers = sorted({job for jobs in self.readers.values() for job in jobs.head(first)})
        graph.load_jobs(readers, READER_RUNS)
        return known

    def _completed_read(self, job_ids: Sequence[str]) -> dict[str, list[RunRecord]]:
        """Of these jobs, the completed runs read so far (started at or before ``as_of``), newest first (a
        job's runs are read newest first, so the first is its newest completed run)."""
        found: dict[str, list[RunRecord]] = {}
        for job in (self.graph.job_record(job_id) for job_id in job_ids):
            if job is not None:
                found[job.id] = [
                    r for r in newest_first(self.graph.state_runs(job), self.as_of) if r.completed
                ]
        return found

    def read_refs_first(self, node_ids: Sequence[str], known: set[str]) -> None:
        """Read at once where the events are of the runs the histories read first: each job's newest runs,
        and the newest completed runs of each dataset's writer where it has one (most datasets; of one with
        several, which count is known only as they are read)."""
        graph, runs = self.graph, []
        for node_id in node_ids:
            if node_id.startswith("job:"):
                job = graph.job_record(node_id)
                if job is not None:
                    runs += self.runs_of(job)[: self.count]
            elif node_id in known and len(writers := graph.pred.get(node_id, ())) == 1:
                job = graph.job_record(next(iter(writers)))
                if job is not None:
                    runs += [run for run in self.runs_of(job) if run.completed][: self.dataset_count]
        graph.read_refs(runs)

    def runs_of(self, job: JobRecord) -> list[RunRecord]:
        """The job's runs started at or before ``as_of``, newest first: at least the newest a job's history
        holds and the completed ones a dataset's may take."""
        found = self.recent.get(job.id)
        if found is None:
            found = self.graph.newest_runs(job, self.count, self.as_of, completed=self.dataset_count)
            self.recent[job.id] = found
        return found

    def has_dataset(self, dataset_id: str) -> bool:
        """Whether the graph has a dataset the catalog knows. Now, yes (some event named it: folding its
        events would make it); as of a time, after folding them all (asked only of a dataset without runs,
        so not of a source read by thousands)."""
        if self.as_of is None:
            return self.graph.catalog.has_dataset(dataset_id)
        return self.graph.dataset_record(dataset_id) is not None

    def job_runs(self, job: JobRecord) -> list[JobRun]:
        runs = self.runs_of(job)[: self.count]
        self.graph.read_refs(runs)
        facts = iter(self.reader.facts([run for run in runs if run.refs]))
        found = []
        for run in runs:
            fact = next(facts) if run.refs else _NO_FACTS
            found.append(
                JobRun(
                    run_id=run.run_id or f"not-run:{run.parent_run_id}",
                    state=run.state,
                    started=run.start if run.start is not None else run.first_seen,
                    ended=run.end,
                    tries=fact.tries,
                    execution_mode=run.exec_mode,
                    sql=fact.sql,
                    source_code=fact.source_code,
                )
            )
        return found

    def dataset_history(self, dataset_id: str) -> History:
        """The newest writes by its writers; for a dataset no writer recorded, the newest reads."""
        graph = self.graph
        writers = graph.neighbours(dataset_id, upstream=True, retired=True, declared_too=False)
        records = [job for job in (graph.job_record(j) for j in sorted(j for j, _ in writers)) if job]
        slo = [job.slo_minutes for job in records if job.slo_minutes is not None]
        least = min(slo) if slo else None
        _read_bounds(graph, [job.id for job in records], self.bounds)
        ordered = latest_first({job.id: self.bounds[job.id] for job in records})
        found = self.newest(dataset_id, _Newest(graph, dataset_id, ordered), readers=False)
        if not found:
            readers = self.readers.get(dataset_id)
            if readers is None:
                first = max(self.dataset_count, MIN_CHUNK)
                readers = _Newest.of(graph, [dataset_id], writers=False, readers=True, first=first)[
                    dataset_id
                ]
            found = self.newest(dataset_id, readers, readers=True)
        return History(dataset_id, tuple(found), least)

    def newest(self, dataset_id: str, jobs: _Newest, *, readers: bool) -> list[DatasetRun]:
        """The dataset's newest runs (as many as its history holds: ``count``) among the newest ``count``
        completed runs of each of ``jobs`` (its writers, or with ``readers`` its readers), newest first by
        (time, run id), then by job id: what reading every job gives, reading jobs newest first and none
        past the point where no run of theirs can be among the newest (see the module docstring). The
        candidates are taken a batch at a time, twice as many each time: their records (readers) and where
        their runs' events are, read at once, and the newest completed run of each (one of its newest) is
        offered first, so that the floor starts near the newest reads, not at one job's oldest."""
        count, graph = self.dataset_count, self.graph
        offer = _Offer(graph, dataset_id, count, self.reader)
        folded, chunk, position = 0, max(count, MIN_CHUNK), 0
        while (item := jobs.at(position)) is not None:
            job_id, bound = item
            if offer.floor is not None and bound is not None and bound < offer.floor[0]:
                break  # every later job's runs are older than the newest found
            if position >= folded:
                batch = jobs.head(folded + chunk)[folded:]
                if readers:
                    graph.load_jobs(batch, READER_RUNS)
                done, floor = self._completed_read(batch), offer.floor
                # where the events are of those that can count (the floor only rises: of the runs read so
                # far none that will count is left out; runs read later have theirs read then)
                graph.read_refs(
                    r for runs in done.values() for r in runs[:count] if floor is None or _key(r) >= floor
                )
                offer.add([(job_id, 0, runs[0]) for job_id, runs in done.items() if runs])
                if offer.floor is not None:  # which of them have older runs that can count, at once
                    graph.note_ended(batch, offer.floor[0])
                folded, chunk = folded + chunk, 2 * chunk
            position += 1
            job = graph.job_record(job_id)
            if job is None:
                continue
            floor = offer.floor
            # past the first, only its runs that ended at the floor or later count: those are read
            runs = (
                self.runs_of(job)
                if floor is None
                else graph.newest_runs(job, 0, self.as_of, completed=count, ended_since=floor[0])
            )
            completed = [r for r in runs if r.completed][:count]
            offer.add([(job_id, i, r) for i, r in enumerate(completed) if floor is None or _key(r) >= floor])
        return offer.runs()


class _Offer:
    """The newest ``count`` writes (or reads) of a dataset among the runs offered, each once: (time, run
    id) newest first, ties to the least job id and its newer run."""

    def __init__(self, graph: StoredGraph, dataset_id: str, count: int, reader: RunReader) -> None:
        self.graph, self.dataset_id, self.count, self.reader = graph, dataset_id, count, reader
        self.best: list[tuple[int, str, str, int, DatasetRun]] = []  # (at, run id, job id, rank, run)
        self.seen: set[tuple[str, str]] = set()

    @property
    def floor(self) -> tuple[int, str] | None:
        """(time, run id) of the ``count``-th newest so far; None while fewer are known."""
        return self.best[self.count - 1][:2] if len(self.best) >= self.count else None

    def add(self, runs: Sequence[tuple[str, int, RunRecord]]) -> None:
        """Offer (job id, rank among the job's completed runs, run) triples: those recording figures of
        the dataset count."""
        fresh = [(job_id, i, r) for job_id, i, r in runs if (job_id, r.run_id or "") not in self.seen]
        self.seen.update((job_id, r.run_id or "") for job_id, _, r in fresh)
        self.graph.read_refs(r for _, _, r in fresh)
        for (job_id, i, run), fact in zip(fresh, self.reader.facts([r for _, _, r in fresh]), strict=True):
            figures = fact.datasets.get(self.dataset_id)
            if figures is not None:
                at, run_id = _key(run)
                self.best.append((at, run_id, job_id, i, DatasetRun(run_id, job_id, at, *figures)))
        self.best.sort(key=lambda b: (b[2], b[3]))  # ties: the least job id, its newer run first
        self.best.sort(key=lambda b: b[:2], reverse=True)
        del self.best[self.count :]

    def runs(self) -> list[DatasetRun]:
        return [b[4] for b in self.best]


class _Newest:
    """The jobs next to a dataset with the time no run of each starts after, newest first
    (:meth:`.model.LineageGraph.newest_adjacent`), asked of the graph as far as they are read."""

    def __init__(
        self,
        graph: LineageGraph,
        dataset_id: str,
        found: list[tuple[str, int | None]],
        sides: tuple[bool, bool] | None = None,
    ) -> None:
        """``found``: the first jobs; ``sides``: (writers, readers) to ask the graph for more, None when
        ``found`` holds every one."""
        self.graph, self.dataset_id, self.found, self.sides = graph, dataset_id, found, sides

    @classmethod
    def of(
        cls, graph: LineageGraph, dataset_ids: Sequence[str], *, writers: bool, readers: bool, first: int
    ) -> dict[str, _Newest]:
        """The jobs next to each dataset, the ``first`` of each asked for at once."""
        found = graph.newest_adjacent(dataset_ids, writers=writers, readers=readers, limit=first)
        return {
            d: cls(graph, d, jobs, None if complete else (writers, readers))
            for d, (jobs, complete) in found.items()
        }

    def at(self, position: int) -> tuple[str, int | None] | None:
        """The job at ``position`` and its time; None past the last."""
        while position >= len(self.found) and self.sides is not None:
            writers, readers = self.sides
            limit = max(2 * len(self.found), position + 1)
            jobs, complete = self.graph.newest_adjacent(
                (self.dataset_id,), writers=writers, readers=readers, limit=limit
            )[self.dataset_id]
            self.found, self.sides = jobs, None if complete else self.sides
        return self.found[position] if position < len(self.found) else None

    def head(self, count: int) -> list[str]:
        """The first ``count`` jobs (fewer when there are fewer)."""
        self.at(count - 1)
        return [job_id for job_id, _ in self.found[:count]]


def _key(run: RunRecord) -> tuple[int, str]:
    """(time, run id) of a completed run's write, as its :class:`DatasetRun` has them."""
    return (run.end if run.end is not None else (run.started_at or 0), run.run_id or "")


def _text(value: Any) -> str | None:
    return value if isinstance(value, str) else None


def _code_version(job_facets: dict[str, Any]) -> str | None:
    location = _dict(job_facets.get(fk.SOURCE_CODE_LOCATION))
    version = location.get("version")
    if isinstance(version, str) and version:
        return version
    return digest(_text(_dict(job_facets.get("sourceCode")).get("sourceCode")))


def _figures(facets: dict[str, Any]) -> Figures:
    """(rows, bytes, nulls, fields, assertions, partition, dimensions) of one dataset in one run."""
    statistics = _dict(facets.get(fk.OUTPUT_STATISTICS))
    metrics = _dict(facets.get(fk.DATA_QUALITY_METRICS))
    nulls = [
        (str(column), count)
        for column, figures in sorted(_dict(metrics.get("columnMetrics")).items())
        if _is_int(count := _dict(figures).get("nullCount"))
    ]
    schema = facets.get(fk.SCHEMA)
    fields = None
    if isinstance(schema, dict) and isinstance(schema.get("fields"), list):
        fields = tuple(
            (str(f["name"]), _text(f.get("type")))
            for f in schema["fields"]
            if isinstance(f, dict) and "name" in f
        )
    partition, dimensions = _partition(facets.get(fk.SUBSET))
    return (
        _first_int(statistics.get("rowCount"), metrics.get("rowCount")),
        _first_int(statistics.get("size"), metrics.get("bytes")),
        tuple(nulls),
        fields,
        assertions_of(facets),
        partition,
        dimensions,
    )


def assertions_of(facets: dict[str, Any]) -> Assertions:
    """The ``dataQualityAssertions`` entries of a dataset's facets as (assertion, column, success): entries
    whose ``assertion`` is not a string are left out, a ``column`` that is not one is None, ``success``
    counts only when it is ``true``; bounded by :data:`MAX_ASSERTIONS` and :data:`MAX_TEXT`."""
    items = _dict(facets.get(fk.DATA_QUALITY_ASSERTIONS)).get("assertions")
    if not isinstance(items, list):
        return ()
    found = []
    for item in items[:MAX_ASSERTIONS]:
        if isinstance(item, dict) and isinstance(item.get("assertion"), str):
            column = _text(item.get("column"))
            cut = column[:MAX_TEXT] if column is not None else None
            found.append((item["assertion"][:MAX_TEXT], cut, item.get("success") is True))
    return tuple(found)


def latest_assertions(
    view: LineageGraph,
    dataset_ids: Sequence[str],
    read_refs: ReadRefs,
    as_of: int | None = None,
) -> dict[str, list[LatestAssertions]]:
    """:meth:`LineageSource.latest_assertions`: for each of the first :data:`MAX_DATASETS` datasets, the
    assertions the latest finished run (on ``view``, a graph whose runs know their events' refs) of each
    job next to it (a writer or a reader; of the :data:`MAX_JOBS` that ran last) recorded on it, newest
    first; datasets nothing asserted on are left out. The runs' events are read back by their refs (at
    most the last :data:`MAX_REFS` of each), all in one read."""
    view.prefetch_records(dataset_ids[:MAX_DATASETS])
    datasets = [d for d in dataset_ids[:MAX_DATASETS] if view.dataset_record(d) is not None]
    # the jobs next to each, writers and readers, by the edges runs reported (retired ones too), those
    # that ran last first; the first batch of each dataset's read at once
    adjacent = _Newest.of(view, datasets, writers=True, readers=True, first=MAX_JOBS)
    # of each job, its latest finished run only
    view.prefetch_records({job for jobs in adjacent.values() for job in jobs.head(MAX_JOBS)}, runs=1)
    chosen: list[tuple[str, JobRecord, RunRecord, str]] = []
    for dataset_id in datasets:
        last = _last_ran(view, adjacent[dataset_id], MAX_JOBS)
        for job in (view.job_record(j) for j in sorted(last)):
            newest = view.newest_runs(job, 1, as_of) if job is not None else []
            run = next((r for r in newest if r.state != "RUNNING"), None)
            if job is not None and run is not None and run.run_id is not None:
                chosen.append((dataset_id, job, run, run.run_id))
    runs = {run_id: run for _, _, run, run_id in chosen}
    view.read_refs(runs.values())
    refs = {run_id: list(run.refs)[-MAX_REFS:] for run_id, run in runs.items()}
    events = read_refs(sorted({ref for kept in refs.values() for ref in kept})) if refs else {}
    merged = {run_id: _merge(e for ref in kept if (e := events.get(ref))) for run_id, kept in refs.items()}
    found: dict[str, list[LatestAssertions]] = {}
    for dataset_id, job, run, run_id in chosen:
        entry = merged[run_id][2].get(dataset_id)
        asserted = assertions_of(entry[1]) if entry is not None else ()
        if asserted:
            found.setdefault(dataset_id, []).append(
                LatestAssertions(dataset_id, job.id, run_id, _key(run)[0], asserted)
            )
    for assertions in found.values():
        assertions.sort(key=lambda a: (a.at, a.job_id), reverse=True)
    return found


def _last_ran(graph: LineageGraph, jobs: _Newest, limit: int) -> list[str]:
    """The ``limit`` of ``jobs`` whose latest run started last, that one first (ties: the greater id
    first). The jobs are read newest latest event first (a skip record counts:
    :meth:`.model.LineageGraph.last_event_times`), a batch at a time, and none past the point where no
    job left can be among them (no run starts after that time): a source read by thousands of jobs costs
    the few that ran last."""
    best: list[tuple[int, str]] = []
    read, chunk, position = 0, max(limit, MIN_CHUNK), 0
    while (item := jobs.at(position)) is not None:
        job_id, bound = item
        if len(best) >= limit and bound is not None and bound < best[limit - 1][0]:
            break  # every job left started its latest run before the last one kept
        if position >= read:
            graph.prefetch_records(jobs.head(read + chunk)[read:], runs=1)
            read, chunk = read + chunk, 2 * chunk
        position += 1
        job = graph.job_record(job_id)
        run = graph.latest_run(job) if job is not None else None
        best.append((run.sort_key()[0] if run is not None else -(2**62), job_id))
        best.sort(reverse=True)
        del best[limit:]
    return [job_id for _, job_id in best]


def _read_bounds(graph: LineageGraph, job_ids: Iterable[str], bounds: dict[str, int | None]) -> None:
    """Put in ``bounds`` the time no run of each job starts after
    (:meth:`.model.LineageGraph.last_event_times`), for the jobs not there yet, read at once."""
    missing = sorted({job_id for job_id in job_ids if job_id not in bounds})
    if missing:
        bounds.update(graph.last_event_times(missing))


def _partition(subset: Any) -> tuple[str | None, tuple[tuple[str, str], ...]]:
    subset = _dict(subset)
    condition = _dict(subset.get("outputCondition") or subset.get("inputCondition"))
    for item in condition.get("partitions") or ():
        if isinstance(item, dict):
            dimensions = tuple(sorted((str(k), str(v)) for k, v in _dict(item.get("dimensions")).items()))
            return _text(item.get("identifier")), dimensions
    return None, ()


def _is_int(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _first_int(*values: Any) -> int | None:
    return next((int(v) for v in values if _is_int(v)), None)
