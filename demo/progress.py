"""Progress lines for the demo: ``[2/8] starting local S3 endpoint ... done (0.8s)``."""

from __future__ import annotations

import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager


class Progress:
    """Numbered steps, each printed when it starts and finished with its outcome and duration."""

    def __init__(self, total: int) -> None:
        self.total = total
        self.number = 0

    @contextmanager
    def step(self, title: str) -> Iterator[StepOutcome]:
        self.number += 1
        print(f"[{self.number}/{self.total}] {title} ...", end=" ", flush=True)
        outcome = StepOutcome()
        started = time.monotonic()
        try:
            yield outcome
        except BaseException:
            print(f"FAILED ({time.monotonic() - started:.1f}s)", flush=True)
            raise
        print(f"{outcome.text} ({time.monotonic() - started:.1f}s)", flush=True)
        for line in outcome.details:
            print(f"      {line}", flush=True)


class StepOutcome:
    """What a step reports when it ends: ``done`` unless it says otherwise, plus detail lines."""

    def __init__(self) -> None:
        self.text = "done"
        self.details: list[str] = []

    def detail(self, line: str) -> None:
        self.details.append(line)


def fail(message: str) -> None:
    print(f"\nerror: {message}", file=sys.stderr, flush=True)
