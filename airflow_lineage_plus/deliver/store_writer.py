"""The transport's way into the lineage store: one store per process, a deadline, and the spool's flush.

:class:`StoreWriter` appends one event to the store (:class:`~airflow_lineage_plus.store.LineageStore`)
within ``timeout`` seconds: SQLite waits for its write lock at most that long (``busy_timeout``), any
other engine's call runs under :func:`~airflow_lineage_plus.containment.call_within`. It raises when the
event is not stored, and the transport then spools it. After a write that succeeds, a spool holding
events is flushed to the store in a daemon thread (one at a time per process, at most every
``FLUSH_EVERY`` seconds), so the task never waits for it; a flush a process exit cuts short leaves its
moved file for the next one, and a line stored twice is kept once.

Stores are kept per process (a forked child opens its own: database connections cannot cross a fork).
"""

from __future__ import annotations

import os
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import TypeVar

import sqlalchemy as sa

from airflow_lineage_plus.containment import call_within, report
from airflow_lineage_plus.exceptions import EventLostError
from airflow_lineage_plus.store import LineageStore, raw_event
from airflow_lineage_plus.store.spool import flush, pending_bytes

T = TypeVar("T")

#: seconds between two background flushes of the spool by one process
FLUSH_EVERY = 5.0

_stores: dict[tuple[str, int, float], LineageStore] = {}
_stores_lock = threading.Lock()


class StoreWriter:
    """Appends events to the store at ``url`` within ``timeout`` seconds; flushes ``spool`` after."""

    def __init__(self, url: str, spool: Path, *, timeout: float, file_mode: int, dir_mode: int) -> None:
        self.url = url
        self.where = sa.make_url(url).render_as_string(hide_password=True)
        self.spool = spool
        self.timeout = timeout
        self.file_mode = file_mode
        self.dir_mode = dir_mode
        self._flushing = threading.Lock()
        self._last_flush = -FLUSH_EVERY
        self._leftovers_checked = False

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
        self._flush_later(store)

    def _within(self, call: Callable[[], T]) -> T:
        if self.url.startswith("sqlite"):
            return call()  # SQLite's busy_timeout is the deadline
        return call_within(self.timeout, f"the lineage store {self.where}", call)

    def _flush_later(self, store: LineageStore) -> None:
        """Start a background flush when the spool holds events (or a failed flush left some)."""
        now = time.monotonic()
        if now - self._last_flush < FLUSH_EVERY:
            return
        try:
            waiting = os.stat(self.spool).st_size > 0
        except OSError:
            waiting = False
        if not waiting and not self._leftovers_checked:
            self._leftovers_checked = True
            waiting = pending_bytes(self.spool) > 0
        if not waiting or not self._flushing.acquire(blocking=False):
            return
        self._last_flush = now
        threading.Thread(target=self._flush, args=(store,), name="lineage-plus-flush", daemon=True).start()

    def _flush(self, store: LineageStore) -> None:
        try:
            flush(store, self.spool)
        except Exception as exc:  # the spool stays; the next flush tries again
            report(
                f"the flush of the spool {self.spool} to the lineage store (its events stay there)",
                EventLostError(f"{type(exc).__name__}: {exc}"),
            )
        finally:
            self._flushing.release()


def close_stores() -> None:
    """Close every store this process opened (tests; a process exit closes them anyway)."""
    with _stores_lock:
        stores = [s for (_, pid, _), s in _stores.items() if pid == os.getpid()]
        _stores.clear()
    for store in stores:
        store.close()
