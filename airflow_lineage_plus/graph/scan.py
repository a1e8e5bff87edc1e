"""The first answer from a raw log, before it has an index: a quick scan, then a focused fold.

A full fold of a large log takes minutes; a question about one node needs only the events of the nodes
around it. The scan reads every line but decodes only what says where events are and which nodes touch:
each event's job and the names of its inputs and outputs (a list a job already reported is compared as
bytes, not decoded again). It records, per job, the place of each of its events, and the edges ever seen.
The answer is then folded from just the events of the nodes it touches (:mod:`.focus`), with the same
fold as a full load, so it is the answer a full load gives. A log of 64 MiB or more is scanned by two
processes when this one runs a single thread (like a full load, :mod:`.eventlog`).

Questions about the whole graph (search, name lint, the report) and column traces downstream need the
index; :class:`QuickSource` says so with :class:`SourceUnavailable`.
"""

from __future__ import annotations

import marshal
import multiprocessing
import os
import threading
from array import array
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

import msgspec

from airflow_lineage_plus.exceptions import NodeNotFound, SourceUnavailable
from airflow_lineage_plus.graph import logfile
from airflow_lineage_plus.graph.focus import Catalog, FocusedGraph
from airflow_lineage_plus.graph.model import LineageGraph
from airflow_lineage_plus.graph.records import Fields
from airflow_lineage_plus.graph.source import LineageSource

PARALLEL_MIN_BYTES = 64 * 1024 * 1024


class _Name(msgspec.Struct):
    namespace: str
    name: str


class _Event(msgspec.Struct):
    job: _Name | None = None
    inputs: msgspec.Raw = msgspec.Raw()
    outputs: msgspec.Raw = msgspec.Raw()
    dataset: _Name | None = None


_event = msgspec.json.Decoder(_Event).decode
_names = msgspec.json.Decoder(list[_Name]).decode


class _Job:
    __slots__ = ("inputs", "last_in", "last_out", "outputs", "refs")

    def __init__(self) -> None:
        self.refs = array("Q")
        self.inputs: set[str] = set()
        self.outputs: set[str] = set()
        self.last_in: bytes | None = None
        self.last_out: bytes | None = None


class ScanCatalog(Catalog):
    """Where events are and which nodes touch, from a quick scan of the log."""

    def __init__(self) -> None:
        self.jobs: dict[str, _Job] = {}
        self.datasets: dict[str, list[int]] = {}  # dataset id -> refs of events naming it as ``dataset``
        self.pred: dict[str, set[str]] = {}
        self.succ: dict[str, set[str]] = {}
        self.problems: dict[str, int] = {}
        self.offset = 0

    def job_refs(self, job_id: str) -> Sequence[int]:
        job = self.jobs.get(job_id)
        return job.refs if job is not None else ()

    def dataset_refs(self, dataset_id: str) -> Sequence[int]:
        return self.datasets.get(dataset_id, ())

    def adjacent(self, node_id: str, *, upstream: bool) -> Iterable[str]:
        return (self.pred if upstream else self.succ).get(node_id, ())

    def has_job(self, job_id: str) -> bool:
        return job_id in self.jobs

    def has_dataset(self, dataset_id: str) -> bool:
        return dataset_id in self.datasets

    # -- scanning -------------------------------------------------------------------------------
    def scan(self, path: Path, start: int, stop: int, max_line: int) -> None:
        with open(path, "rb") as handle:
            for base, view in logfile.chunks(handle, start, stop, self.problems, max_line=max_line):
                self._lines(base, view)
                self.offset = base + len(view)

    def _lines(self, base: int, view: memoryview) -> None:
        find = view.obj.find  # type: ignore[attr-defined]
        jobs, size, local = self.jobs, len(view), 0
        while local < size:
            end = find(b"\n", local, size)
            try:
                event = _event(view[local:end])
            except msgspec.DecodeError:
                local = end + 1
                continue  # counted by the full fold; the answer's nodes are folded in full anyway
            ref = ((base + local) << logfile.LENGTH_BITS) | (end - local)
            name = event.job
            if name is not None:
                job_id = "job:" + name.namespace + ":" + name.name
                job = jobs.get(job_id)
                if job is None:
                    job = jobs[job_id] = _Job()
                job.refs.append(ref)
                if len(event.inputs) > 2 and event.inputs != job.last_in:
                    job.last_in = self._list(job_id, job.inputs, event.inputs, upstream=True)
                if len(event.outputs) > 2 and event.outputs != job.last_out:
                    job.last_out = self._list(job_id, job.outputs, event.outputs, upstream=False)
            if event.dataset is not None:
                key = "dataset:" + event.dataset.namespace + ":" + event.dataset.name
                self.datasets.setdefault(key, []).append(ref)
            local = end + 1

    def _list(self, job_id: str, known: set[str], raw: msgspec.Raw, *, upstream: bool) -> bytes | None:
        try:
            items = _names(raw)
        except msgspec.DecodeError:
            return None  # a list the full fold trims: its job is folded in full when asked about
        for item in items:
            dataset = "dataset:" + item.namespace + ":" + item.name
            if dataset not in known:
                known.add(dataset)
                self.datasets.setdefault(dataset, [])
                if upstream:
                    self.pred.setdefault(job_id, set()).add(dataset)
                    self.succ.setdefault(dataset, set()).add(job_id)
                else:
                    self.succ.setdefault(job_id, set()).add(dataset)
                    self.pred.setdefault(dataset, set()).add(job_id)
        return bytes(raw)

    def export(self) -> bytes:
        jobs = {key: (job.refs.tobytes(), job.inputs, job.outputs) for key, job in self.jobs.items()}
        return marshal.dumps((jobs, self.datasets, self.problems, self.offset))

    def absorb(self, exported: bytes) -> None:
        """Add the scan of the part of the log after this one's."""
        jobs, datasets, problems, offset = marshal.loads(exported)
        for job_id, (refs, inputs, outputs) in jobs.items():
            job = self.jobs.get(job_id)
            if job is None:
                job = self.jobs[job_id] = _Job()
            job.refs.frombytes(refs)
            for dataset in inputs - job.inputs:
                job.inputs.add(dataset)
                self.pred.setdefault(job_id, set()).add(dataset)
                self.succ.setdefault(dataset, set()).add(job_id)
            for dataset in outputs - job.outputs:
                job.outputs.add(dataset)
                self.succ.setdefault(job_id, set()).add(dataset)
                self.pred.setdefault(dataset, set()).add(job_id)
        for dataset, refs in datasets.items():
            self.datasets.setdefault(dataset, []).extend(refs)
        for kind, number in problems.items():
            self.problems[kind] = self.problems.get(kind, 0) + number
        self.offset = offset


