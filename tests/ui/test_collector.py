"""The OpenLineage endpoint on a real ``airflow api-server`` with the plugin, writing a real PostgreSQL store.

One server for the whole file (simple auth manager, a queue of 4 events worked by 1 thread, a 64 KiB body
cap and an ingest key in the connection ``lineage_plus_collector``), and a PostgreSQL cluster of its own
for the store, which one test stops and starts again. Producers post with the OpenLineage client's own
``HttpTransport``; every check reads the store's rows back.
"""

from __future__ import annotations

import gzip
import json
import os
import shutil
import socket
import tempfile
import threading
import time
import uuid
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
import orjson
import psutil
import pytest
from openlineage.client.event_v2 import Dataset, Job, Run, RunEvent, RunState
from openlineage.client.serde import Serde
from openlineage.client.transport.http import HttpConfig, HttpTransport

from airflow_lineage_plus.store.database import LineageStore
from tests.support import openlineage_spec
from tests.support.collector_server import collector_server
from tests.support.postgres_env import PostgresServer
from tests.support.store_engines import create_database

pytestmark = [pytest.mark.airflow, pytest.mark.timeout(400)]

INGEST_KEY = "ingest-key-" + "k" * 32
MAX_BYTES = 65536
QUEUE_SIZE = 4
PRODUCER = "https://github.com/example/producer"


@dataclass
class Collector:
    base: str
    token: str
    store: LineageStore
    pid: int
    postgres: PostgresServer

    def rows(self) -> list[dict[str, Any]]:
        return [orjson.loads(payload) for _, payload in self.store.rows_after(0, 100000)]

    def post(self, path: str, body: bytes, **headers: str) -> httpx.Response:
        named = {name.replace("_", "-"): value for name, value in headers.items()}
        return httpx.post(f"{self.base}/lineage-plus{path}", content=body, headers=named, timeout=60)


@pytest.fixture(scope="module")
def collector(airflow_db: Path, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Collector]:
    workdir = tmp_path_factory.mktemp("collector")
    root = Path(tempfile.mkdtemp(prefix="alp-collector-pg-"))
    postgres = PostgresServer(root)
    settings = {
        "AIRFLOW__LINEAGE_PLUS__COLLECTOR_MAX_WRITES": "1",
        "AIRFLOW__LINEAGE_PLUS__COLLECTOR_QUEUE_SIZE": str(QUEUE_SIZE),
        "AIRFLOW__LINEAGE_PLUS__COLLECTOR_MAX_BYTES": str(MAX_BYTES),
        "AIRFLOW_CONN_LINEAGE_PLUS_COLLECTOR": json.dumps({"conn_type": "generic", "password": INGEST_KEY}),
    }
    try:
        postgres.start()
        create_database(postgres, "store")
        with collector_server(workdir, postgres.url("store"), settings) as found:
            yield Collector(*found, postgres)
    finally:
        postgres.stop()
        shutil.rmtree(root, ignore_errors=True)


def _event(name: str, event_type: RunState = RunState.COMPLETE) -> RunEvent:
    return RunEvent(
        eventType=event_type,
        eventTime="2026-12-01T10:00:00.000000+00:00",
        run=Run(runId=str(uuid.uuid4())),
        job=Job(namespace="collector-tests", name=name),
        producer=PRODUCER,
        inputs=[Dataset(namespace="postgres://db:5432", name="public.source")],
        outputs=[Dataset(namespace="postgres://db:5432", name=f"public.{name}")],
    )


def _as_dict(event: RunEvent) -> dict[str, Any]:
    data: dict[str, Any] = json.loads(Serde.to_json(event))
    assert openlineage_spec.validate_events([data]) == 1
    return data


def _transport(base: str, auth: str, compression: str | None = None) -> HttpTransport:
    config: dict[str, Any] = {
        "url": f"{base}/lineage-plus/",
        "endpoint": "api/v1/lineage",
        "auth": {"type": "api_key", "apiKey": auth},
        "retry": {"total": 0},
    }
    if compression:
        config["compression"] = compression
    return HttpTransport(HttpConfig.from_dict(config))


