"""The Airflow harness itself: one recording per DAG and logical date, and the recommended transport."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from airflow_lineage_plus import conf
from tests.support import harness


def test_a_second_recording_of_a_dag_and_date_is_refused_naming_the_fix(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(harness, "_RECORDED", {})
    harness.claim_recording("orders", "2024-06-01", tmp_path / "first")
    harness.claim_recording("orders", "2024-06-02", tmp_path / "other-day")
    harness.claim_recording("customers", "2024-06-01", tmp_path / "other-dag")
    harness.claim_recording("orders", None, tmp_path / "now")  # `dags test` without a date: always new
    harness.claim_recording("orders", None, tmp_path / "now-again")
    with pytest.raises(harness.RepeatedRecordingError, match="its own logical date") as raised:
        harness.claim_recording("orders", "2024-06-01T00:00:00+00:00", tmp_path / "second")  # same instant
    assert str(tmp_path / "first") in str(raised.value)
    with pytest.raises(harness.RepeatedRecordingError):
        harness.AirflowRunner(tmp_path).run(
            tmp_path / "never_copied.py", dag_id="customers", logical_date="2024-06-01"
        )
    assert not (tmp_path / "dags-customers").exists()  # refused before anything ran


def test_every_run_writes_through_the_transport_to_the_store_beside_its_log(tmp_path: Path) -> None:
    transport = json.loads(harness.BASE_ENV["AIRFLOW__OPENLINEAGE__TRANSPORT"])
    log = Path(harness.BASE_ENV["AIRFLOW__LINEAGE_PLUS__EVENT_LOG_PATH"])
    assert transport == {
        "type": "airflow_lineage_plus.transport.EventLogTransport",
        "log_file_path": str(log.with_name("events.spool.jsonl")),
        "store_url": f"sqlite:///{log.with_suffix('.db')}",
    }
    # the store a reader configured with the log opens is the one the transport writes
    assert transport["store_url"] == conf.store_url(beside=log)
    assert json.loads(harness.event_log_transport(tmp_path / "e.jsonl"))["store_url"] == (
        f"sqlite:///{tmp_path / 'e.db'}"
    )


def test_the_runner_reads_where_the_transport_writes_and_refuses_a_run_it_cannot_read(
    tmp_path: Path,
) -> None:
    log = tmp_path / "events-trivial.jsonl"
    ours = harness.event_log_transport(log)
    elsewhere = {
        "a file elsewhere": json.dumps({"type": "file", "log_file_path": str(tmp_path / "other.jsonl")}),
        "a transform around http": json.dumps(
            {"type": "transform", "transport": {"type": "http", "url": "x"}}
        ),
        "http": json.dumps({"type": "http", "url": "http://127.0.0.1:9"}),
        "a collector": json.dumps({**json.loads(ours), "collector_url": "http://api:8080"}),
        "another store": json.dumps({**json.loads(ours), "store_url": "sqlite:////tmp/other.db"}),
    }
    assert harness.log_written_by(ours, log, {}) == log
    shared = tmp_path / "events.jsonl"  # a log of the test's own, shared by several runs
    assert harness.log_written_by(harness.event_log_transport(shared), log, {}) == shared
    assert (
        harness.log_written_by(json.dumps({"type": "file", "log_file_path": str(shared)}), log, {}) == shared
    )
    named_by_env = {"AIRFLOW__LINEAGE_PLUS__EVENT_LOG_PATH": str(shared)}
    assert harness.log_written_by(json.dumps({"type": "lineage_plus_event_log"}), log, named_by_env) == shared
    assert harness.log_written_by(ours, log, {"AIRFLOW__LINEAGE_PLUS__COLLECTOR_URL": "x"}) is None
    assert [name for name, config in elsewhere.items() if harness.log_written_by(config, log, {})] == [
        "a file elsewhere"  # a file is read where it is
    ]
    with pytest.raises(harness.UnreadTransportError, match="events_from=<a reader of them>"):
        harness.AirflowRunner(tmp_path).run(
            tmp_path / "trivial.py",
            dag_id="trivial",
            env={"AIRFLOW__OPENLINEAGE__TRANSPORT": elsewhere["http"]},
        )
    assert not log.exists() and not harness.store_of(log).exists()  # refused before anything ran
