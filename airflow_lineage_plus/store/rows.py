"""One raw event as the store keeps it: its bytes, the columns questions filter on, and its edges.

Every field of an event is hostile: only a JSON object whose ``eventTime`` is an ISO 8601 time is kept
(what the graph cannot use at all), and the columns are cut to their width. What the graph later makes
of the payload is the graph's business (it folds the bytes as it folds a line of the event log).
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping
from typing import Any

import attrs
import orjson

from airflow_lineage_plus import node_ids as ids
from airflow_lineage_plus.exceptions import BadEventError
from airflow_lineage_plus.timestamps import to_micros

_WIDTH = {"event_type": 32, "run_id": 255, "parent_run_id": 255, "job_namespace": 255, "job_name": 1000}


def node_key(node_id: str) -> int:
    """The store's key of a node id: a 63-bit BLAKE2b hash (a non-negative BIGINT on every engine)."""
    return int.from_bytes(hashlib.blake2b(node_id.encode(), digest_size=8).digest(), "big") >> 1


@attrs.frozen
class Edge:
    """A (job, dataset, direction) an event names: the ``lineage_plus_edge`` row."""

    job_key: int
    dataset_key: int
    output: int  # 0: the job reads the dataset, 1: it writes it
    job_id: str
    dataset_id: str


@attrs.frozen
class RawEvent:
    """A raw event: ``payload`` (its JSON bytes), ``digest`` (BLAKE2b-128 of them), the columns, and the
    ``edges`` its inputs and outputs name."""

    payload: bytes
    digest: bytes
    event_time: int
    event_type: str | None
    run_id: str | None
    parent_run_id: str | None
    job_namespace: str | None
    job_name: str | None
    node_key: int | None
    edges: tuple[Edge, ...] = ()

    def row(self) -> dict[str, Any]:
        """The ``lineage_plus_event`` row (without its id)."""
        return {field: getattr(self, field) for field in _EVENT_COLUMNS}


_EVENT_COLUMNS = tuple(field.name for field in attrs.fields(RawEvent) if field.name != "edges")


def raw_event(payload: bytes | memoryview) -> RawEvent:
    """The raw event of one event's JSON bytes; :class:`BadEventError` (``malformed``/``invalid``)."""
    data = bytes(payload).strip()
    try:
        event = orjson.loads(data)
    except orjson.JSONDecodeError as exc:
        raise BadEventError("malformed", str(exc)) from exc
    if not isinstance(event, dict):
        raise BadEventError("malformed", "not a JSON object")
    event_time = event.get("eventTime")
    try:
        micros = to_micros(event_time) if isinstance(event_time, str) else None
    except ValueError:
        micros = None
    if micros is None:
        raise BadEventError("invalid", "eventTime is missing or not an ISO 8601 time")
    run = _mapping(event.get("run"))
    job = _mapping(event.get("job"))
    parent = _mapping(_mapping(_mapping(run.get("facets")).get("parent")).get("run"))
    node, edges = _node_and_edges(event, job)
    return RawEvent(
        payload=data,
        digest=hashlib.blake2b(data, digest_size=16).digest(),
        event_time=micros,
        event_type=_text(event.get("eventType"), "event_type"),
        run_id=_text(run.get("runId"), "run_id"),
        parent_run_id=_text(parent.get("runId"), "parent_run_id"),
        job_namespace=_text(job.get("namespace"), "job_namespace"),
        job_name=_text(job.get("name"), "job_name"),
        node_key=node,
        edges=edges,
    )


def _node_and_edges(event: Mapping[str, Any], job: Mapping[str, Any]) -> tuple[int | None, tuple[Edge, ...]]:
    """The key of the node whose events this is (its job, else a DatasetEvent's dataset) and its edges:
    the names its inputs and outputs give, whatever else the entries hold (what a quick scan records)."""
    name = _name(job)
    if name is None:
        dataset = _name(_mapping(event.get("dataset")))
        return (node_key(ids.dataset_id(*dataset)) if dataset is not None else None), ()
    job_id = ids.job_id(*name)
    job_key = node_key(job_id)
    edges: dict[tuple[int, int], Edge] = {}
    for output, field in ((0, "inputs"), (1, "outputs")):
        listed = event.get(field)
        for entry in listed if isinstance(listed, list) else ():
            found = _name(_mapping(entry))
            if found is not None:
                dataset_id = ids.dataset_id(*found)
                key = node_key(dataset_id)
                edges[(key, output)] = Edge(job_key, key, output, job_id, dataset_id)
    return job_key, tuple(edges.values())


def _name(value: Mapping[str, Any]) -> tuple[str, str] | None:
    namespace, name = value.get("namespace"), value.get("name")
    return (namespace, name) if isinstance(namespace, str) and isinstance(name, str) else None


def _mapping(value: Any) -> Mapping[str, Any]:
    return value if isinstance(value, dict) else {}


def _text(value: Any, column: str) -> str | None:
    return value[: _WIDTH[column]] if isinstance(value, str) else None
