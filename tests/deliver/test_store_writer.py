"""The transport writes to the lineage store; what the store does not take in time waits in the spool and
goes on at the next write that succeeds. On SQLite and on PostgreSQL; nothing is lost."""

from __future__ import annotations

import json
import logging
import multiprocessing
import os
import signal
import sqlite3
import time
from collections import Counter
from pathlib import Path
from typing import Any

import orjson
import pytest
from openlineage.client.transport import get_default_factory

from airflow_lineage_plus.deliver import spool_retry
from airflow_lineage_plus.deliver.event_log_transport import EventLogTransport
from airflow_lineage_plus.deliver.serialize import dumps
from airflow_lineage_plus.exceptions import StoreUnavailable
from airflow_lineage_plus.store import LineageStore
from airflow_lineage_plus.store.spool import FLUSHING, drain, flush, pending_bytes
from tests.support.harness import AirflowRunner
from tests.support.openlineage_spec import validate_event
from tests.support.postgres_env import wait_until
from tests.support.processes import holders, retry_processes
from tests.support.reliability_events import run_event
from tests.support.reliability_writers import spool_events, write_events
from tests.support.store_engines import create_database

pytestmark = pytest.mark.timeout(300)


def _transport(log: Path, url: str, **extra: Any) -> EventLogTransport:
    created = get_default_factory().create(
        {"type": "lineage_plus_event_log", "log_file_path": str(log), "store_url": url, **extra}
    )
    assert isinstance(created, EventLogTransport)
    return created


def _stored_names(url: str) -> list[str]:
    store = LineageStore(url, create=False)
    try:
        return [orjson.loads(payload)["job"]["name"] for _, payload in store.rows_after(0, 100_000)]
    finally:
        store.close()


def _wait_for_flush(log: Path, seconds: float = 30.0) -> None:
    deadline = time.monotonic() + seconds
    while (log.exists() or list(log.parent.glob(log.name + FLUSHING + "*"))) and time.monotonic() < deadline:
        time.sleep(0.05)


def test_the_store_gets_exactly_the_checked_line_the_event_log_would_get(
    tmp_path: Path, store_url: str
) -> None:
    event = run_event("dag.same_bytes", sql="COPY t FROM 'postgres://etl:hunter3@db/x'", padding=500)
    transport = _transport(tmp_path / "events.jsonl", store_url)
    transport.emit(event)
    store = LineageStore(store_url, create=False)
    try:
        ((_, payload),) = store.rows_after(0, 10)
    finally:
        store.close()
    assert payload == transport.prepare(event)
    assert b"hunter3" not in payload
    assert not (tmp_path / "events.jsonl").exists()  # nothing spooled


def _spooled_names(log: Path) -> list[str]:
    return [orjson.loads(line)["job"]["name"] for line in log.read_bytes().splitlines() if line]


def _stored_events(url: str) -> list[dict[str, Any]]:
    """The events stored so far, none while the store is not made yet."""
    try:
        store = LineageStore(url, create=False)
    except StoreUnavailable:
        return []
    try:
        return [orjson.loads(payload) for payload in store.all_payloads()]
    finally:
        store.close()


def _stored_now(url: str) -> list[str]:
    """The names stored so far, none while the store is not made yet."""
    return sorted(event["job"]["name"] for event in _stored_events(url))


def _kill_retry_processes(root: Path) -> None:
    for pid in retry_processes(root):
        os.kill(pid, signal.SIGKILL)


def _sender(root: Path, spool: Path) -> list[int]:
    """The spool's retry processes below ``root``, waited for; failing with what holds the lock."""
    try:
        return list(wait_until(lambda: retry_processes(root), 30, "the spool's process to be listed"))
    except AssertionError as exc:
        held = holders(spool_retry.lock_path(spool))
        raise AssertionError(f"{exc}; the retry lock is held by {held}") from None


