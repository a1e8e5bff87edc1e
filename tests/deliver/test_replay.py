"""``lineage-plus replay``: after an outage, Marquez gets what it missed in a time window, once, in order."""

from __future__ import annotations

import json
import subprocess
import sys
from collections import Counter
from collections.abc import Iterator
from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import Any

import pytest
from openlineage.client.event_v2 import RunState

from airflow_lineage_plus.deliver.replay import Marquez, ReplayError, parse_time, replay
from airflow_lineage_plus.deliver.serialize import dumps
from tests.support.fake_marquez import FakeMarquez
from tests.support.openlineage_spec import validate_events
from tests.support.reliability_events import run_event

T0 = datetime(2024, 5, 1, 10, 0, tzinfo=timezone.utc)
RUN_A = "01a22674-e06b-7252-84d0-26850cfac2fa"  # finished before the outage
RUN_B = "01a22674-e06b-7252-84d0-26850cfac2fb"  # started before, finished during the outage
RUN_C = "01a22674-e06b-7252-84d0-26850cfac2fc"  # entirely during the outage
RUN_D = "01a22674-e06b-7252-84d0-26850cfac2fd"  # after the window


def _event(job: str, run_id: str, state: RunState, minutes: int) -> dict[str, Any]:
    return json.loads(dumps(run_event(job, run_id=run_id, state=state, when=T0 + timedelta(minutes=minutes))))


EVENTS = [
    _event("dag.a", RUN_A, RunState.START, 0),
    _event("dag.a", RUN_A, RunState.COMPLETE, 2),
    _event("dag.b", RUN_B, RunState.START, 4),
    _event("dag.b", RUN_B, RunState.COMPLETE, 12),  # outage from minute 10 to 20
    _event("dag.c", RUN_C, RunState.START, 13),
    _event("dag.c", RUN_C, RunState.FAIL, 15),
    _event("dag.d", RUN_D, RunState.START, 40),
]
DELIVERED = EVENTS[:3]  # what reached Marquez before it went down


@pytest.fixture
def log(tmp_path: Path) -> Path:
    path = tmp_path / "events.jsonl"
    lines = [json.dumps(e) for e in EVENTS]
    lines.insert(4, '{"eventTime": "2024-05-01T10:13:00Z", "broken')  # a torn line
    lines.insert(5, lines[4 + 1])  # RUN_C START logged twice
    path.write_text("\n".join(lines) + "\n")
    return path


@pytest.fixture
def marquez() -> Iterator[FakeMarquez]:
    with FakeMarquez() as fake:
        for event in DELIVERED:
            fake.state.ingest(event)
        yield fake


def _runs(fake: FakeMarquez) -> Counter[str]:
    return Counter(e["run"]["runId"] for e in fake.state.events)


def test_replay_sends_only_what_marquez_missed_in_log_order(log: Path, marquez: FakeMarquez) -> None:
    report = replay(log, Marquez(marquez.url), since=T0, until=T0 + timedelta(minutes=30))
    assert report.ok
    assert [(e.run_id, e.event_type) for e in report.sent] == [
        (RUN_B, "COMPLETE"),
        (RUN_C, "START"),
        (RUN_C, "FAIL"),
    ]
    reasons = {(e.run_id, e.event_type): why for e, why in report.skipped}
    assert (
        reasons[(RUN_A, "START")] == reasons[(RUN_A, "COMPLETE")] == "Marquez already has the run (COMPLETED)"
    )
    assert reasons[(RUN_B, "START")].startswith("Marquez already has the run (RUNNING)")
    assert reasons[(RUN_C, "START")] == "logged twice; sent once"
    assert report.unreadable_lines == 1
    assert RUN_D not in _runs(marquez)  # outside the window
    assert _runs(marquez) == {RUN_A: 2, RUN_B: 2, RUN_C: 2}  # every event once, no new run
    assert validate_events(marquez.state.events) == 6
    states = {run: marquez.state.build()["runs"][run]["state"] for run in (RUN_A, RUN_B, RUN_C)}
    assert states == {RUN_A: "COMPLETED", RUN_B: "COMPLETED", RUN_C: "FAILED"}


