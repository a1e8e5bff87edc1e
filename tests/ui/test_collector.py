"""The OpenLineage endpoint on a real ``airflow api-server`` with the plugin, writing a real SQLite store.

One server for the whole file (simple auth manager, ``collector_max_writes = 1``, a 64 KiB body cap and
an ingest key in the connection ``lineage_plus_collector``). Producers post with the OpenLineage client's
own ``HttpTransport``; every check reads the store's rows back.
"""

from __future__ import annotations

import gzip
import json
import socket
import time
import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
import orjson
import pytest
from openlineage.client.event_v2 import Dataset, Job, Run, RunEvent, RunState
from openlineage.client.serde import Serde
from openlineage.client.transport.http import HttpConfig, HttpTransport

from airflow_lineage_plus.store.database import LineageStore, sqlite_url
from tests.support import openlineage_spec
from tests.support.collector_server import collector_server

pytestmark = [pytest.mark.airflow, pytest.mark.timeout(400)]

INGEST_KEY = "ingest-key-" + "k" * 32
MAX_BYTES = 65536
PRODUCER = "https://github.com/example/producer"


@dataclass
class Collector:
    base: str
    token: str
    store: LineageStore

    def rows(self) -> list[dict[str, Any]]:
        return [orjson.loads(payload) for _, payload in self.store.rows_after(0, 1000)]

    def post(self, path: str, body: bytes, **headers: str) -> httpx.Response:
        named = {name.replace("_", "-"): value for name, value in headers.items()}
        return httpx.post(f"{self.base}/lineage-plus{path}", content=body, headers=named, timeout=60)


@pytest.fixture(scope="module")
def collector(airflow_db: Path, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Collector]:
    workdir = tmp_path_factory.mktemp("collector")
    settings = {
        "AIRFLOW__LINEAGE_PLUS__COLLECTOR_MAX_WRITES": "1",
        "AIRFLOW__LINEAGE_PLUS__COLLECTOR_MAX_BYTES": str(MAX_BYTES),
        "AIRFLOW_CONN_LINEAGE_PLUS_COLLECTOR": json.dumps({"conn_type": "generic", "password": INGEST_KEY}),
    }
    with collector_server(workdir, sqlite_url(workdir / "store" / "lineage.db"), settings) as found:
        yield Collector(*found)


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


def test_a_batch_is_stored_whole(collector: Collector) -> None:
    before = collector.store.count()
    events = [_as_dict(_event(f"batch-{i}")) for i in range(3)]
    response = collector.post(
        "/api/v1/lineage/batch", json.dumps(events).encode(), authorization=f"Bearer {INGEST_KEY}"
    )
    assert response.status_code == 202, response.text
    assert response.json() == {"received": 3, "stored": 3, "duplicates": 0}
    assert collector.rows()[before:] == events


def test_a_bad_event_gets_400_naming_the_field_and_nothing_is_stored(collector: Collector) -> None:
    before = collector.store.count()
    event = _as_dict(_event("bad"))
    event["run"]["runId"] = "not-a-uuid"
    response = collector.post("/api/v1/lineage", json.dumps(event).encode(), x_lineage_plus_key=INGEST_KEY)
    assert response.status_code == 400
    assert "run.runId" in response.json()["detail"]
    good, bad = _as_dict(_event("ok")), _as_dict(_event("no-producer"))
    del bad["producer"]
    response = collector.post(
        "/api/v1/lineage/batch", json.dumps([good, bad]).encode(), x_lineage_plus_key=INGEST_KEY
    )
    assert response.status_code == 400
    assert response.json()["detail"].startswith("[1].producer")
    assert collector.store.count() == before


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


def _hold_a_write(base: str) -> socket.socket:
    """A request that took the one write slot and is still sending its body."""
    host, port = base.removeprefix("http://").split(":")
    held = socket.create_connection((host, int(port)), timeout=30)
    held.sendall(
        b"POST /lineage-plus/api/v1/lineage HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
        + f"X-Lineage-Plus-Key: {INGEST_KEY}\r\nContent-Length: 1000\r\n\r\n{{".encode()
    )
    return held


def test_a_saturated_endpoint_answers_429_with_retry_after_while_airflows_api_answers(
    collector: Collector,
) -> None:
    before = collector.store.count()
    held = _hold_a_write(collector.base)
    try:
        deadline = time.monotonic() + 30
        while True:  # each try a new event: one that got in before the hold is counted once
            body = json.dumps(_as_dict(_event(f"overload-{uuid.uuid4()}"))).encode()
            response = collector.post("/api/v1/lineage", body, x_lineage_plus_key=INGEST_KEY)
            if response.status_code == 429:
                break
            assert response.status_code == 202 and time.monotonic() < deadline, response.text
            time.sleep(0.2)  # the held request had not reached its slot yet
            before += 1
        assert response.headers["retry-after"] == "1"
        version = httpx.get(
            f"{collector.base}/api/v2/version",
            headers={"Authorization": f"Bearer {collector.token}"},
            timeout=10,
        )
        assert version.status_code == 200 and version.json()["version"]
    finally:
        held.close()
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
