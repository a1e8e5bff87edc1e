"""The first answer from a raw log given to ``--events``: a quick scan, then a focused fold.

A full fold of a large log takes minutes; a question about one node needs only the events of the nodes
around it. The scan reads every line but decodes only what says where events are and which nodes touch:
each event's job and the names of its inputs and outputs (a list a job already reported is compared as
bytes, not decoded again). It records, per job, the place of each of its events, and the edges ever seen.
The answer is then folded from just the events of the nodes it touches (:mod:`.focus`), with the same
fold as a full load, so it is the answer a full load gives.

Questions about the whole graph (search, name lint, the report) and column traces downstream need the
whole log folded (:class:`.EventLogSource`) or the lineage store; :class:`QuickSource` says so with
:class:`SourceUnavailable`.
"""

from __future__ import annotations

import operator
import os
from array import array
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

import msgspec

from airflow_lineage_plus import node_ids as ids
from airflow_lineage_plus.exceptions import NodeNotFound, SourceUnavailable
from airflow_lineage_plus.graph import logfile, run_history
from airflow_lineage_plus.graph.catalog import Catalog
from airflow_lineage_plus.graph.focus import FocusedGraph, read_events
from airflow_lineage_plus.graph.history import LatestAssertions
from airflow_lineage_plus.graph.model import LineageGraph
from airflow_lineage_plus.graph.records import Fields
from airflow_lineage_plus.graph.source import LineageSource
from airflow_lineage_plus.store import wire as w


class _Name(msgspec.Struct, gc=False):
    namespace: str
    name: str


class _Event(msgspec.Struct, gc=False):
    """Only what says where an event belongs: facets are skipped by the decoder, in C."""

    eventTime: str
    job: _Name | None = None
    inputs: list[_Name] | None = None
    outputs: list[_Name] | None = None
    dataset: _Name | None = None


_event = msgspec.json.Decoder(_Event).decode
_key = operator.attrgetter("namespace", "name")  # (namespace, name), built in C


def _name(dataset_id: str) -> tuple[str, str]:
    """(namespace, name) of a dataset id; nothing a scan saw when the id is not a dataset's."""
    try:
        _, namespace, name = ids.split_node_id(dataset_id)
    except ValueError:
        return ("", "")
    return namespace, name


def _lenient(line: memoryview, problems: dict[str, int]) -> _Event | None:
    """The parts of an event of an unexpected shape the full fold keeps (:func:`.wire.decode`), counted
    as the full fold counts them."""
    if len(line) <= 2 and not line.tobytes().strip():
        return None  # an empty line
    try:
        event, _, salvaged = w.decode(line)
    except w.BadEventError as exc:
        problems[exc.kind] = problems.get(exc.kind, 0) + 1
        return None
    if salvaged:
        problems["salvaged"] = problems.get("salvaged", 0) + 1
    lists = [
        [_Name(d.namespace, d.name) for d in w.decode_datasets(raw)[0]] if len(raw) > 2 else None
        for raw in (event.inputs, event.outputs)
    ]
    job = _Name(event.job.namespace, event.job.name) if event.job is not None else None
    dataset = _Name(event.dataset.namespace, event.dataset.name) if event.dataset is not None else None
    return _Event(event.eventTime, job, lists[0], lists[1], dataset)


class _Job:
    __slots__ = ("inputs", "last_in", "last_out", "outputs", "refs")

    def __init__(self) -> None:
        self.refs = array("Q")
        self.inputs: set[tuple[str, str]] = set()
        self.outputs: set[tuple[str, str]] = set()
        self.last_in: list[_Name] | None = None  # the last lists added (the next is usually equal)
        self.last_out: list[_Name] | None = None