def scan_log(path: Path, *, max_line: int = 64 * 1024 * 1024, workers: int = 2) -> ScanCatalog:
    """A quick scan of the whole log, in two processes when it is big and forking is safe."""
    try:
        stop = os.stat(path).st_size
    except OSError as exc:
        raise SourceUnavailable(f"cannot read event log {path}: {exc}") from exc
    catalog = ScanCatalog()
    middle = _middle(path, stop) if workers > 1 and _fork_ok(stop) else -1
    if middle < 0:
        catalog.scan(path, 0, stop, max_line)
        return catalog
    context = multiprocessing.get_context("fork")
    receiver, sender = context.Pipe(duplex=False)
    process: Any = context.Process(
        target=_scan_part, args=(path, middle, stop, max_line, sender), daemon=True
    )
    process.start()
    sender.close()
    try:
        catalog.scan(path, 0, middle, max_line)
        try:
            catalog.absorb(receiver.recv_bytes())
        except (EOFError, OSError):  # the worker died: scan its part here
            catalog.scan(path, middle, stop, max_line)
    finally:
        receiver.close()
        process.join()
    return catalog


def _scan_part(path: Path, start: int, stop: int, max_line: int, sender: Any) -> None:
    try:
        part = ScanCatalog()
        part.scan(path, start, stop, max_line)
        sender.send_bytes(part.export())
    finally:
        sender.close()


def _fork_ok(size: int) -> bool:
    return (
        size >= PARALLEL_MIN_BYTES
        and "fork" in multiprocessing.get_all_start_methods()
        and threading.active_count() == 1
        and not multiprocessing.current_process().daemon
    )


def _middle(path: Path, stop: int) -> int:
    with open(path, "rb") as handle:
        return logfile.find_line_start(handle, stop // 2, stop)


class QuickSource(LineageSource):
    """Answers about nodes from a raw log (see the module docstring)."""

    def __init__(self, path: str | os.PathLike[str], *, max_event_bytes: int = 64 * 1024 * 1024) -> None:
        self.path = Path(path)
        self.catalog = scan_log(self.path, max_line=max_event_bytes)
        self.problems: dict[str, int] = {}
        self.builder: Any = None  # the process building the index meanwhile, if any

    def _focused(self, node_id: str, as_of: int | None) -> FocusedGraph:
        graph = FocusedGraph(self.catalog, self.path, as_of)
        if not graph.has_node(node_id):
            raise NodeNotFound(f"unknown node {node_id}")
        return graph

    def graph_for(
        self, node_id: str, depth: int, *, as_of: int | None = None, retired: bool = False
    ) -> LineageGraph:
        return self._focused(node_id, as_of)

    def column_graph(
        self, dataset_id: str, column: str, depth: int, *, as_of: int | None = None
    ) -> LineageGraph:
        return self._focused(dataset_id, as_of)

    def schema_versions(self, dataset_id: str, *, as_of: int | None = None) -> list[Fields]:
        record = self._focused(dataset_id, as_of).dataset_record(dataset_id)
        return record.schema_versions() if record is not None else []

    def _needs_index(self) -> SourceUnavailable:
        return SourceUnavailable("this question needs the whole graph: build the index (lineage-plus index)")

    def dataset_names(self) -> list[tuple[str, str]]:
        raise self._needs_index()

    def search(self, text: str, limit: int) -> list[tuple[str, str, str]]:
        raise self._needs_index()

    def node_details(self, node_id: str, *, as_of: int | None = None) -> dict[str, Any]:
        raise self._needs_index()

    def run_details(self, run_id: str) -> dict[str, Any]:
        raise self._needs_index()

    def summary(self) -> tuple[int, int, LineageGraph, list[str]]:
        raise self._needs_index()