def test_an_event_posted_by_the_openlineage_http_transport_is_stored_before_the_202(
    collector: Collector,
) -> None:
    before = collector.store.count()
    event = _event("plain")
    response = _transport(collector.base, INGEST_KEY).emit(event)
    assert response.status_code == 202
    assert response.json() == {"received": 1, "stored": 1, "duplicates": 0}
    assert collector.store.count() == before + 1
    assert collector.rows()[-1] == _as_dict(event)


def test_a_gzip_event_and_an_airflow_token_are_accepted(collector: Collector) -> None:
    before = collector.store.count()
    event = _event("gzipped")
    response = _transport(collector.base, collector.token, compression="gzip").emit(event)
    assert response.status_code == 202
    assert collector.store.count() == before + 1
    assert collector.rows()[-1] == _as_dict(event)


def _batch_reply(received: int, failed: list[dict[str, Any]], stored: int, duplicates: int) -> dict[str, Any]:
    return {
        "status": "partial_success" if failed else "success",
        "summary": {
            "received": received,
            "successful": received - len(failed),
            "failed": len(failed),
            "retriable": 0,
            "non_retriable": len(failed),
            "stored": stored,
            "duplicates": duplicates,
        },
        "failed_events": failed,
    }


def test_a_batch_is_stored_whole_and_answered_with_the_specs_summary(collector: Collector) -> None:
    before = collector.store.count()
    events = [_as_dict(_event(f"batch-{i}")) for i in range(3)]
    response = collector.post(
        "/api/v1/lineage/batch", json.dumps(events).encode(), authorization=f"Bearer {INGEST_KEY}"
    )
    assert response.status_code == 200, response.text
    assert response.json() == _batch_reply(3, [], 3, 0)
    assert collector.rows()[before:] == events
    again = collector.post(
        "/api/v1/lineage/batch", json.dumps(events).encode(), x_lineage_plus_key=INGEST_KEY
    )
    assert again.json() == _batch_reply(3, [], 0, 3)
    assert collector.store.count() == before + 3


def test_a_bad_event_gets_400_naming_the_field_and_nothing_is_stored(collector: Collector) -> None:
    before = collector.store.count()
    event = _as_dict(_event("bad"))
    event["run"]["runId"] = "not-a-uuid"
    response = collector.post("/api/v1/lineage", json.dumps(event).encode(), x_lineage_plus_key=INGEST_KEY)
    assert response.status_code == 400
    assert "run.runId" in response.json()["detail"]
    response = collector.post("/api/v1/lineage/batch", b'{"not": "an array"}', x_lineage_plus_key=INGEST_KEY)
    assert response.status_code == 400
    assert collector.store.count() == before


def test_bad_events_of_a_batch_are_named_by_index_and_the_others_are_stored(collector: Collector) -> None:
    before = collector.store.count()
    good = [_as_dict(_event(f"partial-{i}")) for i in range(3)]
    no_producer, bad_time = _as_dict(_event("no-producer")), _as_dict(_event("bad-time"))
    del no_producer["producer"]
    bad_time["eventTime"] = "yesterday"
    body = json.dumps([good[0], no_producer, good[1], bad_time, good[2]]).encode()
    response = collector.post("/api/v1/lineage/batch", body, x_lineage_plus_key=INGEST_KEY)
    assert response.status_code == 200, response.text
    failed = [
        {"index": 1, "reason": "producer: required, a non-empty string", "retriable": False},
        {"index": 3, "reason": "eventTime: an ISO 8601 date-time", "retriable": False},
    ]
    assert response.json() == _batch_reply(5, failed, 3, 0)
    assert collector.rows()[before:] == good


def test_too_large_bodies_and_gzip_bombs_get_413(collector: Collector) -> None:
    before = collector.store.count()
    event = _as_dict(_event("large"))
    event["job"]["facets"] = {"documentation": {"description": "x" * MAX_BYTES}}
    big = json.dumps(event).encode()
    response = collector.post("/api/v1/lineage", big, x_lineage_plus_key=INGEST_KEY)
    assert response.status_code == 413
    bomb = gzip.compress(b" " * (MAX_BYTES * 64))
    assert len(bomb) < MAX_BYTES
    response = collector.post("/api/v1/lineage", bomb, x_lineage_plus_key=INGEST_KEY, content_encoding="gzip")
    assert response.status_code == 413
    assert collector.store.count() == before


