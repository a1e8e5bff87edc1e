"""An OpenLineage transport that appends events to the event log safely from many processes at once.

The client's ``file`` transport (``append: true``) writes each line through a buffered text file
without a lock. On a local Linux filesystem one large ``write`` is usually applied whole, so
concurrent appends rarely interleave (``benchmarks/transport_bench.py`` measured no torn line in
4 x 1000 events up to 1 MB), but nothing guarantees it: a short write (disk full, a signal, a
network filesystem) leaves half a line that the next writer's line is glued to, and the whole
line is lost. :class:`EventLogTransport` instead

* serialises the event once with orjson (:mod:`airflow_lineage_plus.deliver.serialize`: the same JSON
  as the client's ``Serde``, several times faster for large events),
* takes an exclusive ``flock`` on the log and hands the whole line to the kernel in one ``os.write``
  on an ``O_APPEND`` descriptor (looping only on a short write, still under the lock), and cuts a
  half-written line back off if the write fails,
* applies the size limits and redaction of :mod:`airflow_lineage_plus.deliver.budget` first (``budget: false``
  turns that off),
* never raises into its caller: a failed write (disk full, not writable, missing directory) is
  counted as a lost event and logged once through :mod:`airflow_lineage_plus.containment`.

Configure it in one line (``log_file_path`` defaults to ``[lineage_plus] event_log_path``)::

    AIRFLOW__OPENLINEAGE__TRANSPORT='{"type": "airflow_lineage_plus.transport.EventLogTransport"}'

With ``"forward": {<any client transport config>}`` each event is then delivered to that transport
too (Marquez over ``http``, for example) within ``forward_timeout`` seconds; a failed delivery is one
warning and the event stays in the log for ``lineage-plus replay`` (docs/reliability.md).

The short type ``lineage_plus_event_log`` works once this module is imported (it registers itself
with the client's transport factory).
"""

from __future__ import annotations

import errno
import fcntl
import os
import threading
from typing import Any

import attr
from openlineage.client.transport import get_default_factory, register_transport
from openlineage.client.transport.transport import Config, Transport

from airflow_lineage_plus import conf
from airflow_lineage_plus.containment import call_within, report
from airflow_lineage_plus.deliver.budget import enforce
from airflow_lineage_plus.deliver.serialize import describe, dumps, plain
from airflow_lineage_plus.exceptions import EventLostError

_lost_lock = threading.Lock()
_lost = 0


def lost_events() -> int:
    """Events this process failed to write to the event log (for tests and diagnostics)."""
    with _lost_lock:
        return _lost


def _count_lost() -> None:
    global _lost
    with _lost_lock:
        _lost += 1


def _default_path() -> str:
    try:
        return str(conf.event_log_path())
    except ImportError:  # the client used without Airflow
        return os.path.expanduser("~/.lineage_plus/events.jsonl")


@attr.define
class EventLogConfig(Config):
    """Settings of :class:`EventLogTransport`.

    Attributes:
        log_file_path: the event log (default ``[lineage_plus] event_log_path``).
        budget: apply :func:`airflow_lineage_plus.deliver.budget.enforce` (size limits, redaction);
            default on.
        fsync: flush each line to disk before returning; default off.
        forward: config of a transport to deliver each event to after it is logged (for example
            ``{"type": "http", "url": "http://marquez:5000", "retry": {"total": 0}}``).
        forward_timeout: seconds to wait for ``forward``; keep it below the provider's
            ``[openlineage] execution_timeout`` (10 s) so a slow backend never reaches that limit.
    """

    log_file_path: str = attr.field(factory=_default_path)
    budget: bool = True
    fsync: bool = False
    forward: dict[str, Any] | None = None
    forward_timeout: float = 5.0

    @classmethod
    def from_dict(cls, params: dict[str, Any]) -> EventLogConfig:
        known: dict[str, Any] = {}
        if params.get("log_file_path"):
            known["log_file_path"] = os.path.expanduser(str(params["log_file_path"]))
        for flag in ("budget", "fsync"):
            if flag in params:
                known[flag] = conf.parse_bool(params[flag])
        if params.get("forward"):
            known["forward"] = dict(params["forward"])
        if "forward_timeout" in params:
            known["forward_timeout"] = float(params["forward_timeout"])
        return cls(**known)


