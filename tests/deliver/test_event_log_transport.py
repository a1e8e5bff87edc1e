"""The event-log transport: same JSON as the client, concurrent writers lose nothing, faults contained."""

from __future__ import annotations

import contextlib
import json
import logging
import multiprocessing
import time
from collections import Counter
from pathlib import Path
from typing import Any

import orjson
import pytest
from openlineage.client.serde import Serde
from openlineage.client.transport import get_default_factory

from airflow_lineage_plus.deliver import event_log_transport as tp
from airflow_lineage_plus.deliver.event_log_transport import EventLogTransport
from tests.support.disk_faults import lift_file_size_limit, not_writable_dir, run_with_file_size_limit
from tests.support.harness import stored_payloads
from tests.support.reliability_events import run_event
from tests.support.reliability_writers import sizes, write_events

WORKERS = 4
EVENTS_PER_WORKER = 1000
LARGEST = 1_000_000


def _transport(path: Path, **extra: Any) -> EventLogTransport:
    created = get_default_factory().create(
        {
            "type": "airflow_lineage_plus.transport.EventLogTransport",
            "log_file_path": str(path),
            "store_url": "none",  # the event log's own guarantees, which the spool has
            **extra,
        }
    )
    assert isinstance(created, EventLogTransport)
    return created


def _lines(path: Path) -> list[bytes]:
    return [line for line in path.read_bytes().split(b"\n") if line]


def test_serialised_event_is_the_same_json_as_the_clients_serde() -> None:
    event = run_event(padding=100, columns=20, sql="SELECT 1")
    assert orjson.loads(tp.dumps(event)) == json.loads(Serde.to_json(event))


def test_short_type_name_and_import_path_both_build_the_transport(tmp_path: Path) -> None:
    by_kind = get_default_factory().create(
        {"type": "lineage_plus_event_log", "log_file_path": str(tmp_path / "a")}
    )
    assert isinstance(by_kind, EventLogTransport)
    assert isinstance(_transport(tmp_path / "b"), EventLogTransport)


