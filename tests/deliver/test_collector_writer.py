"""The transport sends to the API server's OpenLineage endpoint (``collector_url``) within its deadline;
what the endpoint does not take waits in the spool and goes on after the next event that gets through.

One real ``airflow api-server`` with the plugin per store engine (an ingest key in the connection
``lineage_plus_collector``, a 64 KiB body cap), writing its own store, SQLite or PostgreSQL; the worker
side is a real ``airflow dags test`` and the package's transport built by the OpenLineage client's factory.
"""

from __future__ import annotations

import contextlib
import json
import os
import socket
import time
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
import orjson
import pytest
from openlineage.client.transport import get_default_factory

from airflow_lineage_plus.cli.store_commands import flush_spool
from airflow_lineage_plus.deliver import collector_writer, event_log_transport, spool_retry
from airflow_lineage_plus.deliver.collector_writer import CollectorSink, CollectorWriter, _batch_outcome
from airflow_lineage_plus.deliver.event_log_transport import EventLogTransport
from airflow_lineage_plus.deliver.serialize import dumps
from airflow_lineage_plus.exceptions import EventLostError
from airflow_lineage_plus.store.database import LineageStore
from airflow_lineage_plus.store.spool import FLUSHING, flush, pending_bytes
from tests.support.collector_server import collector_server
from tests.support.harness import AirflowRunner
from tests.support.openlineage_spec import validate_events
from tests.support.reliability_events import run_event
from tests.support.store_engines import ENGINES, new_store_url
from tests.support.tcp_relay import Relay
from tests.support.timing import bound, seconds

pytestmark = [pytest.mark.airflow, pytest.mark.timeout(400)]

KEY = "collector-writer-key-" + "w" * 32
CONNECTION = json.dumps({"conn_type": "generic", "password": KEY})
MAX_BYTES = 65536


@dataclass
class Server:
    base: str
    store: LineageStore
    engine: str

    def names(self) -> list[str]:
        """The job name of every event in the server's store, each validated against the spec."""
        events = [orjson.loads(payload) for payload in self.store.all_payloads()]
        assert validate_events(events) == len(events)
        return [event["job"]["name"] for event in events]


