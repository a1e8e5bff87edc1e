"""``lineage-plus import`` and ``retention``, and the configured store (``[lineage_plus] store_url``,
``graph_source = store``, ``retention_days``)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from airflow_lineage_plus import conf
from airflow_lineage_plus.cli import run
from airflow_lineage_plus.store import LineageStore, sqlite_url
from tests.support.graph_builders import orders_pipeline, run_pair, write_log


@pytest.fixture
def configured(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> str:
    url = sqlite_url(tmp_path / "store" / "lineage.db")
    monkeypatch.setenv("AIRFLOW__LINEAGE_PLUS__STORE_URL", url)
    monkeypatch.setenv("AIRFLOW__LINEAGE_PLUS__GRAPH_SOURCE", "store")
    return url


def test_the_store_defaults_to_sqlite_beside_the_event_log_under_airflow_home(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.delenv("AIRFLOW__LINEAGE_PLUS__STORE_URL", raising=False)
    monkeypatch.delenv("AIRFLOW__LINEAGE_PLUS__EVENT_LOG_PATH", raising=False)
    expected = (conf.airflow_home() / "lineage_plus" / "events.db").absolute()
    assert conf.store_url() == f"sqlite:///{expected}"


def test_the_configured_store_is_filled_by_import_and_answers_like_the_log(
    configured: str, tmp_path: Path
) -> None:
    log = write_log(tmp_path / "events.jsonl", orders_pipeline())
    code, out, err = run(["import", str(log)])
    assert (code, err) == (0, "") and "imported 10 new events" in out and configured in out
    from_store = run(["report", "--format", "json"])
    from_log = run(["--events", str(log), "report", "--format", "json"])
    assert from_store[0] == 0 and from_log[0] == 0
    assert {**json.loads(from_store[1]), "source": ""} == {**json.loads(from_log[1]), "source": ""}
    assert json.loads(from_store[1])["jobs"] == 3


def test_a_store_not_made_yet_says_how_lineage_gets_there(configured: str) -> None:
    code, _, err = run(["report"])
    assert code == 1 and "no lineage store at" in err and "lineage-plus import" in err


def test_importing_into_a_damaged_store_names_the_fix_and_keeps_it(tmp_path: Path) -> None:
    damaged = tmp_path / "lineage.db"
    damaged.write_bytes(b"garbage" * 1000)
    log = write_log(tmp_path / "events.jsonl", orders_pipeline())
    code, _, err = run(["import", str(log), "--store", sqlite_url(damaged)])
    assert code == 1 and "damaged" in err and "move it aside" in err
    assert damaged.read_bytes() == b"garbage" * 1000


def test_importing_a_missing_log_is_a_usage_error(tmp_path: Path) -> None:
    code, _, err = run(["import", str(tmp_path / "none.jsonl"), "--store", sqlite_url(tmp_path / "l.db")])
    assert code == 2 and "no event log at" in err


def test_retention_deletes_old_runs_and_needs_a_window(
    configured: str, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    log = write_log(tmp_path / "events.jsonl", [*run_pair("job", "old", 1, 2), *run_pair("job", "new", 3, 4)])
    assert run(["import", str(log)])[0] == 0
    monkeypatch.delenv("AIRFLOW__LINEAGE_PLUS__RETENTION_DAYS", raising=False)
    assert run(["retention"]) == (2, "", "lineage-plus: set [lineage_plus] retention_days or give --days\n")
    monkeypatch.setenv("AIRFLOW__LINEAGE_PLUS__RETENTION_DAYS", "30")  # the events are of 2026-03-01
    code, out, _ = run(["retention"])
    assert code == 0 and out.startswith("deleted 2 raw events older than 30 days; kept 2")
    store = LineageStore(configured)
    assert store.count() == 2
    store.close()


def test_a_bad_retention_window_names_the_option(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("AIRFLOW__LINEAGE_PLUS__RETENTION_DAYS", "forever")
    with pytest.raises(ValueError, match=r"\[lineage_plus\] retention_days"):
        conf.retention_days()
