"""Folding a log in parts: a graph exported to a file as compact records by the process that folded one
part, and absorbed by the process that folded the part before it (see
:meth:`.EventLogSource._read_parallel`).

The result is exact: every fact is "latest by event time, ties broken by content" (or, for event
references, by log order), and both parts are folded with the same rules.

An export is a sequence of ``marshal`` records of plain tuples, each after its 8-byte length: everything
but the runs, then the runs grouped by job (``[(job id, [run values, ...]), ...]``, about
:data:`RUNS_PER_RECORD` runs a record), then ``None``. Why this format, and what it costs: docs/graph.md
("Two processes for a big read").
"""

from __future__ import annotations

import marshal
import operator
from typing import TYPE_CHECKING, Any, BinaryIO

from airflow_lineage_plus import node_ids as ids
from airflow_lineage_plus.graph.records import _DATASET_STATE, _JOB_STATE, DatasetRecord
from airflow_lineage_plus.graph.runs import _RUN_STATE, RunRecord

if TYPE_CHECKING:
    from airflow_lineage_plus.graph.model import LineageGraph


#: runs per record of an export, so that neither process ever holds all the runs' tuples at once
RUNS_PER_RECORD = 100_000


def export_to(graph: LineageGraph, out: BinaryIO) -> None:
    """Write everything ``graph`` knows to ``out``, for :func:`absorb_from` in another process.

    ``out`` is a binary file open for writing; the records written are those of the module docstring. A
    job's runs go in one group, so the edge sets they share stay one object when absorbed.
    """
    _dump(
        (
            [
                (*state, job.refs.tobytes())
                for state, job in zip(_job_states(graph), graph.jobs.values(), strict=True)
            ],
            list(map(operator.attrgetter(*_DATASET_STATE), graph.datasets.values())),
            graph.succ,  # pred, and each job's sources and targets, are its mirror image
            {
                dag_run: (s.key, s.job_ids, s.upstream_failed, s.dag_job)
                for dag_run, s in graph.dag_run_skips.items()
            },
            graph.version,
            graph.salvaged,
            graph.edge_first,
            graph.column_readers_ever,
            {key: d.dataset_refs for key, d in graph.datasets.items() if d.dataset_refs},
            (graph.first_time, graph.last_time),
            {job.id: job.declared for job in graph.jobs.values() if job.declared is not None},
            graph.declared_succ,  # every edge ever declared; declared_pred is its mirror image
        ),
        out,
    )
    values, chunk, size = operator.attrgetter(*_RUN_STATE), [], 0
    for job in graph.jobs.values():
        for begin in range(0, len(job.runs), RUNS_PER_RECORD):
            rows = [
                values(run) for run in job.runs[begin : begin + RUNS_PER_RECORD] if run.run_id is not None
            ]
            chunk.append((job.id, rows))
            size += len(rows)
            if size >= RUNS_PER_RECORD:
                _dump(chunk, out)
                chunk, size = [], 0
    if chunk:
        _dump(chunk, out)
    _dump(None, out)


def _dump(value: Any, out: BinaryIO) -> None:
    data = marshal.dumps(value)
    out.write(len(data).to_bytes(8, "little"))
    out.write(data)


def _load(source: BinaryIO) -> Any:
    """The next record, read whole before it is decoded (``marshal.load`` reads a file a few bytes at a
    time)."""
    length = int.from_bytes(source.read(8), "little")
    data = source.read(length)
    if len(data) != length:
        raise EOFError("an exported graph ends early")
    return marshal.loads(data)


def _job_states(graph: LineageGraph) -> list[tuple[object, ...]]:
    return list(map(operator.attrgetter(*_JOB_STATE), graph.jobs.values()))


