"""The embedded event log: newline-delimited OpenLineage JSON written by the client's ``file`` transport.

Loaded once into a :class:`LineageGraph`; :meth:`EventLogSource.refresh` then reads only the bytes
appended since (a truncated or replaced file is reloaded). Each event is remembered by its byte offset
and length, so details are re-read from the file instead of being kept in memory.
"""

from __future__ import annotations

import contextlib
import gc
import logging
import mmap
import os
import threading
from pathlib import Path
from typing import Any

import orjson

from airflow_lineage_plus.graph import facet_keys as fk
from airflow_lineage_plus.graph import ids
from airflow_lineage_plus.graph import wire as w
from airflow_lineage_plus.graph.model import FAILED_STATES, Fields, LineageGraph, RunRecord, Transform
from airflow_lineage_plus.graph.schema_diff import diff_fields
from airflow_lineage_plus.graph.source import LineageSource, NodeNotFound, SourceUnavailable

log = logging.getLogger(__name__)

MAX_EVENT_BYTES = 64 * 1024 * 1024
WINDOW_BYTES = 256 * 1024 * 1024  # a multiple of mmap.ALLOCATIONGRANULARITY
_LENGTH_BITS = 32
_RECENT_RUNS = 20


class EventLogSource(LineageSource):
    def __init__(
        self,
        path: str | Path,
        *,
        max_event_bytes: int = MAX_EVENT_BYTES,
        missing_ok: bool = False,
        window_bytes: int = WINDOW_BYTES,
    ) -> None:
        """``missing_ok``: a log that does not exist yet is an empty graph (read once it appears).
        ``window_bytes``: how much of the file is mapped at a time (rounded to the mmap granularity)."""
        self.path = Path(path)
        granularity = mmap.ALLOCATIONGRANULARITY
        self.window_bytes = max(granularity, window_bytes - window_bytes % granularity)
        self.missing_ok = missing_ok
        self.max_event_bytes = max_event_bytes
        self.graph = LineageGraph()
        self.problems: dict[str, int] = {}
        self.events = 0
        self.offset = 0
        self._identity: tuple[int, int, bytes] | None = None
        self._lock = threading.RLock()
        if not self.path.is_file() and not (missing_ok and not self.path.exists()):
            raise SourceUnavailable(f"event log {self.path} does not exist or is not a file")
        self.refresh()

    # -- loading --------------------------------------------------------------------------------
    def _reset(self) -> None:
        self.graph = LineageGraph()
        self.problems = {}
        self.events = 0
        self.offset = 0
        self._identity = None

    def guard(self) -> contextlib.AbstractContextManager[Any]:
        return self._lock

    def refresh(self) -> int:
        """Read events appended since the last call; reload when the file was truncated or replaced."""
        with self._lock:
            return self._refresh()

    def _refresh(self) -> int:
        if self.missing_ok and not self.path.exists():
            if self._identity is not None:
                self._reset()  # the log was removed: start again from nothing
            return 0
        try:
            stat = os.stat(self.path)
            with open(self.path, "rb") as handle:
                head = handle.read(256)
        except OSError as exc:
            raise SourceUnavailable(f"cannot read event log {self.path}: {exc}") from exc
        identity = (stat.st_dev, stat.st_ino, head[: min(len(head), 256)])
        if self._identity is not None:
            same_file = identity[:2] == self._identity[:2] and head.startswith(self._identity[2])
            if not same_file or stat.st_size < self.offset:
                log.info("event log %s was truncated or replaced; reloading", self.path)
                self._reset()
        self._identity = identity
        if stat.st_size == self.offset:
            return 0
        return self._read_from(self.offset)

    def _read_from(self, start: int) -> int:
        # The graph is millions of small acyclic objects: the cyclic GC would rescan them over and over
        # while they are built (3-5x slower). Pause it, then freeze what was built out of later scans.
        enabled = gc.isenabled()
        gc.disable()
        try:
            return self._read_events(start)
        finally:
            if enabled:
                gc.enable()
            gc.freeze()

    def _read_events(self, start: int) -> int:
        """Fold every complete line from ``start``.

        Lines are decoded in place from memory-mapped windows of the file (no copies); each window is
        unmapped once read, so the mapped file does not count against the process's memory.
        """
        count = 0
        position = start
        try:
            with open(self.path, "rb") as handle:
                size = os.fstat(handle.fileno()).st_size
                while position < size:
                    base = position - position % mmap.ALLOCATIONGRANULARITY
                    length = min(self.window_bytes, size - base)
                    done, read = self._read_mapped(handle, base, length, position)
                    count += done
                    if read == position:  # no newline in the window after ``position``
                        if base + length >= size:
                            break  # a trailing line still being written: read it next time
                        end = _find_newline(handle, base + length)
                        if end < 0:
                            break
                        if end - position > self.max_event_bytes:
                            self.problems["too_large"] = self.problems.get("too_large", 0) + 1
                            read = end + 1
                        else:  # a line longer than the window: map it whole
                            done, read = self._read_mapped(handle, base, end + 1 - base, position)
                            count += done
                    position = read
        except (OSError, ValueError) as exc:
            raise SourceUnavailable(f"cannot read event log {self.path}: {exc}") from exc
        finally:
            self.offset = position
            self.events += count
            graph = self.graph
            if graph.salvaged:
                self.problems["salvaged"] = self.problems.get("salvaged", 0) + graph.salvaged
                graph.salvaged = 0
        return count

    def _read_window(self, mapped: mmap.mmap, base: int, local: int) -> tuple[int, int]:
        """(events folded, file offset after the last complete line) of one mapped window."""
        decode = w.decode
        apply = self.graph.apply
        problems = self.problems
        limit = self.max_event_bytes
        find = mapped.find
        view = memoryview(mapped)
        count = 0
        event: w.Event | None = None
        try:
            while True:
                end = find(b"\n", local)
                if end < 0:
                    break
                length = end - local
                if length > limit:
                    problems["too_large"] = problems.get("too_large", 0) + 1
                elif length > 2 or view[local:end].tobytes().strip():
                    try:
                        event, micros, salvaged = decode(view[local:end])
                    except w.BadEventError as exc:
                        problems[exc.kind] = problems.get(exc.kind, 0) + 1
                    else:
                        if salvaged:
                            problems["salvaged"] = problems.get("salvaged", 0) + 1
                        apply(event, micros, ((base + local) << _LENGTH_BITS) | length)
                        count += 1
                local = end + 1
        finally:
            event = None  # the last decoded event may still hold views into the map
            with contextlib.suppress(BufferError):
                view.release()
        return count, base + local

    def _read_mapped(self, handle: Any, base: int, length: int, position: int) -> tuple[int, int]:
        mapped = mmap.mmap(handle.fileno(), length, offset=base, access=mmap.ACCESS_READ)
        try:
            return self._read_window(mapped, base, position - base)
        finally:
            with contextlib.suppress(BufferError):  # a decoded value still points into the map: GC unmaps it
                mapped.close()

    def _read_ref(self, ref: int) -> dict[str, Any] | None:
        offset, size = ref >> _LENGTH_BITS, ref & ((1 << _LENGTH_BITS) - 1)
        try:
            with open(self.path, "rb") as handle:
                handle.seek(offset)
                data = orjson.loads(handle.read(size))
        except (OSError, orjson.JSONDecodeError):
            return None
        return data if isinstance(data, dict) else None

    # -- LineageSource --------------------------------------------------------------------------
    def _require(self, node_id: str) -> None:
        if not self.graph.has_node(node_id):
            raise NodeNotFound(f"unknown node {node_id}")

    def graph_for(self, node_id: str, depth: int) -> LineageGraph:
        self._require(node_id)
        return self.graph

    def column_graph(self, dataset_id: str, column: str, depth: int) -> LineageGraph:
        self._require(dataset_id)
        return self.graph

    def schema_versions(self, dataset_id: str) -> list[Fields]:
        self._require(dataset_id)
        return self.graph.datasets[dataset_id].schema_versions()

    def summary(self) -> tuple[int, int, LineageGraph, list[str]]:
        graph = self.graph
        failed = sorted(
            job.id
            for job in graph.jobs.values()
            if (run := graph.latest_run(job)) is not None and run.state in FAILED_STATES
        )
        return len(graph.datasets), len(graph.jobs), graph, failed

    def dataset_names(self) -> list[tuple[str, str]]:
        return [(d.namespace, d.name) for d in self.graph.datasets.values()]

    def search(self, text: str, limit: int) -> list[tuple[str, str, str]]:
        needle = text.lower()
        found: list[tuple[str, str, str]] = []
        for kind, records in ((ids.DATASET, self.graph.datasets), (ids.JOB, self.graph.jobs)):
            for record in records.values():
                if needle in record.name.lower() or needle in record.namespace.lower():
                    found.append((kind, record.namespace, record.name))
        return rank_search(found, needle)[:limit]

    def node_details(self, node_id: str) -> dict[str, Any]:
        self._require(node_id)
        graph = self.graph
        if node_id in graph.datasets:
            record = graph.datasets[node_id]
            facets = self._dataset_facets(record.ref, record.namespace, record.name)
            versions = record.schema_versions()
            quality, quality_run = self._quality(record.write_ref, record.namespace, record.name)
            return {
                "id": node_id,
                "type": ids.DATASET,
                "namespace": record.namespace,
                "name": record.name,
                "fields": [{"name": n, "type": t, "description": d} for n, t, d in record.fields],
                "schemaVersions": [[{"name": n, "type": t} for n, t in v] for v in versions],
                "lastSchemaChange": diff_fields(versions[1], versions[0]) if len(versions) > 1 else [],
                "quality": quality,
                "qualityRunId": quality_run,
                "columnLineage": {
                    column: [column_input(*item) for item in inputs]
                    for column, inputs in sorted(record.columns.items())
                },
                "owners": list(record.owners),
                "tags": _tag_names(facets.get(fk.TAGS)),
                "documentation": (facets.get(fk.DOCUMENTATION) or {}).get("description"),
                "producers": sorted(graph.pred.get(node_id, ())),
                "consumers": sorted(graph.succ.get(node_id, ())),
            }
        job = graph.jobs[node_id]
        event = self._read_ref(job.ref) if job.ref is not None else None
        job_facets = ((event or {}).get("job") or {}).get("facets") or {}
        runs = sorted(graph.all_runs(job), key=RunRecord.sort_key, reverse=True)
        latest = runs[0] if runs else None
        return {
            "id": node_id,
            "type": ids.JOB,
            "namespace": job.namespace,
            "name": job.name,
            "latestRun": latest.summary() if latest else None,
            "runs": [run_summary(run) for run in runs[:_RECENT_RUNS]],
            "inputs": sorted(graph.pred.get(node_id, ())),
            "outputs": sorted(graph.succ.get(node_id, ())),
            "sql": (job_facets.get(fk.SQL) or {}).get("query"),
            "owners": list(job.owners),
            "documentation": (job_facets.get(fk.DOCUMENTATION) or {}).get("description"),
            "sourceCodeLocation": job_facets.get(fk.SOURCE_CODE_LOCATION),
            "airflow": self._airflow_ids(job.name, latest),
        }

    def run_details(self, run_id: str) -> dict[str, Any]:
        run = self.graph.runs.get(run_id)
        if run is None:
            raise NodeNotFound(f"unknown run {run_id}")
        events = [e for e in (self._read_ref(ref) for ref in run.refs) if e is not None]
        events.sort(key=lambda e: _safe_micros(e.get("eventTime")))
        facets: dict[str, Any] = {}
        inputs: dict[str, dict[str, Any]] = {}
        outputs: dict[str, dict[str, Any]] = {}
        for event in events:
            facets.update(((event.get("run") or {}).get("facets")) or {})
            for key, target in (("inputs", inputs), ("outputs", outputs)):
                for item in event.get(key) or ():
                    if isinstance(item, dict) and "namespace" in item and "name" in item:
                        entry = target.setdefault(
                            ids.dataset_id(item["namespace"], item["name"]),
                            {"namespace": item["namespace"], "name": item["name"], "facets": {}},
                        )
                        for facet_key in ("facets", "inputFacets", "outputFacets"):
                            entry["facets"].update(item.get(facet_key) or {})
        job = self.graph.jobs[run.job_id]
        return {
            **run_summary(run),
            "job": {"id": job.id, "namespace": job.namespace, "name": job.name},
            "facets": facets,
            "inputs": [inputs[k] for k in sorted(inputs)],
            "outputs": [outputs[k] for k in sorted(outputs)],
        }

    # -- details helpers ------------------------------------------------------------------------
    def _dataset_entries(self, ref: int | None, namespace: str, name: str) -> list[dict[str, Any]]:
        event = self._read_ref(ref) if ref is not None else None
        if event is None:
            return []
        entries = [*(event.get("inputs") or ()), *(event.get("outputs") or ())]
        if isinstance(event.get("dataset"), dict):
            entries.append(event["dataset"])
        return [
            e
            for e in entries
            if isinstance(e, dict) and e.get("namespace") == namespace and e.get("name") == name
        ]

    def _dataset_facets(self, ref: int | None, namespace: str, name: str) -> dict[str, Any]:
        facets: dict[str, Any] = {}
        for entry in self._dataset_entries(ref, namespace, name):
            facets.update(entry.get("facets") or {})
        return facets

    def _quality(self, ref: int | None, namespace: str, name: str) -> tuple[dict[str, Any], str | None]:
        quality: dict[str, Any] = {}
        for entry in self._dataset_entries(ref, namespace, name):
            for facet_key in ("facets", "inputFacets", "outputFacets"):
                for key, value in (entry.get(facet_key) or {}).items():
                    if key in fk.QUALITY_FACETS:
                        quality[key] = value
        event = self._read_ref(ref) if ref is not None else None
        run_id = ((event or {}).get("run") or {}).get("runId")
        return quality, run_id

    def _airflow_ids(self, job_name: str, run: RunRecord | None) -> dict[str, str | None]:
        dag_id = task_id = run_id = None
        for ref in reversed(run.refs if run is not None else []):
            facets = ((self._read_ref(ref) or {}).get("run") or {}).get("facets") or {}
            airflow = facets.get(fk.AIRFLOW_RUN) or {}
            dag_id = dag_id or (airflow.get("dag") or {}).get("dag_id")
            task_id = task_id or (airflow.get("task") or {}).get("task_id")
            run_id = run_id or (airflow.get("dagRun") or {}).get("run_id")
            parent_job = ((facets.get(fk.PARENT) or {}).get("job") or {}).get("name")
            if dag_id is None and parent_job and job_name.startswith(parent_job + "."):
                dag_id, task_id = parent_job, job_name[len(parent_job) + 1 :]
        return {"dag_id": dag_id, "task_id": task_id, "run_id": run_id}


