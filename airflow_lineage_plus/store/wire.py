"""Decoding OpenLineage events from JSON bytes: only the parts the graph needs, leniently.

A typed ``msgspec`` decode reads just the fields declared here and skips everything else (unknown
facets cost nothing). When an event has an unexpected shape somewhere, it is decoded generically and
the broken parts (one facet, one dataset) are dropped, so the rest of the event is still kept.
"""

from __future__ import annotations

from datetime import datetime, timedelta, timezone
from typing import Any

import msgspec

from airflow_lineage_plus import facet_keys as fk
from airflow_lineage_plus.exceptions import BadEventError
from airflow_lineage_plus.timestamps import to_micros

_EPOCH = datetime(1970, 1, 1, tzinfo=timezone.utc)

# Every struct here is ``gc=False``: decoded values hold only strings, numbers, raw bytes and other such
# structs, so they can form no reference cycle, and a load decoding millions of them skips tracking each
# one (docs/graph.md, "Engine, and why").


class Owner(msgspec.Struct, gc=False):
    name: str
    type: str | None = None


class Ownership(msgspec.Struct, gc=False):
    owners: list[Owner] | None = None


class SchemaField(msgspec.Struct, gc=False):
    name: str
    type: str | None = None
    description: str | None = None


class Schema(msgspec.Struct, gc=False):
    fields: list[SchemaField] | None = None


class Transformation(msgspec.Struct, gc=False):
    type: str | None = None
    subtype: str | None = None
    description: str | None = None


class InputField(msgspec.Struct, gc=False):
    namespace: str
    name: str
    field: str
    transformations: list[Transformation] | None = None


class ColumnLineageField(msgspec.Struct, gc=False):
    inputFields: list[InputField] | None = None
    transformationType: str | None = None
    transformationDescription: str | None = None


class ColumnLineage(msgspec.Struct, gc=False):
    fields: dict[str, ColumnLineageField] | None = None


#: an absent raw facet
NO_RAW = msgspec.Raw()


class DatasetFacets(msgspec.Struct, gc=False):
    """Kept raw: a dataset usually carries the same facet run after run, so it is decoded only on change."""

    schema: msgspec.Raw = NO_RAW
    ownership: msgspec.Raw = NO_RAW
    columnLineage: msgspec.Raw = NO_RAW


class Dataset(msgspec.Struct, gc=False):
    namespace: str
    name: str
    facets: msgspec.Raw = NO_RAW  # DatasetFacets, decoded by decode_dataset_facets when they changed


class JobFacets(msgspec.Struct, gc=False):
    ownership: msgspec.Raw = NO_RAW
    sloTier: msgspec.Raw = msgspec.field(default=NO_RAW, name=fk.SLO_TIER)


class SloTier(msgspec.Struct, gc=False):
    tier: str | None = None
    freshnessMinutes: int | None = None


class Job(msgspec.Struct, gc=False):
    namespace: str
    name: str
    facets: JobFacets | None = None


class ParentRun(msgspec.Struct, gc=False):
    runId: str


class ParentJob(msgspec.Struct, gc=False):
    namespace: str
    name: str


class Parent(msgspec.Struct, gc=False):
    run: ParentRun
    job: ParentJob | None = None


class ErrorMessage(msgspec.Struct, gc=False):
    message: str | None = None


class SkipState(msgspec.Struct, gc=False):
    skipped: bool = False
    reason: str | None = None
    state: str | None = None  # the Airflow state: "skipped" or "upstream_failed"


class ExecutionMode(msgspec.Struct, gc=False):
    mode: str | None = None


class AirflowState(msgspec.Struct, gc=False):
    dagRunState: str | None = None
    tasksState: dict[str, str | None] | None = None


class AirflowDag(msgspec.Struct, gc=False):
    dag_id: str | None = None


class AirflowDagRun(msgspec.Struct, gc=False):
    run_id: str | None = None


class AirflowRunFacet(msgspec.Struct, gc=False):
    """The provider's ``airflow`` (task run) and ``airflowDagRun`` (DAG run) facets: only the DAG id and
    the DAG run's Airflow ``run_id``."""

    dag: AirflowDag | None = None
    dagRun: AirflowDagRun | None = None