class EventLogTransport(Transport):
    """Appends each event as one line to the event log, atomically with respect to other writers;
    then, if configured, forwards it to another transport within a deadline."""

    kind = "lineage_plus_event_log"
    config_class = EventLogConfig

    def __init__(self, config: EventLogConfig) -> None:
        self.config = config
        self.forward: Transport | None = None
        if config.forward:
            self.forward = get_default_factory().create(dict(config.forward))

    def emit(self, event: Any) -> None:
        data: Any = event
        try:
            data = self.prepare(event)
            self.append(dumps(data) + b"\n")
        except Exception as exc:
            _count_lost()
            report(
                f"lineage written to the event log {self.config.log_file_path}",
                EventLostError(f"{describe(event)} not written: {type(exc).__name__}: {exc}"),
            )
        if self.forward is not None:
            self.deliver(data)

    def prepare(self, event: Any) -> dict[str, Any]:
        """``event`` as a JSON-ready dict, with size limits and redaction applied when configured."""
        data = plain(event)
        if self.config.budget:
            data = enforce(data)
        return data  # type: ignore[no-any-return]

    def deliver(self, data: Any) -> bool:
        """Hand ``data`` to the ``forward`` transport; give up after ``forward_timeout`` seconds.

        The transport runs in a daemon thread (:func:`~airflow_lineage_plus.containment.call_within`);
        one that does not answer in time is left behind (a forked emitter exits right after, killing
        it). Returns whether delivery succeeded.
        """
        forward = self.forward
        if forward is None:
            return False
        timeout = self.config.forward_timeout
        try:
            call_within(
                timeout, f"the {forward.kind or type(forward).__name__} transport", forward.emit, data
            )
        except Exception as error:  # reported below; nothing reaches the task
            report(
                f"live delivery to the {forward.kind or type(forward).__name__} transport (events stay in "
                f"the event log {self.config.log_file_path}; `lineage-plus replay` re-sends them)",
                EventLostError(f"{describe(data)} not delivered: {type(error).__name__}: {error}"),
            )
            return False
        return True

    def append(self, line: bytes) -> None:
        """Append ``line`` under an exclusive lock, in one ``write`` unless the kernel writes short."""
        path = self.config.log_file_path
        fd = _open_for_append(path)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX)
            try:
                _write_whole(fd, line, path, self.config.fsync)
            finally:
                fcntl.flock(fd, fcntl.LOCK_UN)
        finally:
            os.close(fd)


def _open_for_append(path: str) -> int:
    flags = os.O_WRONLY | os.O_APPEND | os.O_CREAT | os.O_CLOEXEC
    try:
        return os.open(path, flags, 0o644)
    except FileNotFoundError:
        os.makedirs(os.path.dirname(path) or ".", exist_ok=True)
        return os.open(path, flags, 0o644)


def _write_whole(fd: int, line: bytes, path: str, fsync: bool) -> None:
    """Write all of ``line``; on failure cut the file back to where the line began (no half lines)."""
    start = os.fstat(fd).st_size
    try:
        view = memoryview(line)
        while view:
            written = os.write(fd, view)
            if written <= 0:
                raise OSError(errno.EIO, f"short write to {path}")
            view = view[written:]
        if fsync:
            os.fsync(fd)
    except OSError:
        # Never leave half a line behind (disk full mid-line): cut back to where it began.
        if os.fstat(fd).st_size > start:
            os.ftruncate(fd, start)
        raise


register_transport(EventLogTransport)