def test_anonymous_and_forged_writers_get_401_and_nothing_is_stored(collector: Collector) -> None:
    before = collector.store.count()
    body = json.dumps(_as_dict(_event("forged"))).encode()
    assert collector.post("/api/v1/lineage", body).status_code == 401
    assert collector.post("/api/v1/lineage", body, x_lineage_plus_key=INGEST_KEY + "x").status_code == 401
    forged = collector.token[:-4] + ("AAAA" if not collector.token.endswith("AAAA") else "BBBB")
    assert collector.post("/api/v1/lineage", body, authorization=f"Bearer {forged}").status_code == 401
    with pytest.raises(Exception, match="401"):
        _transport(collector.base, "wrong-key").emit(_event("forged"))
    assert collector.store.count() == before


def _hold_a_place(base: str) -> socket.socket:
    """A request admitted to the queue (its key checked) and still sending its body."""
    host, port = base.removeprefix("http://").split(":")
    held = socket.create_connection((host, int(port)), timeout=30)
    held.sendall(
        b"POST /lineage-plus/api/v1/lineage HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
        + f"X-Lineage-Plus-Key: {INGEST_KEY}\r\nContent-Length: 1000\r\n\r\n{{".encode()
    )
    return held


def _version(collector: Collector) -> httpx.Response:
    return httpx.get(
        f"{collector.base}/api/v2/version", headers={"Authorization": f"Bearer {collector.token}"}, timeout=10
    )


def test_a_full_queue_answers_429_with_retry_after_while_airflows_api_answers(collector: Collector) -> None:
    before = collector.store.count()
    held = [_hold_a_place(collector.base) for _ in range(QUEUE_SIZE)]
    try:
        deadline = time.monotonic() + 30
        while True:  # each try a new event: one that got in before the holds are counted once
            body = json.dumps(_as_dict(_event(f"overload-{uuid.uuid4()}"))).encode()
            response = collector.post("/api/v1/lineage", body, x_lineage_plus_key=INGEST_KEY)
            if response.status_code == 429:
                break
            assert response.status_code == 202 and time.monotonic() < deadline, response.text
            time.sleep(0.2)  # the held requests had not all reached the queue yet
            before += 1
        assert response.headers["retry-after"] == "1"
        version = _version(collector)
        assert version.status_code == 200 and version.json()["version"]
    finally:
        for socket_ in held:
            socket_.close()
    assert collector.store.count() == before
    deadline = time.monotonic() + 30
    while (
        response := collector.post("/api/v1/lineage", body, x_lineage_plus_key=INGEST_KEY)
    ).status_code == 429:
        assert time.monotonic() < deadline
        time.sleep(0.2)
    assert response.status_code == 202
    assert response.json() == {"received": 1, "stored": 1, "duplicates": 0}
    assert collector.store.count() == before + 1


def test_a_flood_from_one_producer_gets_429s_and_what_was_accepted_is_stored_once(
    collector: Collector,
) -> None:
    """One producer, 16 requests in flight at a time, 480 distinct events, no retry: some get 429, every
    event answered 202 is in the store exactly once, and no event answered 429 is; Airflow's own API keeps
    answering meanwhile."""
    names = [f"flood-{n}-{uuid.uuid4()}" for n in range(480)]
    bodies = [json.dumps(_as_dict(_event(name))).encode() for name in names]
    answers: dict[str, int] = {}
    retry_after: set[str | None] = set()
    versions: list[int] = []
    done = threading.Event()

    def produce(share: list[tuple[str, bytes]]) -> None:
        with httpx.Client(headers={"X-Lineage-Plus-Key": INGEST_KEY}, timeout=60) as client:
            for name, body in share:
                response = client.post(f"{collector.base}/lineage-plus/api/v1/lineage", content=body)
                answers[name] = response.status_code
                if response.status_code == 429:
                    retry_after.add(response.headers.get("retry-after"))

    def probe() -> None:
        while not done.is_set():
            versions.append(_version(collector).status_code)
            time.sleep(0.05)

    pairs = list(zip(names, bodies, strict=True))
    producers = [threading.Thread(target=produce, args=(pairs[n::16],)) for n in range(16)]
    prober = threading.Thread(target=probe)
    prober.start()
    for thread in producers:
        thread.start()
    for thread in producers:
        thread.join()
    done.set()
    prober.join()
    statuses = Counter(answers.values())
    assert set(statuses) == {202, 429} and sum(statuses.values()) == len(names), statuses
    assert retry_after == {"1"}
    assert versions and set(versions) == {200}
    stored = Counter(row["job"]["name"] for row in collector.rows())
    accepted = {name for name, code in answers.items() if code == 202}
    assert {name: stored[name] for name in names if stored[name]} == dict.fromkeys(accepted, 1)