@pytest.fixture(scope="module", params=ENGINES)
def server(
    request: pytest.FixtureRequest, airflow_db: Path, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[Server]:
    workdir = tmp_path_factory.mktemp(f"collector-server-{request.param}")
    url = new_store_url(request.param, workdir, request)
    settings = {
        "AIRFLOW__LINEAGE_PLUS__COLLECTOR_MAX_BYTES": str(MAX_BYTES),
        "AIRFLOW_CONN_LINEAGE_PLUS_COLLECTOR": CONNECTION,
    }
    with collector_server(workdir, url, settings) as (base, _token, store, _pid):
        yield Server(base, store, request.param)


@pytest.fixture
def ingest_key(monkeypatch: pytest.MonkeyPatch) -> None:
    """This process has the key the way a worker does: the connection, from its environment."""
    monkeypatch.setenv("AIRFLOW_CONN_LINEAGE_PLUS_COLLECTOR", CONNECTION)


def _transport(spool: Path, url: str, **extra: Any) -> EventLogTransport:
    created = get_default_factory().create(
        {"type": "lineage_plus_event_log", "log_file_path": str(spool), "collector_url": url, **extra}
    )
    assert isinstance(created, EventLogTransport) and isinstance(created.store, CollectorWriter)
    return created


def _closed_url() -> str:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return f"http://127.0.0.1:{sock.getsockname()[1]}"


def _spooled(spool: Path) -> list[str]:
    if not spool.exists():
        return []
    return [orjson.loads(line)["job"]["name"] for line in spool.read_bytes().splitlines() if line]


def _wait_for_flush(spool: Path, seconds: float = 30.0) -> None:
    deadline = time.monotonic() + seconds
    while (
        spool.exists() or list(spool.parent.glob(spool.name + FLUSHING + "*"))
    ) and time.monotonic() < deadline:
        time.sleep(0.05)


def test_a_dag_run_on_a_worker_reaches_the_api_servers_store_through_the_endpoint(
    server: Server, airflow_runner: AirflowRunner, dag_file_dir: Path, tmp_path: Path
) -> None:
    before = server.store.count()
    spool = tmp_path / "worker" / "spool.jsonl"
    transport = {
        "type": "airflow_lineage_plus.transport.EventLogTransport",
        "log_file_path": str(spool),
        "collector_url": server.base,
    }

    def arrived() -> list[dict[str, Any]]:  # what reached the server's store since this test began
        return [orjson.loads(payload) for payload in server.store.all_payloads()[before:]]

    result = airflow_runner.run(
        dag_file_dir / "trivial.py",
        dag_id="trivial",
        logical_date={"sqlite": "2026-11-30T06:00:00+00:00", "postgresql": "2026-11-29T06:00:00+00:00"}[
            server.engine
        ],
        events_from=arrived,
        env={
            "AIRFLOW__OPENLINEAGE__TRANSPORT": json.dumps(transport),
            "AIRFLOW_CONN_LINEAGE_PLUS_COLLECTOR": CONNECTION,
        },
    )
    assert result.returncode == 0, result.output[-3000:]
    assert result.events == arrived()  # the runner waited for the DAG-run event and validated them all
    counts = Counter((e["job"]["name"], e["eventType"]) for e in result.events)
    tasks = ("trivial.extract", "trivial.transform", "trivial.done")
    expected = {(t, kind): 1 for t in tasks for kind in ("START", "COMPLETE")} | {("trivial", "COMPLETE"): 1}
    assert counts == Counter(expected), counts
    assert not spool.exists() and not list(spool.parent.glob("*.db"))  # nothing stayed on the worker


def test_with_the_endpoint_unreachable_events_wait_in_the_spool_then_reach_the_store_once(
    server: Server, tmp_path: Path, ingest_key: None
) -> None:
    spool = tmp_path / "spool.jsonl"
    down = _transport(spool, _closed_url(), store_timeout=1.0)
    started = time.monotonic()
    for i in range(3):
        down.emit(run_event(f"worker.down_{i}"))
    assert time.monotonic() - started < 3 * 1.0 + 2  # never longer than the deadline per event
    assert _spooled(spool) == ["worker.down_0", "worker.down_1", "worker.down_2"]
    assert not {"worker.down_0", "worker.down_1", "worker.down_2"} & set(server.names())

    _transport(spool, server.base).emit(run_event("worker.back"))
    _wait_for_flush(spool)
    names = Counter(server.names())
    assert [names[f"worker.down_{i}"] for i in range(3)] + [names["worker.back"]] == [1, 1, 1, 1]
    assert not spool.exists() and not list(tmp_path.glob("spool.jsonl" + FLUSHING + "*"))


def test_a_wrong_key_spools_the_event_and_the_right_key_later_sends_it(
    server: Server, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("AIRFLOW__LINEAGE_PLUS__COLLECTOR_CONNECTION_ID", "wrong_collector_key")
    monkeypatch.setenv(
        "AIRFLOW_CONN_WRONG_COLLECTOR_KEY", json.dumps({"conn_type": "generic", "password": "x"})
    )
    spool = tmp_path / "spool.jsonl"
    lost = event_log_transport.lost_events()
    _transport(spool, server.base).emit(run_event("worker.wrong_key"))
    assert _spooled(spool) == ["worker.wrong_key"] and "worker.wrong_key" not in server.names()

    monkeypatch.setenv("AIRFLOW_CONN_LINEAGE_PLUS_COLLECTOR", CONNECTION)
    monkeypatch.delenv("AIRFLOW__LINEAGE_PLUS__COLLECTOR_CONNECTION_ID")
    _transport(spool, server.base).emit(run_event("worker.right_key"))
    _wait_for_flush(spool)
    names = Counter(server.names())
    assert (names["worker.wrong_key"], names["worker.right_key"]) == (1, 1)
    assert event_log_transport.lost_events() == lost


def test_an_event_the_endpoint_refuses_for_good_is_lost_once_and_not_spooled(
    server: Server, tmp_path: Path, ingest_key: None
) -> None:
    spool = tmp_path / "spool.jsonl"
    lost = event_log_transport.lost_events()
    _transport(spool, server.base).emit(run_event("worker.too_large", padding=MAX_BYTES * 2))
    assert event_log_transport.lost_events() == lost + 1
    assert not spool.exists() and "worker.too_large" not in server.names()


def test_a_flush_sends_batches_and_a_refused_event_does_not_hold_back_the_others(
    server: Server, tmp_path: Path, ingest_key: None
) -> None:
    spool = tmp_path / "spool.jsonl"
    good = [dumps(run_event(f"worker.batch_{i}")) for i in range(5)]
    too_large = dumps(run_event("worker.batch_too_large", padding=MAX_BYTES * 2))
    spool.write_bytes(b"\n".join([*good[:2], too_large, *good[2:]]) + b"\n")
    result = flush(CollectorSink(CollectorWriter(server.base, spool, timeout=5.0)), spool)
    assert (result.added, result.duplicates, result.problems) == (5, 0, {"refused": 1})
    names = Counter(server.names())
    assert [names[f"worker.batch_{i}"] for i in range(5)] == [1] * 5 and names["worker.batch_too_large"] == 0
    assert not spool.exists()
    # sent again (a flush cut short): every event is a duplicate, none is stored twice
    spool.write_bytes(b"\n".join(good) + b"\n")
    again = flush(CollectorSink(CollectorWriter(server.base, spool, timeout=5.0)), spool)
    assert (again.added, again.duplicates) == (0, 5)


def test_replay_sends_the_spool_to_the_api_server_of_collector_url(
    server: Server, tmp_path: Path, ingest_key: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    spool = tmp_path / "spool.jsonl"
    spool.write_bytes(b"\n".join(dumps(run_event(f"worker.replayed_{i}")) for i in range(3)) + b"\n")
    monkeypatch.setenv("AIRFLOW__LINEAGE_PLUS__COLLECTOR_URL", server.base + "/")
    status, out, err = flush_spool(spool)
    where = f"{server.base}/lineage-plus/api/v1/lineage"
    assert (status, out, err) == (
        0,
        f"sent 3 events from the spool {spool} to {where} (0 already stored)\n",
        "",
    )
    names = Counter(server.names())
    assert [names[f"worker.replayed_{i}"] for i in range(3)] == [1, 1, 1] and not spool.exists()


def _wait(condition: Any, limit: float) -> float:
    """Seconds until ``condition()`` held (polled every 0.1 s); fails past ``limit``."""
    began = time.monotonic()
    while not condition():
        assert time.monotonic() - began < limit, "timed out"
        time.sleep(0.1)
    return time.monotonic() - began


def test_events_spooled_while_the_api_server_is_unreachable_reach_it_once_back_without_a_new_event(
    server: Server, tmp_path: Path, ingest_key: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The spool's retry process (``spool_retry_seconds``) sends the spool on by itself: no event follows
    the outage, nothing is replayed by hand, and each event is stored once."""
    monkeypatch.setenv("AIRFLOW__LINEAGE_PLUS__SPOOL_RETRY_SECONDS", "300")
    host, port = server.base.removeprefix("http://").split(":")
    relay = Relay((host, int(port)))  # the API server, behind a link that is down for now
    spool = tmp_path / "spool.jsonl"
    transport = _transport(spool, relay.url, store_timeout=1.0)
    names = [f"worker.retried_{i}" for i in range(3)]
    started = time.monotonic()
    for name in names:
        transport.emit(run_event(name))
    assert time.monotonic() - started < 3 * 1.0 + 2  # never longer than the deadline per event
    assert _spooled(spool) == names
    _wait(lambda: spool_retry.running(spool), 60)  # one retry process, started by the first spooled event
    time.sleep(2 * spool_retry.RETRY_FIRST)  # it tried while the link was down: nothing arrived
    assert not set(names) & set(server.names()) and pending_bytes(spool) > 0
    try:
        relay.up()
        up = time.monotonic()
        other = tmp_path / "baseline.jsonl"  # the same flush done here, without waiting: the baseline
        other.write_bytes(dumps(run_event("worker.retry_baseline")) + b"\n")
        alone = seconds(lambda: flush(CollectorSink(CollectorWriter(relay.url, other, timeout=5.0)), other))
        _wait(lambda: set(names) <= set(server.names()), 120)
        assert time.monotonic() - up < bound(spool_retry.RETRY_MAX, alone)
        counts = Counter(server.names())
        assert [counts[name] for name in names] == [1, 1, 1]
        assert pending_bytes(spool) == 0
        _wait(lambda: not spool_retry.running(spool), 30)  # it ends once nothing waits
    finally:
        relay.down()


def test_a_batch_answer_with_events_to_retry_keeps_the_spool_and_one_without_details_counts_all() -> None:
    retriable = {
        "status": "partial_success",
        "summary": {"received": 2, "successful": 1, "failed": 1, "retriable": 1, "non_retriable": 0},
        "failed_events": [{"index": 1, "reason": "Timeout", "retriable": True}],
    }
    with pytest.raises(EventLostError, match="1 events of a batch"):
        _batch_outcome(retriable, 2)
    refused = {
        "status": "partial_success",
        "summary": {"received": 3, "successful": 2, "failed": 1},
        "failed_events": [{"index": 0, "reason": "Unsupported event type", "retriable": False}],
    }
    assert _batch_outcome(refused, 3) == (2, 0, 1)
    assert _batch_outcome({}, 4) == (4, 0, 0)  # the spec's 204: all taken


def _self_signed(directory: Path) -> tuple[Path, Path]:
    """A certificate for 127.0.0.1 signed by its own key, and that key (PEM files)."""
    import datetime
    import ipaddress

    from cryptography import x509
    from cryptography.hazmat.primitives import hashes, serialization
    from cryptography.hazmat.primitives.asymmetric import ec
    from cryptography.x509.oid import NameOID

    key = ec.generate_private_key(ec.SECP256R1())
    name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "127.0.0.1")])
    now = datetime.datetime.now(datetime.timezone.utc)
    certificate = (
        x509.CertificateBuilder()
        .subject_name(name)
        .issuer_name(name)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - datetime.timedelta(minutes=5))
        .not_valid_after(now + datetime.timedelta(hours=1))
        .add_extension(
            x509.SubjectAlternativeName([x509.IPAddress(ipaddress.ip_address("127.0.0.1"))]), False
        )
        .add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True)
        .sign(key, hashes.SHA256())
    )
    cert_file, key_file = directory / "cert.pem", directory / "key.pem"
    cert_file.write_bytes(certificate.public_bytes(serialization.Encoding.PEM))
    key_file.write_bytes(
        key.private_bytes(
            serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()
        )
    )
    return cert_file, key_file


@contextlib.contextmanager
def _tls_server(cert_file: Path, key_file: Path) -> Iterator[str]:
    """An HTTPS server on 127.0.0.1 answering 200 to every GET; its base URL."""
    import http.server
    import ssl
    import threading

    class Answer(http.server.BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            self.send_response(200)
            self.send_header("Content-Length", "0")
            self.end_headers()

        def log_message(self, *args: Any) -> None:
            pass

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Answer)
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    context.load_cert_chain(cert_file, key_file)
    server.socket = context.wrap_socket(server.socket, server_side=True)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"https://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()


def test_the_client_kept_for_plain_http_refuses_a_tls_connection_and_the_https_one_checks_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The ``http`` client loads no CA bundle (cheap in each forked emitting process): asked for an
    ``https`` URL it fails the certificate check instead of skipping it. The ``https`` client checks
    against the CAs it trusts (here ``SSL_CERT_FILE``): the same server is reached."""
    monkeypatch.setattr(collector_writer, "_clients", {})
    monkeypatch.setattr(collector_writer, "_contexts", {})
    cert_file, key_file = _self_signed(tmp_path)
    with _tls_server(cert_file, key_file) as base:
        with pytest.raises(httpx.ConnectError, match="CERTIFICATE_VERIFY_FAILED"):
            collector_writer._client("http").get(base + "/", timeout=5)
        monkeypatch.setenv("SSL_CERT_FILE", str(cert_file))
        assert collector_writer._client("https").get(base + "/", timeout=5).status_code == 200
        assert collector_writer._client("https") is collector_writer._client("https")  # one per process


def test_a_process_forked_after_the_preload_uses_the_tls_context_made_before_the_fork(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The preload (:func:`collector_writer.prepare`) makes the ``https`` TLS context (the CA bundle's load,
    about 16 ms) in the task process; the process the provider forks for an event builds its client on
    it. Here the forked process no longer has ``SSL_CERT_FILE``, which alone trusts the server: only the
    context made before the fork can reach it."""
    monkeypatch.setattr(collector_writer, "_clients", {})
    monkeypatch.setattr(collector_writer, "_contexts", {})
    cert_file, key_file = _self_signed(tmp_path)
    with _tls_server(cert_file, key_file) as base:
        monkeypatch.setenv("SSL_CERT_FILE", str(cert_file))
        collector_writer.prepare(base)
        monkeypatch.delenv("SSL_CERT_FILE")
        pid = os.fork()
        if pid == 0:  # the emitting process
            try:
                status = collector_writer._client("https").get(base + "/", timeout=5).status_code
                os._exit(0 if status == 200 else 1)
            except BaseException:
                os._exit(2)
        _, code = os.waitpid(pid, 0)
        assert os.waitstatus_to_exitcode(code) == 0
        with pytest.raises(httpx.ConnectError, match="CERTIFICATE_VERIFY_FAILED"):  # without the preload
            monkeypatch.setattr(collector_writer, "_contexts", {})
            monkeypatch.setattr(collector_writer, "_clients", {})
            collector_writer._client("https").get(base + "/", timeout=5)