def absorb_from(graph: LineageGraph, source: BinaryIO) -> None:
    """Merge into ``graph`` what :func:`export_to` wrote of a graph folded from the events after its own.

    ``source`` is a binary file at the start of the export. ``graph`` then is the graph one fold over both
    parts in log order gives (``tests/graph/test_split_load.py`` checks this, field by field).
    """
    head = _load(source)
    jobs, datasets, succ, skips, version, salvaged = head[:6]
    first, readers_ever, dataset_refs, times, declarations, declared_succ = head[6:]
    del head
    for moment in times:
        if moment is not None:
            graph.first_time = moment if graph.first_time is None else min(graph.first_time, moment)
            graph.last_time = moment if graph.last_time is None else max(graph.last_time, moment)
    for namespace, name, owners, owners_key, ref, ref_time, slo_minutes, slo_key, refs in jobs:
        job = graph.job(namespace, name)
        if slo_key is not None:
            graph.set_slo(job, slo_minutes, slo_key[0])
        if owners_key is not None and (job.owners_key is None or owners_key > job.owners_key):
            job.owners_key, job.owners = owners_key, owners
        if ref is not None and ref_time >= job.ref_time:
            job.ref, job.ref_time = ref, ref_time
        job.refs.frombytes(refs)
    del jobs
    while (runs := _load(source)) is not None:
        _absorb_runs(graph, runs)
    del runs
    for values in datasets:
        key = ids.dataset_id(values[0], values[1])
        record = graph.datasets.get(key)
        if record is None:
            record = graph.datasets[key] = DatasetRecord.restore(values)
        else:
            record.absorb_state(values)
        columns, columns_key = values[7], values[8]
        if columns_key is not None:
            graph.set_columns(record, columns, columns_key[0], columns_key[1])
    jobs_by_id, add_edge = graph.jobs, graph.add_edge
    for origin, destinations in succ.items():
        origin_job = jobs_by_id.get(origin)
        for destination in destinations:
            add_edge(origin, destination)
            if origin_job is not None:
                origin_job.targets.add(destination)
            else:
                jobs_by_id[destination].sources.add(origin)
    _absorb_declared(graph, declarations, declared_succ)
    for dag_run_id, (key, job_ids, upstream_failed, dag_job) in skips.items():
        graph.set_dag_run_skips(dag_run_id, key, job_ids, upstream_failed, dag_job)
    edge_first = graph.edge_first
    for edge, seen in first.items():
        mine = edge_first.get(edge)
        if mine is None or seen < mine:
            edge_first[edge] = seen
    for column, later_readers in readers_ever.items():
        graph.column_readers_ever.setdefault(column, set()).update(later_readers)
    for key, refs in dataset_refs.items():
        graph.datasets[key].dataset_refs.extend(refs)
    graph.version += version
    graph.salvaged += salvaged


def _absorb_runs(graph: LineageGraph, groups: list[tuple[str, list[tuple[object, ...]]]]) -> None:
    runs_by_id, children, restore, jobs = graph.runs, graph.children, RunRecord.restore, graph.jobs
    for job_id, rows in groups:
        job = jobs[job_id]
        job_runs = job.runs
        # marshal gives one object for an edge set the job's runs shared: looked up in its sets once
        shared: dict[int, frozenset[tuple[str, str]]] = {}
        for values in rows:
            later = restore(values)
            io = later.io
            known = shared.get(id(io))
            if known is None:
                known = shared[id(io)] = job.shared_io(io)
            later.io = known
            run = runs_by_id.get(later.run_id)  # type: ignore[arg-type]
            if run is None:  # add_run, inlined: most runs are in one part only
                job_runs.append(later)
                runs_by_id[later.run_id] = later  # type: ignore[index]
                parent = later.parent_run_id
                if parent is not None:
                    under = children.get(parent)
                    if under is None:
                        children[parent] = {job_id}
                    else:
                        under.add(job_id)
                continue
            had_parent = run.parent_run_id is not None
            run.absorb(later)
            run.io = jobs[run.job_id].shared_io(run.io)
            if not had_parent and run.parent_run_id is not None:
                children.setdefault(run.parent_run_id, set()).add(run.job_id)


def _absorb_declared(
    graph: LineageGraph, declarations: dict[str, Any], declared_succ: dict[str, set[str]]
) -> None:
    for job_id, ((micros, tie), edges) in declarations.items():
        graph.declare(graph.jobs[job_id], frozenset(edges), micros, tie)
    for origin, destinations in declared_succ.items():
        for destination in destinations:
            graph.declared_succ.setdefault(origin, set()).add(destination)
            graph.declared_pred.setdefault(destination, set()).add(origin)
