"""The transport's way to the API server's OpenLineage endpoint: one POST per event, within a deadline.

With ``collector_url`` set (the transport's config, else ``[lineage_plus] collector_url``: the Airflow
API server's base URL, as a browser reaches it), :class:`CollectorWriter` sends each checked event to
``<collector_url>/lineage-plus/api/v1/lineage`` (:mod:`airflow_lineage_plus.ui.collector`), so a worker or
scheduler on another machine writes the one store the API server reads. It authenticates with the ingest
key, the password of the Airflow connection ``[lineage_plus] collector_connection_id``, read through
Airflow (secrets backends, environment, the Task SDK inside a task) and never put in the event.

Within ``timeout`` seconds, key lookup included, the event is either accepted (202) or not:

* refused for good (400: not an event's shape; 413: larger than the endpoint takes):
  :class:`~airflow_lineage_plus.exceptions.EventRefusedError`; sending it again cannot succeed, so the
  transport does not spool it (one warning, one lost event);
* anything else (connection refused, timeout, 401/403, 429, 5xx): the transport spools it. The spool
  goes to the batch endpoint in the background (:class:`CollectorSink`): after the next event that gets
  through (:mod:`.background_flush`), and from a retry process of its own that tries again and again
  until the API server takes it (:mod:`.spool_retry`), so nothing
  waits for a next event; ``lineage-plus replay`` does the same by hand.

The batch endpoint answers with the spec's processing details (OpenLineage#4109): an event it refuses
for good is counted (``refused``) and not sent again, one it could take later keeps the spool for the
next try. The endpoint keeps each event's bytes once, so an event sent twice (a flush cut short) is
stored once.
"""

from __future__ import annotations

import os
import ssl
import threading
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path
from typing import Any

import httpx
import orjson

from airflow_lineage_plus.containment import call_within
from airflow_lineage_plus.deliver.background_flush import BackgroundFlush
from airflow_lineage_plus.deliver.ingest_key import cached_ingest_key, ingest_key
from airflow_lineage_plus.exceptions import EventLostError, EventRefusedError
from airflow_lineage_plus.store.database import AppendResult

#: where the plugin's app mounts the endpoint, below the API server's base URL
ENDPOINT = "/lineage-plus/api/v1/lineage"
BATCH_ENDPOINT = ENDPOINT + "/batch"
#: statuses that say the event itself is not acceptable: never sent again
REFUSED = frozenset({400, 413, 422})
#: a flush's batches: at most this many bytes of events (the endpoint's default cap is 16 MiB) ...
BATCH_BYTES = 4 * 1024 * 1024
#: ... and this many events
BATCH_EVENTS = 500
#: seconds one batch of a background flush may take
FLUSH_TIMEOUT = 30.0

_clients: dict[tuple[int, str], httpx.Client] = {}
_clients_lock = threading.Lock()
_contexts: dict[str, ssl.SSLContext] = {}


def _tls_context(scheme: str) -> ssl.SSLContext:
    """The TLS context of this process's clients for URLs of ``scheme``, made once and kept across forks (a
    context holds settings and trusted certificates, never a connection): for ``https`` the default one,
    which loads the CA bundle (about 16 ms); for ``http`` one that trusts no certificate, so that, were it
    ever asked for a TLS connection, it would refuse it rather than skip the check."""
    context = _contexts.get(scheme)
    if context is None:
        if scheme == "http":
            context = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
        else:
            context = httpx.create_ssl_context(verify=True, trust_env=True)
        context = _contexts.setdefault(scheme, context)
    return context


def _client(scheme: str) -> httpx.Client:
    """This process's HTTP client for URLs of ``scheme`` (a forked child makes its own: connections cannot
    cross a fork). The provider sends each task event from a process forked for it, so each event pays for
    a new client; its TLS context is made once (:func:`_tls_context`, :func:`prepare`)."""
    found = (os.getpid(), scheme)
    with _clients_lock:
        client = _clients.get(found)
        if client is None:
            client = _clients[found] = httpx.Client(follow_redirects=False, verify=_tls_context(scheme))
        return client


def prepare(url: str) -> None:
    """Make in this process the TLS context that each process forked after it would make for its first
    event to ``url``."""
    _tls_context(httpx.URL(url).scheme)