def test_replaying_twice_sends_nothing_the_second_time(log: Path, marquez: FakeMarquez) -> None:
    client = Marquez(marquez.url)
    replay(log, client, since=T0, until=T0 + timedelta(minutes=30))
    again = replay(log, client, since=T0, until=T0 + timedelta(minutes=30))
    assert again.sent == [] and again.ok
    assert _runs(marquez) == {RUN_A: 2, RUN_B: 2, RUN_C: 2}


def test_dry_run_reports_what_it_would_send_and_sends_nothing(log: Path, marquez: FakeMarquez) -> None:
    report = replay(log, Marquez(marquez.url), since=T0 + timedelta(minutes=10), dry_run=True)
    assert [(e.run_id, e.event_type) for e in report.sent] == [
        (RUN_B, "COMPLETE"),
        (RUN_C, "START"),
        (RUN_C, "FAIL"),
        (RUN_D, "START"),
    ]
    assert len(marquez.state.events) == len(DELIVERED)
    assert "would send 4" in report.to_text()


def test_marquez_still_down_reports_every_event_as_failed(log: Path) -> None:
    with FakeMarquez() as fake:
        url = fake.url
    report = replay(log, Marquez(url, timeout=1.0), since=T0, until=T0 + timedelta(minutes=30))
    assert not report.ok and report.sent == []
    assert len(report.failed) == 6 and "could not ask Marquez" in report.failed[0][1]


def test_replay_sends_the_api_key_marquez_requires(log: Path) -> None:
    with FakeMarquez(api_key="k-123") as fake:
        refused = replay(log, Marquez(fake.url), since=T0, until=T0 + timedelta(minutes=30))
        accepted = replay(log, Marquez(fake.url, api_key="k-123"), since=T0, until=T0 + timedelta(minutes=30))
    assert not refused.ok and "401" in refused.failed[0][1]
    assert accepted.ok and len(accepted.sent) == 6


def test_bad_window_is_a_clear_error(log: Path) -> None:
    with pytest.raises(ReplayError, match="must be after"):
        replay(log, Marquez("http://127.0.0.1:9"), since=T0, until=T0)
    with pytest.raises(ReplayError, match="not an ISO 8601 time"):
        parse_time("yesterday")
    assert parse_time("2024-05-01T10:00Z") == T0


def test_command_line_prints_a_json_report_and_exits_0(log: Path, marquez: FakeMarquez) -> None:
    proc = subprocess.run(
        [
            sys.executable,
            "-m",
            "airflow_lineage_plus.deliver.replay",
            "--marquez",
            marquez.url,
            "--event-log",
            str(log),
            "--since",
            "2024-05-01T10:00:00Z",
            "--until",
            "2024-05-01T10:30:00Z",
            "--format",
            "json",
        ],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert proc.returncode == 0, proc.stderr
    answer = json.loads(proc.stdout)
    assert [(e["runId"], e["eventType"]) for e in answer["sent"]] == [
        (RUN_B, "COMPLETE"),
        (RUN_C, "START"),
        (RUN_C, "FAIL"),
    ]
    assert answer["unreadableLines"] == 1 and answer["failed"] == []


def test_lineage_plus_replay_subcommand_reports_in_text(log: Path, marquez: FakeMarquez) -> None:
    proc = subprocess.run(
        [
            str(Path(sys.executable).parent / "lineage-plus"),
            "--marquez",
            marquez.url,
            "replay",
            "--event-log",
            str(log),
            "--since",
            "2024-05-01T10:10:00Z",
            "--until",
            "2024-05-01T10:30:00Z",
        ],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.splitlines()[0].endswith(
        "4 event(s) in the window; sent 3, skipped 1, failed 0; 1 unreadable line(s) ignored"
    )
    assert f"sent: COMPLETE test-airflow/dag.b run {RUN_B}" in proc.stdout