def test_a_store_that_cannot_be_written_answers_503_with_retry_after_then_202_once_back(
    collector: Collector,
) -> None:
    before = collector.store.count()
    event = _as_dict(_event("store-down"))
    body = json.dumps(event).encode()
    collector.postgres.stop()
    try:
        response = collector.post("/api/v1/lineage", body, x_lineage_plus_key=INGEST_KEY)
        assert response.status_code == 503, response.text
        assert response.headers["retry-after"] == "1"
        batch = collector.post(
            "/api/v1/lineage/batch", f"[{body.decode()}]".encode(), x_lineage_plus_key=INGEST_KEY
        )
        assert batch.status_code == 503 and batch.headers["retry-after"] == "1"
        assert _version(collector).status_code == 200
    finally:
        collector.postgres.resume()
    assert collector.store.count() == before
    response = collector.post("/api/v1/lineage", body, x_lineage_plus_key=INGEST_KEY)
    assert response.status_code == 202, response.text
    assert response.json() == {"received": 1, "stored": 1, "duplicates": 0}
    assert collector.rows()[before:] == [event]


def _writer_processes(collector: Collector) -> list[psutil.Process]:
    """The API server's writer processes (its session's processes running the writer's module)."""
    return [
        process
        for process in psutil.process_iter(["cmdline"])
        if "airflow_lineage_plus.ui.ingest_process" in (process.info["cmdline"] or [])
        and os.getsid(process.pid) == collector.pid
    ]


def test_events_are_checked_and_stored_by_a_writer_process_whose_death_answers_503_then_one_is_started(
    collector: Collector,
) -> None:
    """The checks and store writes run in one child of the API server (not in its own process), at a lower
    CPU priority; a request the child holds when it dies is answered 503 and not stored, and the next
    request starts a new child that stores it."""
    ready = collector.post(
        "/api/v1/lineage",
        json.dumps(_as_dict(_event("writer-ready"))).encode(),
        x_lineage_plus_key=INGEST_KEY,
    )
    assert ready.status_code == 202, ready.text
    [writer] = _writer_processes(collector)
    assert writer.pid in {child.pid for child in psutil.Process(collector.pid).children(recursive=True)}
    assert writer.nice() > psutil.Process(collector.pid).nice()
    before = collector.store.count()
    held = _as_dict(_event("held-by-a-dying-writer"))
    writer.suspend()
    answers: list[httpx.Response] = []
    sender = threading.Thread(
        target=lambda: answers.append(
            collector.post("/api/v1/lineage", json.dumps(held).encode(), x_lineage_plus_key=INGEST_KEY)
        )
    )
    sender.start()
    time.sleep(2)  # the request reaches the stopped writer's pipe
    assert sender.is_alive()
    writer.kill()
    sender.join(30)
    [answer] = answers
    assert answer.status_code == 503 and answer.headers["retry-after"] == "1", answer.text
    assert collector.store.count() == before
    again = collector.post("/api/v1/lineage", json.dumps(held).encode(), x_lineage_plus_key=INGEST_KEY)
    assert again.status_code == 202, again.text
    assert again.json() == {"received": 1, "stored": 1, "duplicates": 0}
    [new_writer] = _writer_processes(collector)
    assert new_writer.pid != writer.pid
    assert collector.rows()[before:] == [held]
