"""The required shape of an event the OpenLineage endpoint stores: each missing field named exactly."""

from __future__ import annotations

import copy
from typing import Any

import pytest

from airflow_lineage_plus.exceptions import BadEventError
from airflow_lineage_plus.ui.event_shape import check_shape

RUN_EVENT: dict[str, Any] = {
    "eventTime": "2026-12-01T10:00:00Z",
    "eventType": "START",
    "producer": "https://example.org/producer",
    "schemaURL": "https://openlineage.io/spec/2-0-2/OpenLineage.json#/$defs/RunEvent",
    "run": {"runId": "0195d6f8-9a44-7c5e-8f0a-3b2c1d4e5f60"},
    "job": {"namespace": "ns", "name": "job"},
    "inputs": [{"namespace": "pg://db", "name": "public.a"}],
}


def _without(path: str) -> dict[str, Any]:
    event = copy.deepcopy(RUN_EVENT)
    *parents, last = path.split(".")
    node: Any = event
    for part in parents:
        node = node[int(part)] if part.isdigit() else node[part]
    del node[last]
    return event


def test_a_run_event_a_job_event_and_a_dataset_event_of_the_required_fields_pass() -> None:
    assert check_shape(RUN_EVENT) == "RunEvent"
    job_event = {k: v for k, v in RUN_EVENT.items() if k not in {"run", "eventType"}}
    assert check_shape(job_event) == "JobEvent"
    dataset_event = {k: RUN_EVENT[k] for k in ("eventTime", "producer", "schemaURL")}
    assert check_shape({**dataset_event, "dataset": {"namespace": "s3://b", "name": "k"}}) == "DatasetEvent"


@pytest.mark.parametrize(
    ("missing", "named"),
    [
        ("eventTime", "eventTime"),
        ("producer", "producer"),
        ("schemaURL", "schemaURL"),
        ("run.runId", "run.runId"),
        ("job.namespace", "job.namespace"),
        ("job.name", "job.name"),
        ("inputs.0.name", "inputs[0].name"),
    ],
)
def test_a_missing_required_field_is_named(missing: str, named: str) -> None:
    with pytest.raises(BadEventError) as raised:
        check_shape(_without(missing))
    assert str(raised.value).startswith(f"invalid: {named}: ")


@pytest.mark.parametrize(
    ("field", "value", "named"),
    [
        ("eventTime", "yesterday", "eventTime"),
        ("eventType", "DONE", "eventType"),
        ("run", {"runId": "42"}, "run.runId"),
        ("inputs", {"name": "x"}, "inputs"),
    ],
)
def test_a_wrong_value_is_named(field: str, value: Any, named: str) -> None:
    with pytest.raises(BadEventError) as raised:
        check_shape({**RUN_EVENT, field: value})
    assert str(raised.value).startswith(f"invalid: {named}: ")


def test_an_array_is_not_an_event() -> None:
    with pytest.raises(BadEventError, match=r"^malformed"):
        check_shape([RUN_EVENT])
