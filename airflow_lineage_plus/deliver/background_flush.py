"""The spool's flush after a write that succeeded: in a daemon thread, one at a time, never in the task.

A transport destination (:class:`~.store_writer.StoreWriter`, :class:`~.collector_writer.CollectorWriter`)
calls :meth:`BackgroundFlush.after_write` once an event reached it. When the spool holds events (or a
flush cut short left a moved file), a daemon thread sends them to the same place
(:func:`airflow_lineage_plus.store.spool.flush`), at most every :data:`FLUSH_EVERY` seconds per process; a
flush a process exit cuts short leaves its moved file for the next one, and an event sent twice is kept
once (the store keeps each event's bytes once).
"""

from __future__ import annotations

import os
import threading
import time
from pathlib import Path

from airflow_lineage_plus.containment import report
from airflow_lineage_plus.exceptions import EventLostError
from airflow_lineage_plus.store.spool import Sink, flush, pending_bytes

#: seconds between two background flushes of the spool by one process
FLUSH_EVERY = 5.0


class BackgroundFlush:
    """Flushes ``spool`` to a sink in the background after writes that succeeded."""

    def __init__(self, spool: Path, describe: str) -> None:
        """``describe``: the sink, for the one warning a failed flush logs (``the lineage store``)."""
        self.spool = spool
        self.describe = describe
        self._flushing = threading.Lock()
        self._last_flush = -FLUSH_EVERY
        self._leftovers_checked = False

    def after_write(self, sink: Sink) -> None:
        """Start a flush to ``sink`` when the spool holds events (or a failed flush left some)."""
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
        threading.Thread(target=self._flush, args=(sink,), name="lineage-plus-flush", daemon=True).start()

    def _flush(self, sink: Sink) -> None:
        try:
            flush(sink, self.spool)
        except Exception as exc:  # the spool stays; the next flush tries again
            report(
                f"the flush of the spool {self.spool} to {self.describe} (its events stay there)",
                EventLostError(f"{type(exc).__name__}: {exc}"),
            )
        finally:
            self._flushing.release()