class CollectorWriter:
    """Sends events to the OpenLineage endpoint at ``url`` within ``timeout`` seconds; flushes ``spool``
    after an event that got through."""

    #: what the transport's warnings call it
    what = "OpenLineage endpoint"

    def __init__(
        self, url: str, spool: Path, *, timeout: float, key: Callable[[], str | None] = ingest_key
    ) -> None:
        """``key``: the ingest key's reader (default: the connection, through Airflow)."""
        self.base = url.rstrip("/")
        self.key = key
        parsed = httpx.URL(self.base)
        self.scheme = parsed.scheme
        self.where = str(parsed.copy_with(username=None, password=None)) + ENDPOINT
        self.timeout = timeout
        self.flusher = BackgroundFlush(spool, f"the {self.what} {self.where}")
        self.sink = CollectorSink(self)

    def write(self, line: bytes) -> None:
        """Send one event (its JSON line, no newline); raises when it was not accepted in time
        (:class:`EventRefusedError` when it never will be)."""
        call_within(self.timeout, f"the OpenLineage endpoint {self.where}", self.post, ENDPOINT, line)
        self.flusher.after_write(self.sink)

    def retry_destination(self) -> dict[str, Any]:
        """This endpoint for the spool's retry process (:mod:`.spool_retry`), which sends the spool on as
        soon as the endpoint answers. The key goes along when this process read it lately (else the retry
        process reads the connection itself): nothing here waits for a lookup."""
        destination: dict[str, Any] = {"collector_url": self.base, "timeout": self.timeout}
        fresh, key = cached_ingest_key() if self.key is ingest_key else (True, self.key())
        if fresh:
            destination["key"] = key
        return destination

    def post(self, path: str, body: bytes, timeout: float | None = None) -> dict[str, Any]:
        """POST ``body`` (JSON) to ``path`` below the base URL; the 202's JSON, else raises."""
        headers = {"Content-Type": "application/json"}
        key = self.key()
        if key:
            headers["Authorization"] = f"Bearer {key}"
        response = _client(self.scheme).post(
            self.base + path, content=body, headers=headers, timeout=timeout or self.timeout
        )
        if response.status_code in (200, 201, 202, 204):
            try:
                answer = orjson.loads(response.content)
            except orjson.JSONDecodeError:
                answer = None
            return answer if isinstance(answer, dict) else {}
        detail = _detail(response)
        if response.status_code in REFUSED:
            raise EventRefusedError(f"the endpoint refused it ({response.status_code}): {detail}")
        raise EventLostError(f"the endpoint answered {response.status_code}: {detail}")


class CollectorSink:
    """The endpoint as a :class:`~airflow_lineage_plus.store.spool.Sink`: what a flush sends the spool to,
    in batches. The batch endpoint's answer (the spec's ``summary`` and ``failed_events``) says which
    events were refused for good (counted as ``refused``, not sent again) and whether some can be
    retried (then this raises and the spool stays for the next try; what was stored is kept once). A
    batch refused as a whole (a server before that answer) is sent event by event."""

    def __init__(self, writer: CollectorWriter) -> None:
        self.writer = writer

    def append(self, lines: Iterable[bytes]) -> AppendResult:
        added = duplicates = refused = 0
        for batch in _batches(lines):
            try:
                answer = self._send(b"[" + b",".join(batch) + b"]", BATCH_ENDPOINT)
            except EventRefusedError:  # a server that refuses a batch whole: find the bad event
                for line in batch:
                    try:
                        one = self._send(line, ENDPOINT)
                    except EventRefusedError:
                        refused += 1
                        continue
                    added, duplicates = added + _count(one, "stored"), duplicates + _count(one, "duplicates")
                continue
            stored, again, failed = _batch_outcome(answer, len(batch))
            added, duplicates, refused = added + stored, duplicates + again, refused + failed
        return AppendResult(added, duplicates, {"refused": refused} if refused else {})

    def _send(self, body: bytes, path: str) -> dict[str, Any]:
        return self.writer.post(path, body, timeout=max(self.writer.timeout, FLUSH_TIMEOUT))


def _batch_outcome(answer: dict[str, Any], sent: int) -> tuple[int, int, int]:
    """(stored, already stored, refused for good) of a batch's answer; raises when the endpoint could
    take some of its events later (the spec's ``retriable``)."""
    summary = answer.get("summary")
    if not isinstance(summary, dict):  # no details (the spec's 204): every event taken
        return sent, 0, 0
    failed = answer.get("failed_events")
    failed = failed if isinstance(failed, list) else []
    retriable = sum(1 for f in failed if isinstance(f, dict) and f.get("retriable") is not False)
    if retriable:
        raise EventLostError(f"{retriable} events of a batch could not be stored now; they stay in the spool")
    if "stored" not in summary:  # another server: what it took, without telling new from known
        return _count(summary, "successful"), 0, len(failed)
    return _count(summary, "stored"), _count(summary, "duplicates"), len(failed)


def _batches(lines: Iterable[bytes]) -> Iterator[list[bytes]]:
    batch: list[bytes] = []
    size = 0
    for line in lines:
        if batch and (size + len(line) > BATCH_BYTES or len(batch) >= BATCH_EVENTS):
            yield batch
            batch, size = [], 0
        batch.append(line)
        size += len(line) + 1
    if batch:
        yield batch


def _count(answer: dict[str, Any], name: str) -> int:
    value = answer.get(name)
    return value if isinstance(value, int) and not isinstance(value, bool) and value >= 0 else 0


def _detail(response: httpx.Response) -> str:
    """The endpoint's own reason (FastAPI's ``detail``), short; never the request."""
    try:
        detail = orjson.loads(response.content).get("detail")
    except (orjson.JSONDecodeError, AttributeError):
        detail = None
    text = detail if isinstance(detail, str) else response.reason_phrase
    return text[:300]
