"""The transport's way into the lineage store: one store per process, a deadline, and the spool's flush.

:class:`StoreWriter` appends one event to the store (:class:`~airflow_lineage_plus.store.LineageStore`)
within ``timeout`` seconds: SQLite waits for its write lock at most that long (``busy_timeout``), any
other engine's call runs under :func:`~airflow_lineage_plus.containment.call_within`. It raises when the
event is not stored, and the transport then spools it. After a write that succeeds, a spool holding
events is flushed to the store in a daemon thread (:mod:`.background_flush`), so the task never waits
for it; after an event was spooled, a retry process of its own flushes it once the store takes writes
again (:mod:`.spool_retry`).

Stores are kept per process (a forked child opens its own: database connections cannot cross a fork).
"""

from __future__ import annotations

import os
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

import sqlalchemy as sa

from airflow_lineage_plus.containment import call_within
from airflow_lineage_plus.deliver.background_flush import BackgroundFlush
from airflow_lineage_plus.store import LineageStore, raw_event

T = TypeVar("T")

_stores: dict[tuple[str, int, float], LineageStore] = {}
_stores_lock = threading.Lock()


class StoreWriter:
    """Appends events to the store at ``url`` within ``timeout`` seconds; flushes ``spool`` after."""

    #: what the transport's warnings call it
    what = "lineage store"

    def __init__(self, url: str, spool: Path, *, timeout: float, file_mode: int, dir_mode: int) -> None:
        self.url = url
        self.where = sa.make_url(url).render_as_string(hide_password=True)
        self.spool = spool
        self.timeout = timeout
        self.file_mode = file_mode
        self.dir_mode = dir_mode
        self.flusher = BackgroundFlush(spool, f"the {self.what}")

    def store(self) -> LineageStore:
        """This process's store for the URL (opened, and created on first use, within the deadline)."""
        key = (self.url, os.getpid(), self.timeout)
        with _stores_lock:
            store = _stores.get(key)
        if store is not None:
            return store
        store = self._within(
            lambda: LineageStore(
                self.url, file_mode=self.file_mode, dir_mode=self.dir_mode, busy_timeout=self.timeout
            )
        )
        with _stores_lock:
            return _stores.setdefault(key, store)

    def write(self, line: bytes) -> None:
        """Store one event (its JSON line, no newline); raises when it is not stored in time."""
        event = raw_event(line)
        store = self.store()
        self._within(lambda: store.add(event))
        self.flusher.after_write(store)

    def retry_destination(self) -> dict[str, Any]:
        """This store for the spool's retry process (:mod:`.spool_retry`), which appends the spool to it
        as soon as it takes writes (the URL goes to that process on its standard input)."""
        return {
            "store_url": self.url,
            "timeout": self.timeout,
            "file_mode": self.file_mode,
            "dir_mode": self.dir_mode,
        }

    def _within(self, call: Callable[[], T]) -> T:
        if self.url.startswith("sqlite"):
            return call()  # SQLite's busy_timeout is the deadline
        return call_within(self.timeout, f"the lineage store {self.where}", call)


def close_stores() -> None:
    """Close every store this process opened (tests; a process exit closes them anyway)."""
    with _stores_lock:
        stores = [s for (_, pid, _), s in _stores.items() if pid == os.getpid()]
        _stores.clear()
    for store in stores:
        store.close()
