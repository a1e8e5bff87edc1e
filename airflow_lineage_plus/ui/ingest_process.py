"""The OpenLineage endpoint's writer process: checks and store writes out of the API server's process.

Checking an event (JSON, shape, budget, redaction) and writing it to the store is Python work that holds
the GIL. Done in threads of the API server's worker, it delays every other request of that worker (the
UI, the REST API, the execution API that tasks use) by up to the interpreter's switch interval at each
hand-over, which is what a flood of events made of Airflow's answers. So each API server worker runs
one child process of its own, ``python -m airflow_lineage_plus.ui.ingest_process``, at a lower CPU
priority (:data:`NICENESS`), and the endpoint only admits, authenticates and reads a request, hands its
body to the child, and answers with what the child says (:func:`airflow_lineage_plus.ui.ingest_work.
answer`: stored, refused, or the store unavailable).

* The child inherits the worker's environment (``AIRFLOW_HOME``, ``AIRFLOW__*``), so it reads the same
  ``[lineage_plus]`` configuration and store; it works ``[lineage_plus] collector_max_writes`` requests
  at once, in threads of its own.
* The two speak in frames over the child's stdin and stdout: a request is ``!QBI`` (request number,
  batch or not, body length) then the body; an answer is ``!QI`` (request number, length) then the
  answer's JSON. The worker's side reads and writes the pipes in two threads of its own, so the event
  loop never waits on a pipe.
* The child starts with the first request (an API server that never receives lineage never starts
  one) and exits when its stdin closes: when the worker exits, however it exits. When it dies, every
  request it held is answered 503 with ``Retry-After`` (:class:`~airflow_lineage_plus.exceptions.
  StoreUnavailable`), and the next request starts a new one (at most one start per
  :data:`RESTART_SECONDS`).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import queue
import struct
import subprocess
import sys
import threading
import time
from concurrent.futures import Future, ThreadPoolExecutor
from typing import IO

import orjson

from airflow_lineage_plus.exceptions import StoreUnavailable
from airflow_lineage_plus.ui.ingest_work import Answer

log = logging.getLogger(__name__)

#: the child's niceness: under load, the API server's own routes get the CPU first
NICENESS = 5
#: seconds between two starts of the child (a child that dies at once is not started in a loop)
RESTART_SECONDS = 1.0
#: seconds a request waits for its answer; a child that takes longer is taken for stuck, and killed
ANSWER_SECONDS = 120.0
_REQUEST = struct.Struct("!QBI")
_ANSWER = struct.Struct("!QI")


class IngestProcess:
    """The worker's side: :meth:`submit` a body, get its :data:`~airflow_lineage_plus.ui.ingest_work.
    Answer`; raises :class:`StoreUnavailable` when the child cannot be started or dies first."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._child: _Child | None = None
        self._started = 0.0
        self._number = 0

    async def submit(self, body: bytes, batch: bool) -> Answer:
        """The child's answer to one request's (inflated) body."""
        child, future = self._send(body, batch)
        try:
            return await asyncio.wait_for(asyncio.wrap_future(future), ANSWER_SECONDS)
        except asyncio.TimeoutError:  # not TimeoutError: Python 3.10's is another class
            child.kill(f"it did not answer a request in {ANSWER_SECONDS:.0f} s")
            raise StoreUnavailable("the endpoint's writer process did not answer in time") from None

    def _send(self, body: bytes, batch: bool) -> tuple[_Child, Future[Answer]]:
        with self._lock:
            child = self._child
            if child is None or not child.alive:
                child = self._child = self._start()
            self._number += 1
            return child, child.send(self._number, body, batch)

    def _start(self) -> _Child:
        if time.monotonic() - self._started < RESTART_SECONDS:
            raise StoreUnavailable("the OpenLineage endpoint's writer process exited; it restarts shortly")
        self._started = time.monotonic()
        try:
            return _Child()
        except OSError as exc:
            raise StoreUnavailable(f"the OpenLineage endpoint's writer process cannot start: {exc}") from None


class _Child:
    """One running child, its two pipe threads and the requests it has not answered yet."""

    def __init__(self) -> None:
        self.process = subprocess.Popen(
            [sys.executable, "-m", __name__],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            close_fds=True,
        )
        self.alive = True
        self.pending: dict[int, Future[Answer]] = {}
        self._lock = threading.Lock()
        self._outbox: queue.SimpleQueue[bytes | None] = queue.SimpleQueue()
        threading.Thread(target=self._write_frames, name="lineage-plus-ingest-send", daemon=True).start()
        threading.Thread(target=self._read_answers, name="lineage-plus-ingest-read", daemon=True).start()

    def send(self, number: int, body: bytes, batch: bool) -> Future[Answer]:
        future: Future[Answer] = Future()
        with self._lock:
            if not self.alive:
                raise StoreUnavailable("the OpenLineage endpoint's writer process exited")
            self.pending[number] = future
        self._outbox.put(_REQUEST.pack(number, int(batch), len(body)) + body)
        return future

    def _write_frames(self) -> None:
        stdin = self.process.stdin
        assert stdin is not None
        try:
            while (frame := self._outbox.get()) is not None:
                stdin.write(frame)
                stdin.flush()
        except (OSError, ValueError):
            self._died()

    def _read_answers(self) -> None:
        stdout = self.process.stdout
        assert stdout is not None
        try:
            while (head := _read_exactly(stdout, _ANSWER.size)) is not None:
                number, length = _ANSWER.unpack(head)
                payload = _read_exactly(stdout, length)
                if payload is None:
                    break
                with self._lock:
                    future = self.pending.pop(number, None)
                if future is not None:
                    future.set_result(orjson.loads(payload))
        except (OSError, ValueError):
            pass
        self._died()

    def kill(self, why: str) -> None:
        """Kill the child (its pending requests are answered 503 as it dies), saying why once."""
        if self.alive:
            log.warning("OpenLineage endpoint: killing the writer process %d: %s", self.process.pid, why)
            with contextlib.suppress(OSError):
                self.process.kill()

    def _died(self) -> None:
        with self._lock:
            if not self.alive:
                return
            self.alive = False
            pending, self.pending = self.pending, {}
        self._outbox.put(None)
        with contextlib.suppress(OSError, subprocess.TimeoutExpired):  # its pipes closed: it is going
            self.process.kill()
            self.process.wait(10)
        log.warning(
            "OpenLineage endpoint: the writer process exited (code %s); %d requests answered 503",
            self.process.returncode,
            len(pending),
        )
        for future in pending.values():
            future.set_exception(StoreUnavailable("the OpenLineage endpoint's writer process exited"))


def _read_exactly(stream: IO[bytes], size: int) -> bytes | None:
    """``size`` bytes of ``stream``; None at its end (a partial frame too)."""
    data = stream.read(size)
    return data if data is not None and len(data) == size else None


def main() -> None:
    """The child: answer each request frame on stdin with an answer frame on stdout, until stdin ends."""
    # The frames get the pipe on a descriptor of their own, and descriptor 1 becomes stderr before
    # anything is imported: a log handler bound to stdout (Airflow's console handler), a print or a C
    # library writing to descriptor 1 lands in stderr and can never break a frame.
    stdout = os.fdopen(os.dup(sys.stdout.fileno()), "wb")
    os.dup2(sys.stderr.fileno(), sys.stdout.fileno())
    sys.stdout.flush()  # what was printed before, to stderr too
    stdin = sys.stdin.buffer
    from airflow_lineage_plus import conf
    from airflow_lineage_plus.ui.ingest_work import StoreHolder, answer

    with contextlib.suppress(OSError):  # a platform without niceness: the same priority
        os.nice(NICENESS)
    holder = StoreHolder()
    lock = threading.Lock()

    def work(number: int, body: bytes, batch: bool) -> None:
        try:
            reply = orjson.dumps(answer(holder, body, batch))
        except Exception:  # answer() contains what it expects; anything else is still answered
            log.warning("OpenLineage endpoint: a request could not be worked", exc_info=True)
            reply = orjson.dumps({"error": "unavailable", "detail": "The request could not be worked"})
        with lock:
            stdout.write(_ANSWER.pack(number, len(reply)) + reply)
            stdout.flush()

    with ThreadPoolExecutor(conf.collector_max_writes(), thread_name_prefix="lineage-plus-ingest") as pool:
        while (head := _read_exactly(stdin, _REQUEST.size)) is not None:
            number, batch, length = _REQUEST.unpack(head)
            body = _read_exactly(stdin, length)
            if body is None:
                break
            pool.submit(work, number, body, bool(batch))


if __name__ == "__main__":
    main()