def test_a_deferred_transport_only_appends_and_one_lingering_process_stores_every_event_once(
    tmp_path: Path, store_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("AIRFLOW__LINEAGE_PLUS__SPOOL_RETRY_SECONDS", "120")
    log = tmp_path / "events.jsonl"
    transport = _transport(log, store_url, deferred=True)
    try:
        first = [f"dag.deferred_{i}" for i in range(3)]
        for name in first:
            transport.emit(run_event(name))
        assert _spooled_names(log) == first  # appended, not written to the store by the transport
        wait_until(lambda: spool_retry.running(log), 30, "the spool's process")
        (sender,) = _sender(tmp_path, log)
        wait_until(lambda: _stored_now(store_url) == first, 60, "the first events in the store")
        assert pending_bytes(log) == 0
        time.sleep(2 * spool_retry.POLL_SECONDS)
        assert spool_retry.running(log)  # it waits for more instead of exiting
        later = [f"dag.deferred_later_{i}" for i in range(2)]
        for name in later:
            transport.emit(run_event(name))
        wait_until(lambda: len(_stored_now(store_url)) == 5, 60, "the later events in the store")
        assert sorted(_stored_names(store_url)) == sorted(first + later)
        assert retry_processes(tmp_path) == [sender]  # the same process sent them: none started per event
        store = LineageStore(store_url, create=False)
        try:
            for payload in store.all_payloads():
                validate_event(orjson.loads(payload))
        finally:
            store.close()
    finally:
        _kill_retry_processes(tmp_path)


def test_a_deferred_transport_writes_directly_when_no_spool_process_may_run(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("AIRFLOW__LINEAGE_PLUS__SPOOL_RETRY_SECONDS", "0")
    log, url = tmp_path / "events.jsonl", f"sqlite:///{tmp_path / 'lineage.db'}"
    _transport(log, url, deferred=True).emit(run_event("dag.direct"))
    assert _stored_names(url) == ["dag.direct"]
    assert not log.exists() and retry_processes(tmp_path) == []


def test_a_dag_run_with_a_deferred_transport_has_every_event_in_the_store_once(
    airflow_runner: AirflowRunner, dag_file_dir: Path, tmp_path: Path
) -> None:
    """Real tasks, each event from the provider's forked process: the first starts the spool's process,
    which outlives it and stores what every later one appends."""
    spool, url = tmp_path / "worker" / "spool.jsonl", f"sqlite:///{tmp_path / 'worker' / 'lineage.db'}"
    transport = {
        "type": "airflow_lineage_plus.transport.EventLogTransport",
        "log_file_path": str(spool),
        "store_url": url,
        "deferred": True,
    }

    try:
        result = airflow_runner.run(
            dag_file_dir / "trivial.py",
            dag_id="trivial",
            logical_date="2026-11-28T06:00:00+00:00",
            events_from=lambda: _stored_events(url),
            env={
                "AIRFLOW__OPENLINEAGE__TRANSPORT": json.dumps(transport),
                "AIRFLOW__LINEAGE_PLUS__SPOOL_RETRY_SECONDS": "120",
            },
        )
        assert result.returncode == 0, result.output[-3000:]
        counts = Counter((e["job"]["name"], e["eventType"]) for e in result.events)
        tasks = ("trivial.extract", "trivial.transform", "trivial.done")
        expected = {(t, kind): 1 for t in tasks for kind in ("START", "COMPLETE")} | {
            ("trivial", "COMPLETE"): 1
        }
        assert counts == Counter(expected), counts
        wait_until(lambda: pending_bytes(spool) == 0, 30, "the spool sent")
        assert len(retry_processes(tmp_path)) == 1  # one for the whole run, still waiting for more
    finally:
        _kill_retry_processes(tmp_path)


def test_a_locked_sqlite_store_spools_the_event_then_the_next_write_flushes_it(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    url = f"sqlite:///{tmp_path / 'events.db'}"
    log = tmp_path / "events.jsonl"
    transport = _transport(log, url, store_timeout=0.2)
    transport.emit(run_event("dag.first"))
    holder = sqlite3.connect(tmp_path / "events.db", isolation_level=None)
    holder.execute("BEGIN IMMEDIATE")  # another writer keeps the lock past the deadline
    with caplog.at_level(logging.WARNING, logger="airflow_lineage_plus"):
        started = time.monotonic()
        transport.emit(run_event("dag.spooled_1"))
        transport.emit(run_event("dag.spooled_2"))
        spent = time.monotonic() - started
    warnings = [r.getMessage() for r in caplog.records if r.levelno == logging.WARNING]
    assert len(warnings) == 1 and "lineage-plus replay" in warnings[0], warnings
    assert spent < 10  # each event waited the 0.2 s store deadline, not SQLite's 30 s default
    assert [orjson.loads(line)["job"]["name"] for line in log.read_bytes().splitlines()] == [
        "dag.spooled_1",
        "dag.spooled_2",
    ]
    holder.execute("ROLLBACK")
    holder.close()
    transport.emit(run_event("dag.after"))
    _wait_for_flush(log)
    assert sorted(_stored_names(url)) == ["dag.after", "dag.first", "dag.spooled_1", "dag.spooled_2"]
    assert not log.exists()


def test_a_postgresql_store_not_there_yet_spools_and_loses_nothing_once_it_is(
    tmp_path: Path, request: pytest.FixtureRequest
) -> None:
    server = request.getfixturevalue("postgres_server")
    name = f"late_{time.time_ns()}"
    url = server.url(name)
    log = tmp_path / "events.jsonl"
    transport = _transport(log, url, store_timeout=2)
    for i in range(3):
        transport.emit(run_event(f"dag.while_down_{i}"))
    assert len(log.read_bytes().splitlines()) == 3
    create_database(server, name)
    transport.emit(run_event("dag.back"))
    _wait_for_flush(log)
    assert sorted(_stored_names(url)) == [
        "dag.back",
        "dag.while_down_0",
        "dag.while_down_1",
        "dag.while_down_2",
    ]


def test_four_processes_writing_to_one_sqlite_store_lose_nothing(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 'events.db'}"
    config = {
        "type": "lineage_plus_event_log",
        "log_file_path": str(tmp_path / "events.jsonl"),
        "store_url": url,
    }
    context = multiprocessing.get_context("spawn")
    with context.Pool(4) as pool:
        written = pool.starmap(write_events, [(config, worker, 250, 200_000) for worker in range(4)])
    assert written == [250] * 4
    names = _stored_names(url)
    assert len(names) == 1000 and len(set(names)) == 1000
    assert not (tmp_path / "events.jsonl").exists()


def test_flushes_while_writers_append_to_the_spool_lose_no_line(tmp_path: Path) -> None:
    log = tmp_path / "events.jsonl"
    store = LineageStore(f"sqlite:///{tmp_path / 'events.db'}")
    context = multiprocessing.get_context("spawn")
    flushed = 0
    try:
        with context.Pool(2) as pool:
            pending = pool.starmap_async(spool_events, [(str(log), worker, 1500) for worker in range(2)])
            while not pending.ready():
                flushed += flush(store, log).added
                time.sleep(0.01)
            assert pending.get() == [1500, 1500]
        flushed += flush(store, log).added
        assert flushed == 3000 and store.count() == 3000
        assert not log.exists() and not list(tmp_path.glob("events.jsonl" + FLUSHING + "*"))
    finally:
        store.close()


def test_a_drain_takes_each_new_line_once_and_never_changes_the_log(tmp_path: Path) -> None:
    log = tmp_path / "history.jsonl"
    store = LineageStore(f"sqlite:///{tmp_path / 'history.db'}")
    lines = [dumps(run_event(f"dag.history_{i}")) for i in range(5)]
    try:
        log.write_bytes(b"\n".join(lines[:3]) + b"\n" + lines[3][:40])  # a writer is mid-line
        assert drain(store, log).added == 3
        assert drain(store, log).added == 0
        log.write_bytes(b"\n".join(lines[:3]) + b"\n" + lines[3] + b"\n" + lines[4] + b"\n")
        again = drain(store, log)
        assert (again.added, again.duplicates) == (2, 0)
        assert store.count() == 5
        assert log.read_bytes().count(b"\n") == 5  # the file is the user's: unchanged
        log.unlink()
        log.write_bytes(lines[0] + b"\n")  # replaced (rotated): read from its start, stored once
        replaced = drain(store, log)
        assert (replaced.added, replaced.duplicates, store.count()) == (0, 1, 5)
    finally:
        store.close()