class JobIdentifier(msgspec.Struct, gc=False):
    namespace: str
    name: str


class RunIdentifier(msgspec.Struct, gc=False):
    runId: str


class JobDependency(msgspec.Struct, gc=False):
    job: JobIdentifier
    run: RunIdentifier | None = None


class JobDependencies(msgspec.Struct, gc=False):
    """The ``jobDependencies`` run facet: the provider puts it on an asset-triggered DAG run, one
    ``upstream`` entry per task run whose asset event the DAG run consumed (only those are read)."""

    upstream: list[JobDependency] | None = None


class RunFacets(msgspec.Struct, gc=False):
    parent: Parent | None = None
    errorMessage: ErrorMessage | None = None
    skipState: SkipState | None = msgspec.field(default=None, name=fk.SKIP_STATE)
    executionMode: ExecutionMode | None = msgspec.field(default=None, name=fk.EXECUTION_MODE)
    airflowState: AirflowState | None = None
    airflow: AirflowRunFacet | None = msgspec.field(default=None, name=fk.AIRFLOW_RUN)
    airflowDagRun: AirflowRunFacet | None = msgspec.field(default=None, name=fk.AIRFLOW_DAG_RUN)
    jobDependencies: JobDependencies | None = msgspec.field(default=None, name=fk.JOB_DEPENDENCIES)


class Run(msgspec.Struct, gc=False):
    runId: str
    facets: RunFacets | None = None


class Event(msgspec.Struct, gc=False):
    """A RunEvent, JobEvent (no run) or DatasetEvent (``dataset`` only)."""

    eventTime: str
    eventType: str | None = None
    run: Run | None = None
    job: Job | None = None
    inputs: msgspec.Raw = NO_RAW  # decoded by decode_datasets, once per distinct list per job
    outputs: msgspec.Raw = NO_RAW
    dataset: Dataset | None = None


_decoder = msgspec.json.Decoder(Event)
_any_decoder = msgspec.json.Decoder()
_schema_decoder = msgspec.json.Decoder(Schema)
_ownership_decoder = msgspec.json.Decoder(Ownership)
_column_lineage_decoder = msgspec.json.Decoder(ColumnLineage)
_slo_decoder = msgspec.json.Decoder(SloTier)


_dataset_facets_decoder = msgspec.json.Decoder(DatasetFacets)


def decode_dataset_facets(raw: bytes) -> DatasetFacets | None:
    try:
        return _dataset_facets_decoder.decode(raw)
    except msgspec.DecodeError:
        return None


def decode_schema(raw: bytes) -> Schema | None:
    try:
        return _schema_decoder.decode(raw)
    except msgspec.DecodeError:
        return None


def decode_ownership(raw: bytes) -> Ownership | None:
    try:
        return _ownership_decoder.decode(raw)
    except msgspec.DecodeError:
        return None


def decode_owner_names(raw: bytes) -> tuple[str, ...] | None:
    """The owner names of an ``ownership`` facet, sorted and distinct (None when malformed)."""
    ownership = decode_ownership(raw)
    return None if ownership is None else tuple(sorted({owner.name for owner in ownership.owners or ()}))


def decode_freshness_minutes(raw: bytes) -> int | None:
    """``freshnessMinutes`` of a ``lineagePlus_sloTier`` job facet (None when absent or malformed)."""
    try:
        minutes = _slo_decoder.decode(raw).freshnessMinutes
    except msgspec.DecodeError:
        return None
    return minutes if minutes is not None and minutes >= 0 else None


def decode_column_lineage(raw: bytes) -> ColumnLineage | None:
    try:
        return _column_lineage_decoder.decode(raw)
    except msgspec.DecodeError:
        return None


def format_micros(micros: int | None) -> str | None:
    if micros is None:
        return None
    return (_EPOCH + timedelta(microseconds=micros)).isoformat().replace("+00:00", "Z")


