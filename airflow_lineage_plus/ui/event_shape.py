"""The required shape of an OpenLineage event, as the official JSON Schema (2-0-2) requires it.

:func:`check_shape` is what the OpenLineage endpoint asks of every event before it is stored: an event
that is not a RunEvent, JobEvent or DatasetEvent of the spec's required fields raises
:class:`~airflow_lineage_plus.exceptions.BadEventError` naming the first bad field (``run.runId``,
``inputs[0].name``...). Only the required fields are checked here; facets are the producer's business
and pass through the event budget (limits, redaction) like any event.
"""

from __future__ import annotations

import uuid
from typing import Any

from airflow_lineage_plus.exceptions import BadEventError
from airflow_lineage_plus.timestamps import parse_iso

#: ``eventType`` values of a RunEvent (the spec's enum)
EVENT_TYPES = frozenset({"START", "RUNNING", "COMPLETE", "ABORT", "FAIL", "OTHER"})


def _bad(field: str, why: str) -> BadEventError:
    return BadEventError("invalid", f"{field}: {why}")


def _text(value: Any, field: str) -> str:
    if not isinstance(value, str) or not value:
        raise _bad(field, "required, a non-empty string")
    return value


def _object(value: Any, field: str) -> dict[str, Any]:
    if not isinstance(value, dict):
        raise _bad(field, "required, an object")
    return value


def _named(value: Any, field: str) -> None:
    """A job or dataset: ``namespace`` and ``name``; ``facets`` an object when present."""
    node = _object(value, field)
    _text(node.get("namespace"), f"{field}.namespace")
    _text(node.get("name"), f"{field}.name")
    if "facets" in node and not isinstance(node["facets"], dict):
        raise _bad(f"{field}.facets", "an object")


def _datasets(event: dict[str, Any], key: str) -> None:
    if key not in event or event[key] is None:
        return
    if not isinstance(event[key], list):
        raise _bad(key, "an array of datasets")
    for index, dataset in enumerate(event[key]):
        _named(dataset, f"{key}[{index}]")


def _common(event: dict[str, Any]) -> None:
    try:
        parse_iso(_text(event.get("eventTime"), "eventTime"))
    except ValueError:
        raise _bad("eventTime", "an ISO 8601 date-time") from None
    _text(event.get("producer"), "producer")
    _text(event.get("schemaURL"), "schemaURL")


def _run(event: dict[str, Any]) -> None:
    run = _object(event.get("run"), "run")
    try:
        uuid.UUID(_text(run.get("runId"), "run.runId"))
    except ValueError:
        raise _bad("run.runId", "a UUID") from None
    if "facets" in run and not isinstance(run["facets"], dict):
        raise _bad("run.facets", "an object")
    event_type = event.get("eventType")
    if event_type is not None and event_type not in EVENT_TYPES:
        raise _bad("eventType", "one of " + ", ".join(sorted(EVENT_TYPES)))


def check_shape(event: Any) -> str:
    """The kind of ``event`` (``RunEvent``, ``JobEvent`` or ``DatasetEvent``) when it has the spec's
    required fields; else :class:`BadEventError` naming the first bad field."""
    if not isinstance(event, dict):
        raise BadEventError("malformed", "an event is a JSON object")
    _common(event)
    if "run" in event:
        _run(event)
        _named(event.get("job"), "job")
        kind = "RunEvent"
    elif "job" in event:
        _named(event["job"], "job")
        kind = "JobEvent"
    elif "dataset" in event:
        _named(event["dataset"], "dataset")
        return "DatasetEvent"
    else:
        raise _bad("run", "required (or job for a JobEvent, dataset for a DatasetEvent)")
    _datasets(event, "inputs")
    _datasets(event, "outputs")
    return kind
