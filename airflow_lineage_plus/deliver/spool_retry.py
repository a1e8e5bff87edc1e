"""The spool's timed retry: a process of its own sends the spool on until it is empty, so events spooled
while the API server (or the store) was down arrive soon after it is back, even if no event follows.

Task processes are short-lived: a thread of theirs would die with the task. So when the transport spools
an event, :func:`start` starts one background process per spool (``python -m
airflow_lineage_plus.deliver.spool_retry``, a session of its own, so it outlives the task and its process
group), unless one runs already (it holds an exclusive ``flock`` on ``<spool>.retry-lock`` while it lives;
:func:`start` takes it and hands it over, so a burst of spooled events starts one). It tries to flush the
spool to the same destination after :data:`RETRY_FIRST` seconds, then doubles the wait up to
:data:`RETRY_MAX`; so events reach the destination at most :data:`RETRY_MAX` seconds (plus the flush)
after it answers again. It exits once nothing waits in the spool, or after ``[lineage_plus]
spool_retry_seconds`` (then the next event that gets through, the next spooled event, or ``lineage-plus
replay`` sends the spool). The task never waits for any of this: starting the process costs a
``fork``/``exec``, once per outage and spool.

A ``deferred`` transport spools every event and starts the process the same way; that process, once the
spool is sent, waits :data:`LINGER_SECONDS` for the next event before it exits, so a busy machine's
events go on in batches through one process.

The destination's credential (the ingest key, or a store URL with its password) goes to the process on
its standard input, never on its command line or in its environment. Nothing here imports Airflow in the
retry process. A spool on a machine that is itself discarded when the task ends (a Kubernetes pod)
keeps its events only as long as that machine: docs/collector.md says so.
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import os
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

from airflow_lineage_plus.store.database import AppendResult
from airflow_lineage_plus.store.spool import Sink, flush, pending_bytes

#: seconds before the first try, doubled after each failed one ...
RETRY_FIRST = 1.0
#: a process started for a ``deferred`` transport waits this long after sending the spool for the next
#: event, looking at the spool every :data:`POLL_SECONDS` (one process for a busy machine's events, not one
#: per event)
LINGER_SECONDS = 60.0
POLL_SECONDS = 0.2
#: ... up to this
RETRY_MAX = 15.0
LOCK_SUFFIX = ".retry-lock"


def lock_path(spool: Path) -> Path:
    return spool.with_name(spool.name + LOCK_SUFFIX)


def _take_lock(spool: Path, tries: int = 1) -> int | None:
    """The retry lock's descriptor, held; None when another process held it at each of ``tries`` tries
    (50 ms apart: :func:`running` holds it for a moment, a retry process for its life)."""
    fd = os.open(lock_path(spool), os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o600)
    for attempt in range(tries):
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            return fd
        except BlockingIOError:
            if attempt + 1 < tries:
                time.sleep(0.05)
    os.close(fd)
    return None


def running(spool: Path) -> bool:
    """Whether a retry process holds the lock of ``spool`` now."""
    try:
        fd = _take_lock(spool)
    except OSError:
        return False
    if fd is None:
        return True
    os.close(fd)
    return False


def lifetime() -> float:
    """``[lineage_plus] spool_retry_seconds`` (its default for the client used without Airflow)."""
    from airflow_lineage_plus import conf
    from airflow_lineage_plus.provider_info import OPTIONS

    try:
        return conf.spool_retry_seconds()
    except ImportError:
        return float(OPTIONS["spool_retry_seconds"]["default"])


def start(
    spool: Path, destination: dict[str, Any], seconds: float | None = None, linger: float = 0.0
) -> bool:
    """Start the retry process of ``spool`` for ``seconds`` (default :func:`lifetime`) unless one runs or
    that is 0; whether one started. ``destination``: ``{"collector_url", "timeout"}`` and ``"key"`` when
    known (else the process reads the connection), or ``{"store_url", "timeout"}``. ``linger``: seconds
    the process waits for more events once the spool is sent (a ``deferred`` transport's)."""
    seconds = lifetime() if seconds is None else seconds
    if seconds <= 0:
        return False
    # the lock is taken here and handed to the process (the same open file, so the same flock): events
    # spooled while it starts find it taken, and start no second process
    fd = _take_lock(spool)
    if fd is None:
        return False
    if linger > 0:
        destination = {**destination, "linger": linger}
    try:
        process = subprocess.Popen(
            [sys.executable, "-m", __name__, str(spool), str(seconds), str(fd)],
            stdin=subprocess.PIPE,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            start_new_session=True,
            close_fds=True,
            pass_fds=(fd,),
            cwd="/",
        )
    finally:
        os.close(fd)
    assert process.stdin is not None
    with contextlib.suppress(OSError):  # it exited at once
        process.stdin.write(json.dumps(destination).encode())
    with contextlib.suppress(OSError):
        process.stdin.close()
    # reaped when it exits, while this process lives (else by init)
    threading.Thread(target=process.wait, name="lineage-plus-retry-reaper", daemon=True).start()
    return True


class _StoreSink:
    """A lineage store opened on the first flush (it may be down when the retry starts), and created then
    with the transport's modes when missing, as the transport's own write would have."""

    def __init__(self, url: str, timeout: float, file_mode: int, dir_mode: int) -> None:
        self.url, self.timeout = url, timeout
        self.file_mode, self.dir_mode = file_mode, dir_mode
        self.store: Any = None

    def append(self, lines: Iterable[bytes]) -> AppendResult:
        if self.store is None:
            from airflow_lineage_plus.store import LineageStore

            self.store = LineageStore(
                self.url, busy_timeout=self.timeout, file_mode=self.file_mode, dir_mode=self.dir_mode
            )
        result: AppendResult = self.store.append(lines)
        return result


def sink_of(destination: dict[str, Any], spool: Path) -> Sink:
    """Where the spool goes: the OpenLineage endpoint of an API server, or a lineage store."""
    timeout = float(destination.get("timeout") or 2.0)
    if destination.get("collector_url"):
        from airflow_lineage_plus.deliver.collector_writer import CollectorSink, CollectorWriter

        writer = CollectorWriter(str(destination["collector_url"]), spool, timeout=timeout)
        if "key" in destination:
            key = destination["key"]
            writer.key = lambda: key
        return CollectorSink(writer)
    return _StoreSink(
        str(destination["store_url"]),
        timeout,
        int(destination.get("file_mode", 0o640)),
        int(destination.get("dir_mode", 0o750)),
    )


def retry(spool: Path, sink: Sink, seconds: float, sleep: Callable[[float], None] = time.sleep) -> bool:
    """Flush ``spool`` to ``sink`` with growing pauses until nothing waits in it (True) or ``seconds``
    passed (False). The caller holds the retry lock."""
    deadline = time.monotonic() + seconds
    pause = RETRY_FIRST
    while time.monotonic() < deadline:
        sleep(min(pause, max(0.0, deadline - time.monotonic())))
        if not spool.parent.is_dir():
            return True  # the spool's folder is gone: nothing can wait there
        with contextlib.suppress(Exception):  # the destination still down: the files stay, try again
            flush(sink, spool)
            pause = RETRY_FIRST
        if pending_bytes(spool) == 0:
            return True
        pause = min(pause * 2, RETRY_MAX)
    return False


def arrives(spool: Path, seconds: float, sleep: Callable[[float], None] = time.sleep) -> bool:
    """Whether something waits in ``spool`` within ``seconds`` (looked at every :data:`POLL_SECONDS`)."""
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        sleep(min(POLL_SECONDS, max(0.0, deadline - time.monotonic())))
        if pending_bytes(spool) > 0:
            return True
    return False


def main(argv: list[str]) -> int:
    """``SPOOL SECONDS [FD]``: FD is the retry lock, held already (taken by :func:`start`)."""
    spool, seconds = Path(argv[0]), float(argv[1])
    held = int(argv[2]) if len(argv) > 2 else None
    destination = json.loads(sys.stdin.buffer.read() or b"{}")
    linger = float(destination.pop("linger", 0.0))
    sink = sink_of(destination, spool)
    ends = time.monotonic() + seconds
    while True:
        fd = held if held is not None else _take_lock(spool, tries=20)
        held = None
        if fd is None:
            return 0  # another retry process has it
        try:
            # sent, then (deferred) the next events waited for, holding the lock: one process, not one each
            while (emptied := retry(spool, sink, ends - time.monotonic())) and arrives(
                spool, min(linger, ends - time.monotonic())
            ):
                pass
        finally:
            os.close(fd)
        # an event spooled while this process was deciding to stop found the lock taken: look again
        if not emptied or pending_bytes(spool) == 0 or time.monotonic() >= ends:
            return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
