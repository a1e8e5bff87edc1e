"""Progress of long work (``import`` into the lineage store, ``replay``, ``publish-static``, ``diff``): a
``rich`` progress bar on a terminal, nothing at all otherwise.

The bar goes to stderr (stdout keeps the answer, so ``lineage-plus ... > out.json`` stays clean) and
only when stderr is an interactive terminal: not in a pipe, a file, a dumb terminal (``TERM=dumb``) or
CI (``CI`` set). It shows what is counted (events, bytes, DAG files, steps), done of total, and the time
remaining; it is removed when the work ends. Usage::

    with progress("replaying events", total=len(events)) as bar:
        for event in events:
            send(event)
            bar.advance()
"""

from __future__ import annotations

import os
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from typing import IO, Any

#: what a bar can count; ``bytes`` shows sizes (KiB, MiB), the others counts
UNITS = ("events", "bytes", "files", "steps", "runs")


class Tracker:
    """Where long work has got to; does nothing unless a bar is shown."""

    def __init__(self, bar: Any = None, task: Any = None) -> None:
        self._bar, self._task = bar, task

    @property
    def shown(self) -> bool:
        return self._bar is not None

    def advance(self, amount: float = 1) -> None:
        if self._bar is not None:
            self._bar.advance(self._task, amount)

    def update(self, *, completed: float | None = None, total: float | None = None, what: str = "") -> None:
        """Set how much is done, the total (when it becomes known) or what is being done now."""
        if self._bar is not None:
            fields: dict[str, Any] = {"completed": completed, "total": total}
            if what:
                fields["description"] = what
            self._bar.update(self._task, **{k: v for k, v in fields.items() if v is not None})


def interactive(stream: IO[str] | None = None) -> bool:
    """Whether ``stream`` (default: stderr) is a terminal a person watches."""
    stream = stream if stream is not None else sys.stderr
    if os.environ.get("CI") or os.environ.get("TERM") == "dumb":
        return False
    try:
        return stream.isatty()
    except (AttributeError, ValueError):  # a closed or replaced stream
        return False


@contextmanager
def progress(
    description: str, total: float | None = None, *, unit: str = "events", stream: IO[str] | None = None
) -> Iterator[Tracker]:
    """A bar for ``description`` while the block runs, on a terminal; ``total`` None: not known yet."""
    if unit not in UNITS:
        raise ValueError(f"unit {unit!r} is not one of {UNITS}")
    stream = stream if stream is not None else sys.stderr
    if not interactive(stream):
        yield Tracker()
        return
    from rich.console import Console
    from rich.progress import (
        BarColumn,
        DownloadColumn,
        MofNCompleteColumn,
        Progress,
        TextColumn,
        TimeRemainingColumn,
    )

    count = DownloadColumn() if unit == "bytes" else MofNCompleteColumn()
    columns = [TextColumn("{task.description}"), BarColumn(), count]
    if unit != "bytes":
        columns.append(TextColumn(unit))
    columns += [TextColumn("eta"), TimeRemainingColumn()]
    with Progress(*columns, console=Console(file=stream), transient=True) as bar:
        yield Tracker(bar, bar.add_task(description, total=total))
