"""The OpenLineage endpoint's admission: a bounded queue of pending events, worked by threads of its own.

Every request to the endpoint takes a :class:`Ticket` before anything else is done for it, and holds it
until it is answered: while it is authenticated, while its body is read, while its events are checked and
while they wait for, then go into, the lineage store. The queue counts *events*: a request counts as one
until its body is parsed, then as the number of events it carries. When the queue already holds
``capacity`` events (``[lineage_plus] collector_queue_size``), a new request is answered 429 with
``Retry-After`` at once, and a request whose events would take the queue past ``capacity`` is too (a
request alone in the queue is admitted whatever its size, or it could never be written). So a producer
that floods the endpoint with many requests in flight gets 429s, and memory and waiting stay bounded.

The blocking work left in the API server (the ingest key's lookup and the auth manager's check) runs in
at most ``workers`` threads at a time (``[lineage_plus] collector_max_writes``), under a limiter of the
queue's own: never on the event loop, and never in the thread pool Airflow's own routes share (AnyIO's
default limiter), so the UI, the REST API and the execution API keep answering whatever producers send.
Checking and storing the events happens in the writer process (:mod:`.ingest_process`). Requests waiting
for a thread wait in order (the limiter is fair) as coroutines. Everything here but
:meth:`IngestQueue.run`'s thread work happens on the event loop, so the counts need no lock.
"""

from __future__ import annotations

from collections.abc import Callable
from functools import partial
from typing import TypeVar

import anyio
from fastapi import HTTPException, status

T = TypeVar("T")

#: seconds a 429 or 503 asks the producer to wait
RETRY_AFTER = "1"


def overloaded(why: str) -> HTTPException:
    """The endpoint's 429, with ``Retry-After``."""
    return HTTPException(status.HTTP_429_TOO_MANY_REQUESTS, why, headers={"Retry-After": RETRY_AFTER})


class IngestQueue:
    """At most ``capacity`` events pending at once; their blocking work in at most ``workers`` threads."""

    def __init__(self, capacity: int, workers: int) -> None:
        self.capacity = max(1, capacity)
        self.workers = max(1, workers)
        self.pending = 0  # events held by tickets (requests not answered yet)
        self.refused = 0  # requests answered 429 since the start (the log and the tests)
        self._limiter: anyio.CapacityLimiter | None = None

    def admit(self) -> Ticket:
        """A ticket for one request, counted as one event; 429 when the queue is full."""
        if self.pending >= self.capacity:
            self.refused += 1
            raise overloaded(
                f"The lineage endpoint's queue holds {self.pending} events (at most {self.capacity}); "
                "retry later"
            )
        self.pending += 1
        return Ticket(self)

    async def run(self, func: Callable[..., T], *args: object) -> T:
        """``func(*args)`` in one of the queue's threads, waiting in order for one to be free."""
        if self._limiter is None:
            self._limiter = anyio.CapacityLimiter(self.workers)
        return await anyio.to_thread.run_sync(partial(func, *args), limiter=self._limiter)


class Ticket:
    """One request's place in the queue: ``size`` events, given back by :meth:`release`."""

    def __init__(self, queue: IngestQueue) -> None:
        self.queue = queue
        self.size = 1

    def resize(self, events: int) -> None:
        """Count the request as ``events`` events (at least one); 429 when the growth would take the queue
        past its capacity while other requests are in it (the ticket keeps its old size)."""
        queue, wanted = self.queue, max(1, events)
        grow = wanted - self.size
        if grow > 0 and queue.pending + grow > queue.capacity and queue.pending > self.size:
            queue.refused += 1
            raise overloaded(
                f"The lineage endpoint's queue cannot take {wanted} more events now (at most "
                f"{queue.capacity} pending); retry later"
            )
        queue.pending += grow
        self.size = wanted

    def release(self) -> None:
        self.queue.pending -= self.size
        self.size = 0