class ScanCatalog(Catalog):
    """Where events are and which nodes touch, from a quick scan of the log."""

    def __init__(self) -> None:
        self.jobs: dict[tuple[str, str], _Job] = {}  # while scanning; by id once finished
        self.by_id: dict[str, _Job] = {}
        # (namespace, name) of a dataset -> refs of events naming it as their ``dataset``
        self.dataset_events: dict[tuple[str, str], list[int]] = {}
        self.readers: dict[tuple[str, str], list[str]] = {}  # dataset -> ids of jobs reading it
        self.writers: dict[tuple[str, str], list[str]] = {}
        self.problems: dict[str, int] = {}

    def job_refs(self, job_id: str, as_of: int | None = None) -> Sequence[int]:
        job = self.by_id.get(job_id)
        return job.refs if job is not None else ()

    def dataset_refs(self, dataset_id: str, as_of: int | None = None) -> Sequence[int]:
        return self.dataset_events.get(_name(dataset_id), ())

    def adjacent(self, node_id: str, *, upstream: bool) -> Iterable[str]:
        if node_id.startswith("job:"):
            job = self.by_id.get(node_id)
            known = () if job is None else job.inputs if upstream else job.outputs
            return ["dataset:" + namespace + ":" + name for namespace, name in known]
        return (self.writers if upstream else self.readers).get(_name(node_id), ())

    def has_job(self, job_id: str) -> bool:
        return job_id in self.by_id

    def has_dataset(self, dataset_id: str) -> bool:
        key = _name(dataset_id)
        return key in self.readers or key in self.writers or key in self.dataset_events

    # -- scanning -------------------------------------------------------------------------------
    def add_lines(self, base: int, view: memoryview, max_line: int = logfile.MAX_LINE) -> None:
        """Note where the complete lines of one chunk (at file offset ``base``) belong (lines longer than
        ``max_line`` are not events: the fold skips them too)."""
        find = view.obj.find  # type: ignore[attr-defined]
        jobs, size, local, key = self.jobs, len(view), 0, _key
        while local < size:
            end = find(b"\n", local, size)
            if end - local > max_line:
                self.problems["too_large"] = self.problems.get("too_large", 0) + 1
                local = end + 1
                continue
            try:
                decoded: _Event | None = _event(view[local:end])
            except msgspec.DecodeError:
                decoded = _lenient(view[local:end], self.problems)  # what the full fold keeps of it
            if decoded is None:
                local = end + 1
                continue
            event = decoded
            name = event.job
            if name is None and event.dataset is None:
                self.problems["invalid"] = self.problems.get("invalid", 0) + 1
            elif name is not None:
                job_key = key(name)
                job = jobs.get(job_key)
                if job is None:
                    job = jobs[job_key] = _Job()
                job.refs.append(((base + local) << logfile.LENGTH_BITS) | (end - local))
                listed = event.inputs
                if listed and listed != job.last_in:
                    job.inputs.update(map(key, listed))
                    job.last_in = listed
                listed = event.outputs
                if listed and listed != job.last_out:
                    job.outputs.update(map(key, listed))
                    job.last_out = listed
            if event.dataset is not None:
                ref = ((base + local) << logfile.LENGTH_BITS) | (end - local)
                self.dataset_events.setdefault(key(event.dataset), []).append(ref)
            local = end + 1

    def finish(self) -> None:
        """Index the scan by node: jobs by id, and which jobs read and write each dataset (by name)."""
        self.by_id = {"job:" + namespace + ":" + name: job for (namespace, name), job in self.jobs.items()}
        readers: dict[tuple[str, str], list[str]] = {}
        writers: dict[tuple[str, str], list[str]] = {}
        self.readers, self.writers = readers, writers
        for job_id, job in self.by_id.items():
            for key in job.inputs:
                readers.setdefault(key, []).append(job_id)
            for key in job.outputs:
                writers.setdefault(key, []).append(job_id)


def scan_log(path: Path, *, max_line: int = logfile.MAX_LINE) -> ScanCatalog:
    """A quick scan of the whole log."""
    try:
        stop = os.stat(path).st_size
        logfile.check_size(path, stop)
    except (OSError, ValueError) as exc:
        raise SourceUnavailable(f"cannot read event log {path}: {exc}") from exc
    catalog = ScanCatalog()
    with open(path, "rb") as handle:
        for base, view in logfile.chunks(handle, 0, stop, catalog.problems, max_line=max_line):
            catalog.add_lines(base, view, max_line)
    catalog.finish()
    return catalog


class QuickSource(LineageSource):
    """Answers about nodes from a raw log (see the module docstring)."""

    catalog: Catalog

    def __init__(self, path: str | os.PathLike[str], *, max_event_bytes: int = logfile.MAX_LINE) -> None:
        self.path = Path(path)
        scanned = scan_log(self.path, max_line=max_event_bytes)
        self.catalog = scanned
        self.problems: dict[str, int] = scanned.problems

    def _graph(self, as_of: int | None) -> FocusedGraph:
        """A new graph folded where a question looks (up to ``as_of``)."""
        return FocusedGraph(self.catalog, self._payloads, as_of)

    def _payloads(self, refs: Sequence[int]) -> dict[int, bytes]:
        return logfile.read_payloads(self.path, refs)

    def _focused(self, node_id: str, as_of: int | None) -> FocusedGraph:
        graph = self._graph(as_of)
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

    def latest_assertions(
        self, dataset_ids: Sequence[str], *, as_of: int | None = None
    ) -> dict[str, list[LatestAssertions]]:
        """Read back from the log, as a full load reads them (:func:`.run_history.latest_assertions`)."""
        return run_history.latest_assertions(self._graph(as_of), dataset_ids, self._read_refs, as_of)

    def _read_refs(self, refs: Sequence[int]) -> dict[int, dict[str, Any] | None]:
        return read_events(self._payloads, refs)

    def _needs_whole_graph(self) -> SourceUnavailable:
        return SourceUnavailable(
            "this question needs the whole graph: read the whole log (EventLogSource) or import it into "
            "the lineage store (lineage-plus import LOG)"
        )

    def dataset_names(self) -> list[tuple[str, str]]:
        raise self._needs_whole_graph()

    def search(self, text: str, limit: int) -> list[tuple[str, str, str]]:
        raise self._needs_whole_graph()

    def node_details(self, node_id: str, *, as_of: int | None = None) -> dict[str, Any]:
        raise self._needs_whole_graph()

    def run_details(self, run_id: str) -> dict[str, Any]:
        raise self._needs_whole_graph()

    def summary(self) -> tuple[int, int, LineageGraph, list[str]]:
        raise self._needs_whole_graph()
