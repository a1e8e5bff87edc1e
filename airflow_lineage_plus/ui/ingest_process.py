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
  ``[lineage_plus]`` configuration and store. It works the requests in groups, one thread: every request
  that arrived while it wrote the last group is checked, then all their events go into the store in one
  transaction (group commit: one commit for many requests, instead of one each).
* The two speak in frames over the child's stdin and stdout: a request is ``!QBI`` (request number,
  batch or not, body length) then the body; an answer is ``!QI`` (request number, length) then the
  answer's JSON. The worker's event loop watches both pipes, non-blocking: it never waits on a pipe, and
  no thread of the worker hands frames over (a hand-over between threads costs the event loop the GIL).
* The child starts with the first request (an API server that never receives lineage never starts
  one) and exits when its stdin closes: when the worker exits, however it exits. When it dies, every
  request it held is answered 503 with ``Retry-After`` (:class:`~airflow_lineage_plus.exceptions.
  StoreUnavailable`), and the next request starts a new one (at most one start per
  :data:`RESTART_SECONDS`).
"""

from __future__ import annotations

import asyncio
import collections
import contextlib
import logging
import os
import select
import struct
import subprocess
import sys
import threading
import time

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
#: bytes read from a pipe at once
READ_BYTES = 1 << 20
#: a group of requests the child works together holds frames of at most this many bytes (one frame
#: whatever its size)
GROUP_BYTES = 4 << 20
_REQUEST = struct.Struct("!QBI")
_ANSWER = struct.Struct("!QI")


class IngestProcess:
    """The worker's side: :meth:`submit` a body, get its :data:`~airflow_lineage_plus.ui.ingest_work.
    Answer`; raises :class:`StoreUnavailable` when the child cannot be started or dies first."""

    def __init__(self) -> None:
        self._child: _Child | None = None
        self._started = 0.0
        self._number = 0

    async def submit(self, body: bytes, batch: bool) -> Answer:
        """The child's answer to one request's (inflated) body."""
        loop = asyncio.get_running_loop()
        child = self._child
        if child is None or not child.alive or child.loop is not loop:
            if child is not None:  # another event loop's (a test client's): its pipes are that loop's
                child.kill("its event loop is not the API server's any more")
            child = self._child = self._start(loop)
        self._number += 1
        future = child.send(self._number, body, batch)
        try:
            return await asyncio.wait_for(future, ANSWER_SECONDS)
        except asyncio.TimeoutError:  # not TimeoutError: Python 3.10's is another class
            child.kill(f"it did not answer a request in {ANSWER_SECONDS:.0f} s")
            raise StoreUnavailable("the endpoint's writer process did not answer in time") from None

    def _start(self, loop: asyncio.AbstractEventLoop) -> _Child:
        if time.monotonic() - self._started < RESTART_SECONDS:
            raise StoreUnavailable("the OpenLineage endpoint's writer process exited; it restarts shortly")
        self._started = time.monotonic()
        try:
            return _Child(loop)
        except OSError as exc:
            raise StoreUnavailable(f"the OpenLineage endpoint's writer process cannot start: {exc}") from None


class _Child:
    """One running child, its pipes watched by the worker's event loop, and the requests it has not
    answered yet. The pipes are non-blocking: a frame the pipe cannot take now waits in :attr:`_outbox`
    until the loop says the pipe can take more, and answers are read when the loop says they are there,
    so the loop never waits on the child and no thread hands a request or an answer over."""

    def __init__(self, loop: asyncio.AbstractEventLoop) -> None:
        self.loop = loop
        self.process = subprocess.Popen(
            [sys.executable, "-m", __name__],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            close_fds=True,
        )
        assert self.process.stdin is not None and self.process.stdout is not None
        self._stdin, self._stdout = self.process.stdin.fileno(), self.process.stdout.fileno()
        os.set_blocking(self._stdin, False)
        os.set_blocking(self._stdout, False)
        self.alive = True
        self.pending: dict[int, asyncio.Future[Answer]] = {}
        self._outbox: collections.deque[memoryview] = collections.deque()
        self._inbox = bytearray()
        loop.add_reader(self._stdout, self._read_answers)

    def send(self, number: int, body: bytes, batch: bool) -> asyncio.Future[Answer]:
        if not self.alive:
            raise StoreUnavailable("the OpenLineage endpoint's writer process exited")
        future: asyncio.Future[Answer] = self.loop.create_future()
        self.pending[number] = future
        queued = bool(self._outbox)
        self._outbox.append(memoryview(_REQUEST.pack(number, int(batch), len(body)) + body))
        if not queued:
            self._write_frames()
        return future

    def _write_frames(self) -> None:
        """What the pipe takes now of the frames waiting; the rest when the loop says it takes more."""
        while self._outbox:
            try:
                written = os.write(self._stdin, self._outbox[0])
            except BlockingIOError:
                break
            except OSError:
                self._died()
                return
            if written < len(self._outbox[0]):
                self._outbox[0] = self._outbox[0][written:]
                break
            self._outbox.popleft()
        if self._outbox:
            self.loop.add_writer(self._stdin, self._write_frames)
        else:
            self.loop.remove_writer(self._stdin)

    def _read_answers(self) -> None:
        try:
            data = os.read(self._stdout, READ_BYTES)
        except BlockingIOError:
            return
        except OSError:
            data = b""
        if not data:
            self._died()
            return
        self._inbox += data
        at = 0
        while len(self._inbox) - at >= _ANSWER.size:
            number, length = _ANSWER.unpack_from(self._inbox, at)
            end = at + _ANSWER.size + length
            if end > len(self._inbox):
                break
            future = self.pending.pop(number, None)
            if future is not None and not future.done():
                future.set_result(orjson.loads(self._inbox[at + _ANSWER.size : end]))
            at = end
        del self._inbox[:at]

    def kill(self, why: str) -> None:
        """Kill the child (its pending requests are answered 503 as it dies), saying why once."""
        if self.alive:
            log.warning("OpenLineage endpoint: killing the writer process %d: %s", self.process.pid, why)
            with contextlib.suppress(OSError):
                self.process.kill()
            self._died()

    def _died(self) -> None:
        if not self.alive:
            return
        self.alive = False
        pending, self.pending = self.pending, {}
        with contextlib.suppress(Exception):  # a loop already closed has no watchers left to remove
            self.loop.remove_reader(self._stdout)
            self.loop.remove_writer(self._stdin)
        with contextlib.suppress(OSError):  # its pipes closed: it is going
            self.process.kill()
        for stream in (self.process.stdin, self.process.stdout):
            with contextlib.suppress(OSError):
                if stream is not None:
                    stream.close()
        # reaped by a thread of its own: a child stuck in the kernel never holds the event loop
        threading.Thread(target=self._reap, name="lineage-plus-ingest-reap", daemon=True).start()
        for future in pending.values():
            if not future.done():
                future.set_exception(StoreUnavailable("the OpenLineage endpoint's writer process exited"))

    def _reap(self) -> None:
        with contextlib.suppress(OSError, subprocess.TimeoutExpired):
            self.process.wait(60)
        log.warning("OpenLineage endpoint: the writer process exited (code %s)", self.process.returncode)


class _Frames:
    """The request frames of a pipe, read in groups: all the complete frames that have arrived."""

    def __init__(self, fd: int) -> None:
        self.fd = fd
        self.buffer = bytearray()
        self.ended = False

    def _read(self) -> None:
        data = os.read(self.fd, READ_BYTES)
        if data:
            self.buffer += data
        else:
            self.ended = True

    def _complete(self) -> int:
        """Bytes of the buffer's leading complete frames (whole frames only, up to :data:`GROUP_BYTES`,
        at least one)."""
        at = 0
        while len(self.buffer) - at >= _REQUEST.size:
            _, _, length = _REQUEST.unpack_from(self.buffer, at)
            end = at + _REQUEST.size + length
            if end > len(self.buffer) or (at and end > GROUP_BYTES):
                break
            at = end
        return at

    def group(self) -> list[tuple[int, bool, bytes]] | None:
        """The next group: waits for one complete frame, and takes every other one already sent (up to
        :data:`GROUP_BYTES`); None once the pipe has ended (a partial frame at its end is dropped)."""
        while not self._complete() and not self.ended:
            self._read()
        if not self._complete():
            return None
        if not self.ended and select.select([self.fd], [], [], 0)[0]:
            self._read()
        end = self._complete()
        view, frames, at = bytes(self.buffer[:end]), [], 0
        del self.buffer[:end]
        while at < end:
            number, batch, length = _REQUEST.unpack_from(view, at)
            at += _REQUEST.size
            frames.append((number, bool(batch), view[at : at + length]))
            at += length
        return frames


def main() -> None:
    """The child: answer the request frames on stdin, a group at a time (:func:`ingest_work.answer`),
    with answer frames on stdout, until stdin ends."""
    # The frames get the pipe on a descriptor of their own, and descriptor 1 becomes stderr before
    # anything is imported: a log handler bound to stdout (Airflow's console handler), a print or a C
    # library writing to descriptor 1 lands in stderr and can never break a frame.
    stdout = os.fdopen(os.dup(sys.stdout.fileno()), "wb")
    os.dup2(sys.stderr.fileno(), sys.stdout.fileno())
    sys.stdout.flush()  # what was printed before, to stderr too
    from airflow_lineage_plus.ui.ingest_work import StoreHolder, answer

    with contextlib.suppress(OSError):  # a platform without niceness: the same priority
        os.nice(NICENESS)
    holder = StoreHolder()
    frames = _Frames(sys.stdin.fileno())
    while (group := frames.group()) is not None:
        try:
            replies = [
                orjson.dumps(reply) for reply in answer(holder, [(body, batch) for _, batch, body in group])
            ]
        except Exception:  # answer() contains what it expects; anything else is still answered
            log.warning("OpenLineage endpoint: requests could not be worked", exc_info=True)
            replies = [
                orjson.dumps({"error": "unavailable", "detail": "The request could not be worked"})
            ] * len(group)
        stdout.write(
            b"".join(
                _ANSWER.pack(number, len(reply)) + reply
                for (number, _, _), reply in zip(group, replies, strict=True)
            )
        )
        stdout.flush()


if __name__ == "__main__":
    main()
