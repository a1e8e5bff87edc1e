"""Fail closed: an event that could not be checked for secrets is neither logged nor forwarded, and one
warning says which event was lost; what can be checked leaves redacted, whatever the transport config."""

from __future__ import annotations

import logging
from pathlib import Path
from typing import Any

import orjson
import pytest

from airflow_lineage_plus.deliver import event_budget, redaction
from airflow_lineage_plus.deliver import event_log_transport as tp
from airflow_lineage_plus.deliver.event_log_transport import EventLogTransport
from airflow_lineage_plus.deliver.serialize import plain
from tests.support.forwarding import logging_and_forwarding
from tests.support.openlineage_spec import validate_event
from tests.support.reliability_events import run_event


def _transport(tmp_path: Path, **extra: Any) -> EventLogTransport:
    return logging_and_forwarding(tmp_path, **extra)


def _lines(path: Path) -> list[dict[str, Any]]:
    return [orjson.loads(line) for line in path.read_bytes().splitlines()] if path.exists() else []


@pytest.mark.parametrize("budget", [True, False])
def test_an_event_that_cannot_be_checked_is_neither_logged_nor_forwarded(
    tmp_path: Path, caplog: pytest.LogCaptureFixture, monkeypatch: pytest.MonkeyPatch, budget: bool
) -> None:
    def broken(self: Any, text: bytes, pos: int = 0, end: int | None = None) -> Any:
        raise RuntimeError("scanner broke")

    transport = _transport(tmp_path, budget=budget)
    monkeypatch.setattr(redaction.Scanner, "scan", broken)
    lost = tp.lost_events()
    with caplog.at_level(logging.WARNING, logger="airflow_lineage_plus"):
        transport.emit(run_event("dag.unchecked", sql="COPY t FROM 'postgres://etl:hunter2@db/x'"))
    assert _lines(tmp_path / "events.jsonl") == []
    assert _lines(tmp_path / "forwarded.jsonl") == []
    assert tp.lost_events() - lost == 1
    (warning,) = [r.getMessage() for r in caplog.records if r.levelno == logging.WARNING]
    assert "dag.unchecked" in warning and "neither logged nor forwarded" in warning
    assert "could not be checked for secrets" in warning and "scanner broke" in warning


FLOODS = {
    "different secrets": "".join(f"password=x{i}&" for i in range(redaction.MAX_SECRETS + 5)),
    "one secret repeated": "password=x&" * (redaction.FIELD_MATCHES + 5),
}


@pytest.mark.parametrize("flood", list(FLOODS))
def test_a_flood_of_secrets_withholds_that_string_and_keeps_the_event_redacted(
    tmp_path: Path, caplog: pytest.LogCaptureFixture, flood: str
) -> None:
    event = plain(run_event("dag.flood", sql="COPY t FROM 'postgres://etl:hunter2@db/x'"))
    event["job"]["facets"]["documentation"] = {
        "_producer": "p",
        "_schemaURL": "https://openlineage.io/spec/facets/1-1-0/DocumentationJobFacet.json",
        "description": FLOODS[flood],
    }
    lost = tp.lost_events()
    with caplog.at_level(logging.WARNING, logger="airflow_lineage_plus"):
        _transport(tmp_path).emit(event)
    assert tp.lost_events() == lost
    for target in ("events.jsonl", "forwarded.jsonl"):
        (logged,) = _lines(tmp_path / target)
        validate_event(logged)
        marker = redaction.WITHHELD.format(size=len(FLOODS[flood]))
        assert logged["job"]["facets"]["documentation"]["description"] == marker, target
        assert logged["job"]["facets"]["sql"]["query"] == "COPY t FROM 'postgres://etl:***@db/x'"
        trimmed = logged["run"]["facets"]["lineagePlus_trimmed"]
        assert {"what": event_budget.WITHHELD_CUT, "count": 1} in trimmed["cuts"]
        assert "password=x" not in orjson.dumps(logged).decode()
    (warning,) = [r.getMessage() for r in caplog.records if r.levelno == logging.WARNING]
    assert "dag.flood" in warning and event_budget.WITHHELD_CUT in warning


def test_a_secret_repeated_in_every_column_lineage_entry_is_redacted_not_refused(tmp_path: Path) -> None:
    event = plain(run_event("dag.repeated", columns=300))
    for field in event["outputs"][0]["facets"]["columnLineage"]["fields"].values():
        for source in field["inputFields"]:
            source["namespace"] = "postgres://etl:hunter2@db:5432"
    _transport(tmp_path).emit(event)
    (logged,) = _lines(tmp_path / "events.jsonl")
    assert "hunter2" not in orjson.dumps(logged).decode()
    fields = logged["outputs"][0]["facets"]["columnLineage"]["fields"]
    assert {s["namespace"] for f in fields.values() for s in f["inputFields"]} == {
        "postgres://etl:***@db:5432"
    }


@pytest.mark.parametrize("budget", [True, False])
def test_with_or_without_the_budget_what_leaves_is_redacted_in_the_log_and_the_forward_target(
    tmp_path: Path, budget: bool
) -> None:
    transport = _transport(tmp_path, budget=budget)
    transport.emit(
        run_event("dag.redacted", sql="COPY t FROM 'postgres://etl:hunter2@db/x' PASSWORD 'tiger'")
    )
    for target in ("events.jsonl", "forwarded.jsonl"):
        (event,) = _lines(tmp_path / target)
        assert (
            event["job"]["facets"]["sql"]["query"] == "COPY t FROM 'postgres://etl:***@db/x' PASSWORD '***'"
        )
