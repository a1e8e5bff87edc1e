"""The view's own threads: a bounded number of questions at a time, each within its deadline."""

from __future__ import annotations

import asyncio
import threading
import time

import pytest

from airflow_lineage_plus.exceptions import DeadlineExceeded
from airflow_lineage_plus.ui.pool import QueryPool
from tests.support import timing
from tests.support.run_report import SHARED_RECORDINGS

# one xdist group with the other tests of the Lineage view (tests/support/run_report.py)
pytestmark = pytest.mark.xdist_group(SHARED_RECORDINGS)


def test_a_question_past_its_deadline_is_given_up_and_keeps_its_slot_until_it_ends() -> None:
    pool = QueryPool(2)
    release = threading.Event()
    quick = timing.baseline(lambda: asyncio.run(pool.run(lambda: None, time.monotonic() + 5)))
    began = time.monotonic()
    with pytest.raises(DeadlineExceeded):
        asyncio.run(pool.run(lambda: release.wait(30), time.monotonic() + 0.3))
    took = time.monotonic() - began
    assert 0.3 <= took <= timing.bound(0.3, quick), (
        f"{took:.2f} s for a 0.3 s deadline (baseline {quick:.3f} s)"
    )
    assert pool.busy == 1  # the thread goes on; its slot is not given to another question yet
    release.set()
    deadline = time.monotonic() + 10
    while pool.busy and time.monotonic() < deadline:
        time.sleep(0.01)
    assert pool.busy == 0


def test_no_more_questions_run_at_once_than_the_pool_has_slots() -> None:
    pool = QueryPool(2)
    running, most = [0], [0]
    lock = threading.Lock()

    def question(n: int) -> int:
        with lock:
            running[0] += 1
            most[0] = max(most[0], running[0])
        time.sleep(0.2)
        with lock:
            running[0] -= 1
        return n

    async def ask_all() -> list[int]:
        deadline = time.monotonic() + 20
        return list(await asyncio.gather(*(pool.run(lambda n=n: question(n), deadline) for n in range(6))))

    assert asyncio.run(ask_all()) == list(range(6))
    assert most[0] == 2


def test_a_full_pool_answers_deadline_exceeded_instead_of_queueing_for_ever() -> None:
    pool = QueryPool(1)
    release = threading.Event()

    async def two() -> None:
        first = asyncio.ensure_future(pool.run(lambda: release.wait(30), time.monotonic() + 5))
        await asyncio.sleep(0.05)
        with pytest.raises(DeadlineExceeded, match="stayed busy"):
            await pool.run(lambda: None, time.monotonic() + 0.2)
        release.set()
        await first

    asyncio.run(two())


def test_what_the_question_raises_reaches_the_request() -> None:
    def broken() -> None:
        raise KeyError("boom")

    with pytest.raises(KeyError, match="boom"):
        asyncio.run(QueryPool(1).run(broken, time.monotonic() + 5))