def test_by_default_events_go_to_the_store_beside_the_configured_event_log(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setenv("AIRFLOW__LINEAGE_PLUS__EVENT_LOG_PATH", str(tmp_path / "configured.jsonl"))
    monkeypatch.delenv("AIRFLOW__LINEAGE_PLUS__STORE_URL", raising=False)
    created = get_default_factory().create({"type": "lineage_plus_event_log"})
    assert isinstance(created, EventLogTransport)
    created.emit(run_event("dag.default_path"))
    assert [json.loads(p)["job"]["name"] for p in stored_payloads(tmp_path / "configured.db")] == [
        "dag.default_path"
    ]
    assert not (tmp_path / "configured.jsonl").exists()  # nothing spooled


@pytest.mark.timeout(600)
def test_four_processes_writing_1000_mixed_events_of_up_to_1mb_lose_and_corrupt_nothing(
    tmp_path: Path,
) -> None:
    log = tmp_path / "events.jsonl"
    config = {
        "type": "lineage_plus_event_log",
        "log_file_path": str(log),
        "budget": False,
        "store_url": "none",
    }
    context = multiprocessing.get_context("spawn")
    started = time.monotonic()
    with context.Pool(WORKERS) as pool:
        written = pool.starmap(
            write_events, [(config, worker, EVENTS_PER_WORKER, LARGEST) for worker in range(WORKERS)]
        )
    elapsed = time.monotonic() - started
    assert written == [EVENTS_PER_WORKER] * WORKERS
    lines = _lines(log)
    events = [orjson.loads(line) for line in lines]  # any corrupt or interleaved line fails here
    seen = Counter(e["job"]["name"] for e in events)
    expected = {f"writer_{w}.event_{i}" for w in range(WORKERS) for i in range(EVENTS_PER_WORKER)}
    assert set(seen) == expected
    assert max(seen.values()) == 1
    largest = max(len(line) for line in lines)
    for worker in range(WORKERS):  # every payload arrived whole
        wanted = sizes(worker, EVENTS_PER_WORKER, LARGEST)
        for event in events:
            name = event["job"]["name"]
            if name.startswith(f"writer_{worker}."):
                got = len(event["job"]["facets"].get("documentation", {}).get("description", ""))
                assert got == wanted[int(name.rsplit("_", 1)[1])]
    print(
        f"\n{WORKERS} processes x {EVENTS_PER_WORKER} events: {len(lines)} lines, "
        f"{log.stat().st_size / 1e6:.1f} MB, largest line {largest} bytes, {elapsed:.1f} s"
    )
    assert largest > LARGEST * 0.85


def test_disk_full_loses_the_event_with_one_warning_and_never_raises(
    caplog: pytest.LogCaptureFixture,
) -> None:
    transport = _transport(Path("/dev/full"))
    before = tp.lost_events()
    with caplog.at_level(logging.WARNING, logger="airflow_lineage_plus"):
        for i in range(3):
            transport.emit(run_event(f"dag.disk_full_{i}"))
    assert tp.lost_events() - before == 3
    warnings = [r.getMessage() for r in caplog.records if r.levelno == logging.WARNING]
    assert len(warnings) == 1, warnings
    assert "dag.disk_full_0" in warnings[0] and "No space left on device" in warnings[0]
    assert "event log /dev/full" in warnings[0]


def _fill(log: Path) -> tuple[int, list[bytes]]:
    """Six 15 KB events into a log that cannot grow past 64 KiB: (events lost, the log's lines)."""
    transport = _transport(log, budget=False)
    before = tp.lost_events()
    for i in range(6):
        transport.emit(run_event(f"dag.fill_{i}", padding=15_000))
    return tp.lost_events() - before, _lines(log)


def test_filling_the_disk_mid_line_leaves_only_whole_lines(tmp_path: Path) -> None:
    log = tmp_path / "events.jsonl"
    lost, lines = run_with_file_size_limit(64 * 1024, _fill, log)
    assert 0 < lost < 6
    assert len(lines) == 6 - lost
    assert [orjson.loads(line)["job"]["name"] for line in lines] == [
        f"dag.fill_{i}" for i in range(len(lines))
    ]
    assert log.read_bytes().endswith(b"\n")


def test_not_writable_event_log_loses_the_event_with_one_warning(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    with not_writable_dir(tmp_path) as (folder, error):
        transport = _transport(folder / "events.jsonl")
        with caplog.at_level(logging.WARNING, logger="airflow_lineage_plus"):
            transport.emit(run_event("dag.read_only"))
            transport.emit(run_event("dag.read_only_again"))
        warnings = [r.getMessage() for r in caplog.records if r.levelno == logging.WARNING]
        assert len(warnings) == 1, warnings
        assert "dag.read_only" in warnings[0] and error in warnings[0]
        assert not (folder / "events.jsonl").exists()


def _fill_then_free(log: Path, config: dict[str, Any]) -> list[bytes]:
    """Write until the disk is full (24 KiB), free space, write again; return the log's lines."""
    transport = get_default_factory().create({**config, "log_file_path": str(log), "store_url": "none"})
    for i in range(4):
        with contextlib.suppress(
            RuntimeError, OSError
        ):  # the client's file transport raises; ours never does
            transport.emit(run_event(f"dag.before_{i}", padding=9_000))
    lift_file_size_limit()
    transport.emit(run_event("dag.after_space_freed"))
    return _lines(log)


def test_a_write_cut_short_by_a_full_disk_never_corrupts_the_next_line(tmp_path: Path) -> None:
    ours_config = {"type": "lineage_plus_event_log", "budget": False}
    ours = run_with_file_size_limit(24 * 1024, _fill_then_free, tmp_path / "ours.jsonl", ours_config)
    names = [orjson.loads(line)["job"]["name"] for line in ours]  # every line parses
    assert names[-1] == "dag.after_space_freed" and len(names) < 5
    client_config = {"type": "file", "append": True}
    theirs = run_with_file_size_limit(24 * 1024, _fill_then_free, tmp_path / "client.jsonl", client_config)
    torn = 0
    for line in theirs:
        try:
            orjson.loads(line)
        except orjson.JSONDecodeError:
            torn += 1
    print(f"\nclient file transport after a full disk: {len(theirs)} lines, {torn} unreadable")