def _find_newline(handle: Any, start: int) -> int:
    """Offset of the first newline at or after ``start``; -1 when there is none yet."""
    handle.seek(start)
    scanned = start
    while chunk := handle.read(8 * 1024 * 1024):
        newline = chunk.find(b"\n")
        if newline >= 0:
            return scanned + newline
        scanned += len(chunk)
    return -1


def run_summary(run: RunRecord) -> dict[str, Any]:
    return {**run.summary(), "skipReason": run.skip_reason, "executionMode": run.exec_mode}


def column_input(namespace: str, name: str, field: str, transforms: tuple[Transform, ...]) -> dict[str, Any]:
    return {
        "namespace": namespace,
        "name": name,
        "column": field,
        "transformations": transformation_list(transforms),
    }


def transformation_list(transforms: tuple[Transform, ...]) -> list[dict[str, Any]]:
    return [{"type": t, "subtype": s, "description": d} for t, s, d in transforms]


def rank_search(found: list[tuple[str, str, str]], needle: str) -> list[tuple[str, str, str]]:
    def key(item: tuple[str, str, str]) -> tuple[int, int, str, str, str]:
        name = item[2].lower()
        rank = 0 if name == needle else 1 if name.startswith(needle) else 2 if needle in name else 3
        return (rank, len(name), item[2], item[1], item[0])

    return sorted(found, key=key)


def _tag_names(facet: Any) -> list[str]:
    if not isinstance(facet, dict):
        return []
    return sorted(str(t.get("key") or t.get("name")) for t in facet.get("tags") or () if isinstance(t, dict))


def _safe_micros(value: Any) -> int:
    try:
        return w.to_micros(value)
    except (TypeError, ValueError):
        return 0