def decode(line: bytes | memoryview) -> tuple[Event, int, bool]:
    """(event, eventTime in epoch µs, salvaged) of one JSON line; BadEventError when nothing is usable."""
    event, micros, salvaged = decode_any(line)
    if event.job is None and event.dataset is None:
        raise BadEventError("invalid", "event has neither a job nor a dataset")
    return event, micros, salvaged


def decode_any(line: bytes | memoryview) -> tuple[Event, int, bool]:
    """:func:`decode`, of an event that may have neither a job nor a dataset (stored, never folded)."""
    salvaged = False
    try:
        event = _decoder.decode(line)
    except msgspec.DecodeError:
        event = _salvage(line)
        salvaged = True
    try:
        micros = to_micros(event.eventTime)
    except ValueError as exc:
        raise BadEventError("invalid", f"eventTime {event.eventTime!r} is not an ISO-8601 time") from exc
    return event, micros, salvaged


def _salvage(line: bytes | memoryview) -> Event:
    try:
        raw = _any_decoder.decode(line)
    except msgspec.DecodeError as exc:
        raise BadEventError("malformed", str(exc)) from exc
    if not isinstance(raw, dict):
        raise BadEventError("malformed", "not a JSON object")
    if not isinstance(raw.get("eventTime"), str):
        raise BadEventError("invalid", "missing eventTime")
    clean: dict[str, Any] = {"eventTime": raw["eventTime"]}
    if isinstance(raw.get("eventType"), str):
        clean["eventType"] = raw["eventType"]
    for key, kind in (("job", Job), ("run", Run), ("dataset", Dataset)):
        value = _convert_part(raw.get(key), kind)
        if value is not None:
            clean[key] = value
    if isinstance(raw.get("run"), dict) and "run" not in clean:
        raise BadEventError("invalid", "run without a usable runId")
    for key in ("inputs", "outputs"):
        items = raw.get(key)
        if isinstance(items, list):
            clean[key] = msgspec.Raw(msgspec.json.encode(items))
    return Event(**clean)


_datasets_decoder = msgspec.json.Decoder(list[Dataset] | None)


def decode_datasets(raw: bytes | msgspec.Raw) -> tuple[list[Dataset], bool]:
    """(datasets, salvaged) of an inputs/outputs list; entries that do not fit are trimmed or dropped."""
    try:
        return _datasets_decoder.decode(raw) or [], False
    except msgspec.DecodeError:
        pass
    try:
        items = _any_decoder.decode(raw)
    except msgspec.DecodeError:
        return [], True
    if not isinstance(items, list):
        return [], True
    converted = [_convert_part(item, Dataset) for item in items]
    return [item for item in converted if item is not None], True


def _convert_part(value: Any, kind: type[msgspec.Struct]) -> Any:
    """``value`` as ``kind`` after dropping the facets that do not fit; None when the core does not fit."""
    if not isinstance(value, dict):
        return None
    whole = _as(value, kind)
    if whole is not None:
        return whole
    trimmed = {key: item for key, item in value.items() if key != "facets"}
    facets = value.get("facets")
    if isinstance(facets, dict):
        if kind is Run:
            trimmed["facets"] = {k: f for k, f in facets.items() if _as({k: f}, RunFacets) is not None}
        else:
            # dataset and job facets are kept raw and decoded (leniently) only when used
            trimmed["facets"] = {k: f for k, f in facets.items() if isinstance(f, dict)}
    return _as(trimmed, kind)


def _as(value: Any, kind: type[msgspec.Struct]) -> Any:
    try:
        return msgspec.json.decode(msgspec.json.encode(value), type=kind)
    except (msgspec.DecodeError, TypeError):
        return None


def column_inputs(
    lineage: ColumnLineage,
) -> dict[str, tuple[tuple[str, str, str, tuple[tuple[str | None, str | None, str | None], ...]], ...]]:
    """{column: ((namespace, name, field, transformations), ...)} of a ``columnLineage`` facet, inputs
    sorted; a field without its own transformations takes the column's (older facets)."""
    columns = {}
    for column, spec in (lineage.fields or {}).items():
        inputs = []
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
