"""The Lineage view's own threads: a bounded number of questions at a time, each within a deadline.

Airflow's API server answers its own routes (the DAG list, the grid, task logs...) from one event loop
and one shared thread pool. A lineage question can block (a Marquez that does not answer, a large event
log being read), so none runs there: every route of the view is ``async`` and hands its blocking work to
:class:`QueryPool`, which runs it in a thread of its own, at most ``size`` at a time.

The route waits for the answer until the request's deadline (``[lineage_plus] ui_request_timeout``), then
answers 503 and goes on serving; the thread finishes (or times out on its own, Marquez calls have
``marquez_timeout``) in the background and keeps its slot until then, so a stuck source costs at most
``size`` threads, never the API server's. A request that finds every slot taken waits for one within the
same deadline.
"""

from __future__ import annotations

import asyncio
import contextlib
import threading
import time
from collections.abc import Callable
from typing import Any, TypeVar

from airflow_lineage_plus.exceptions import DeadlineExceeded

T = TypeVar("T")

#: how often a request that found every slot taken looks again
_SLOT_POLL_SECONDS = 0.02


class QueryPool:
    """At most ``size`` blocking calls at a time, each in a daemon thread of its own."""

    def __init__(self, size: int) -> None:
        self.size = size
        self._slots = threading.BoundedSemaphore(size)
        self.busy = 0  # threads running now (for tests and the log)
        self._count = threading.Lock()

    async def run(self, func: Callable[[], T], deadline: float, what: str = "lineage question") -> T:
        """``func()`` in one of the pool's threads; DeadlineExceeded past ``deadline`` (monotonic time)."""
        while not self._slots.acquire(blocking=False):
            if time.monotonic() >= deadline:
                raise DeadlineExceeded(
                    f"{what}: all {self.size} lineage threads stayed busy until the deadline"
                )
            await asyncio.sleep(_SLOT_POLL_SECONDS)
        loop = asyncio.get_running_loop()
        future: asyncio.Future[Any] = loop.create_future()
        thread = threading.Thread(
            target=self._work, args=(func, loop, future), name="lineage-plus-query", daemon=True
        )
        with self._count:
            self.busy += 1
        try:
            thread.start()
        except BaseException:
            self._release()
            raise
        try:
            result: T = await asyncio.wait_for(asyncio.shield(future), max(0.0, deadline - time.monotonic()))
        except asyncio.TimeoutError:
            future.add_done_callback(_collect)  # its late outcome is dropped without an asyncio warning
            raise DeadlineExceeded(f"{what}: no answer before the deadline") from None
        return result

    def _work(
        self, func: Callable[[], Any], loop: asyncio.AbstractEventLoop, future: asyncio.Future[Any]
    ) -> None:
        try:
            outcome: tuple[bool, Any] = (True, func())
        except BaseException as error:  # handed to the waiting request, raised there
            outcome = (False, error)
        finally:
            self._release()
        with contextlib.suppress(RuntimeError):  # the event loop is gone (shutting down): nobody waits
            loop.call_soon_threadsafe(_settle, future, outcome)

    def _release(self) -> None:
        with self._count:
            self.busy -= 1
        self._slots.release()


def _collect(future: asyncio.Future[Any]) -> None:
    if not future.cancelled():
        future.exception()


def _settle(future: asyncio.Future[Any], outcome: tuple[bool, Any]) -> None:
    if future.done():  # the request gave up at its deadline
        return
    ok, value = outcome
    if ok:
        future.set_result(value)
    else:
        future.set_exception(value)
