"""Bounds for timed asserts: a documented deadline, plus a margin derived from it and from a baseline
measured in the same run (the same operation without the wait), never a constant from another run.

On two shared cores a thread can wait its turn for a while; what it waits is the same for the baseline
taken a moment before, so the margin scales with it: ``bound = deadline + deadline + factor * baseline``
(one more deadline: work queued behind the first at most waits that long again).
"""

from __future__ import annotations

import contextlib
import time
from collections.abc import Callable
from typing import Any


def seconds(call: Callable[[], Any]) -> float:
    """Wall time of one call (exceptions included: the time until it raised)."""
    began = time.monotonic()
    with contextlib.suppress(Exception):  # timed either way; the caller asserts what was raised
        call()
    return time.monotonic() - began


def baseline(call: Callable[[], Any], runs: int = 3) -> float:
    """The slowest of a few runs of ``call`` now: what this machine adds to the operation at the moment."""
    return max(seconds(call) for _ in range(runs))


def bound(deadline: float, measured_baseline: float, factor: float = 5.0) -> float:
    """The most a deadline-bounded operation may take here: see the module docstring."""
    return 2 * deadline + factor * measured_baseline
