"""The event log on disk: created 0640 in a 0750 directory (configurable), a torn last line left by a
writer killed mid-line is cut off before the next append, and a lock held by a stuck writer costs one
event after ``lock_timeout``, never a hung caller."""

from __future__ import annotations

import fcntl
import logging
import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import orjson
import pytest
from openlineage.client.transport import get_default_factory

from airflow_lineage_plus.deliver import event_log_transport as tp
from airflow_lineage_plus.deliver.event_log_transport import EventLogTransport
from tests.support.reliability_events import run_event

REPO = Path(__file__).resolve().parents[2]


def _transport(path: Path, **extra: Any) -> EventLogTransport:
    created = get_default_factory().create(
        # the event log's own guarantees, which the spool has: no store in front of it
        {"type": "lineage_plus_event_log", "log_file_path": str(path), "store_url": "none", **extra}
    )
    assert isinstance(created, EventLogTransport)
    return created


def _names(path: Path) -> list[str]:
    return [orjson.loads(line)["job"]["name"] for line in path.read_bytes().splitlines()]


def test_a_new_event_log_is_0640_in_a_new_0750_directory_whatever_the_umask(tmp_path: Path) -> None:
    log = tmp_path / "lineage" / "nested" / "events.jsonl"
    old = os.umask(0o000)  # the most permissive umask: the modes must still be exactly the defaults
    try:
        _transport(log).emit(run_event("dag.perms"))
    finally:
        os.umask(old)
    assert oct(log.stat().st_mode & 0o777) == oct(0o640)
    assert oct(log.parent.stat().st_mode & 0o777) == oct(0o750)
    assert _names(log) == ["dag.perms"]


def test_modes_come_from_the_lineage_plus_options(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("AIRFLOW__LINEAGE_PLUS__EVENT_LOG_FILE_MODE", "0600")
    monkeypatch.setenv("AIRFLOW__LINEAGE_PLUS__EVENT_LOG_DIR_MODE", "0700")
    log = tmp_path / "private" / "events.jsonl"
    _transport(log).emit(run_event("dag.private"))
    assert (oct(log.stat().st_mode & 0o777), oct(log.parent.stat().st_mode & 0o777)) == (
        oct(0o600),
        oct(0o700),
    )


def test_an_existing_log_keeps_its_mode(tmp_path: Path) -> None:
    log = tmp_path / "events.jsonl"
    log.write_bytes(b"")
    log.chmod(0o664)  # chosen by the operator: not ours to change
    _transport(log).emit(run_event("dag.kept"))
    assert oct(log.stat().st_mode & 0o777) == oct(0o664)


def test_a_bad_mode_option_names_the_option_and_an_example(monkeypatch: pytest.MonkeyPatch) -> None:
    from airflow_lineage_plus import conf

    monkeypatch.setenv("AIRFLOW__LINEAGE_PLUS__EVENT_LOG_FILE_MODE", "rw-r-----")
    with pytest.raises(ValueError, match=r"event_log_file_mode must be octal permissions such as 0640"):
        conf.event_log_file_mode()


WRITER = """
import sys, time
from reliability_events import run_event
from airflow_lineage_plus.deliver import event_log_transport as tp

def write_slowly(fd, line, path, fsync):  # the kernel taking a big line in pieces
    import os
    half = len(line) // 2
    os.write(fd, line[:half])
    print("half written", flush=True)
    time.sleep(60)
    os.write(fd, line[half:])

tp._write_whole = write_slowly
transport = tp.EventLogTransport(tp.EventLogConfig(log_file_path=sys.argv[1], store_url="none"))
transport.emit(run_event("dag.killed_mid_line", padding=200_000))
"""


def test_a_writer_killed_mid_line_leaves_no_garbage_for_the_next_event(tmp_path: Path) -> None:
    log = tmp_path / "events.jsonl"
    transport = _transport(log)
    transport.emit(run_event("dag.before"))
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(REPO), str(REPO / "tests" / "support")])}
    writer = subprocess.Popen(
        [sys.executable, "-c", WRITER, str(log)], stdout=subprocess.PIPE, text=True, env=env
    )
    try:
        assert writer.stdout is not None
        for line in writer.stdout:  # the writer's own log lines come first
            if line.strip() == "half written":
                break
        torn = log.stat().st_size
        os.kill(writer.pid, signal.SIGKILL)  # as the provider kills its emitter at execution_timeout
        writer.wait(timeout=30)
    finally:
        if writer.poll() is None:
            writer.kill()
    assert log.read_bytes()[-1:] != b"\n" and torn > 100_000  # half a line is left behind
    before = tp.torn_lines_cut()
    transport.emit(run_event("dag.after"))
    assert _names(log) == ["dag.before", "dag.after"]  # every line parses; the torn one is gone
    assert tp.torn_lines_cut() - before == 1


def test_a_partial_last_line_without_newline_is_cut_before_appending(tmp_path: Path) -> None:
    log = tmp_path / "events.jsonl"
    transport = _transport(log)
    transport.emit(run_event("dag.first"))
    with log.open("ab") as handle:
        handle.write(b'{"eventTime": "2024-05-01T10:00:00Z", "job": {"na')
    transport.emit(run_event("dag.second"))
    assert _names(log) == ["dag.first", "dag.second"]


def test_a_lock_held_by_a_stuck_writer_costs_one_event_after_lock_timeout_never_a_hang(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    log = tmp_path / "events.jsonl"
    transport = _transport(log, lock_timeout=0.5)
    transport.emit(run_event("dag.unlocked"))
    stuck = os.open(log, os.O_RDONLY)
    fcntl.flock(stuck, fcntl.LOCK_EX)  # another writer holds the lock and does not let go
    lost = tp.lost_events()
    try:
        with caplog.at_level(logging.WARNING, logger="airflow_lineage_plus"):
            started = time.monotonic()
            transport.emit(run_event("dag.while_locked"))
            waited = time.monotonic() - started
    finally:
        fcntl.flock(stuck, fcntl.LOCK_UN)
        os.close(stuck)
    assert 0.5 <= waited < 5.0
    assert tp.lost_events() - lost == 1
    (warning,) = [r.getMessage() for r in caplog.records if r.levelno == logging.WARNING]
    assert "dag.while_locked" in warning and "stayed locked by another writer for 0.5 s" in warning
    transport.emit(run_event("dag.unlocked_again"))
    assert _names(log) == ["dag.unlocked", "dag.unlocked_again"]
