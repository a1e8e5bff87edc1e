"""An OpenLineage transport that appends events to the event log safely from many processes at once.

The client's ``file`` transport (``append: true``) writes each line through a buffered text file
without a lock. On a local Linux filesystem one large ``write`` is usually applied whole, so
concurrent appends rarely interleave (``benchmarks/transport_bench.py`` measured no torn line in
4 x 1000 events up to 1 MB), but nothing guarantees it: a short write (disk full, a signal, a
network filesystem) leaves half a line that the next writer's line is glued to, and the whole
line is lost. :class:`EventLogTransport` instead

* serialises the event once with orjson (same JSON as the client's ``Serde``: ``None`` dropped, keys
  sorted; several times faster for large events, see ``benchmarks/transport_bench.py``),
* takes an exclusive ``flock`` on the log and hands the whole line to the kernel in one ``os.write``
  on an ``O_APPEND`` descriptor (looping only on a short write, still under the lock), and cuts a
  half-written line back off if the write fails,
* applies the size limits and redaction of :mod:`airflow_lineage_plus.budget` first (``budget: false``
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

import datetime
import enum
import errno
import fcntl
import os
import threading
import uuid
from typing import Any

import attr
import orjson
from openlineage.client.serde import Serde
from openlineage.client.transport import register_transport
from openlineage.client.transport.transport import Config, Transport

from airflow_lineage_plus.containment import report

_DUMPS_OPTIONS = orjson.OPT_SORT_KEYS | orjson.OPT_NON_STR_KEYS | orjson.OPT_SERIALIZE_NUMPY
_lost_lock = threading.Lock()
_lost = 0


def plain(value: Any) -> Any:
    """``value`` as JSON-ready data, the way the client's ``Serde.to_dict`` shapes it.

    attrs objects become dicts of their fields, ``None`` values are dropped from dicts, ``None`` and
    empty dicts are dropped from lists, enums become their values, dates ISO strings, UUIDs strings.
    """
    if value is None or isinstance(value, str | int | float | bool):
        return value
    if isinstance(value, dict):
        out = {}
        for key, item in value.items():
            item = plain(item)
            if item is not None:
                out[key] = item
        return out
    if isinstance(value, list | tuple | set | frozenset):
        items = []
        for item in value:
            if item is None:
                continue
            item = plain(item)
            if item is not None and item != {}:
                items.append(item)
        return items
    fields = getattr(type(value), "__attrs_attrs__", None)
    if fields is not None:
        out = {}
        for field in fields:
            item = plain(getattr(value, field.name))
            if item is not None:
                out[field.name] = item
        return out
    if isinstance(value, enum.Enum):
        return value.value
    if isinstance(value, datetime.date):
        return value.isoformat()
    if isinstance(value, uuid.UUID):
        return str(value)
    return value


def _fallback(value: Any) -> Any:
    if getattr(type(value), "__name__", None) == "int64":
        return int(value)
    return f"<<non-serializable: {type(value).__qualname__}>>"


def dumps(event: Any) -> bytes:
    """One event as compact JSON bytes (no newline); falls back to the client's Serde if orjson cannot."""
    data = event if isinstance(event, dict) else plain(event)
    try:
        return orjson.dumps(data, default=_fallback, option=_DUMPS_OPTIONS)
    except (TypeError, orjson.JSONEncodeError):  # e.g. integers beyond 64 bits
        return Serde.to_json(data).encode()


def lost_events() -> int:
    """Events this process failed to write to the event log (for tests and diagnostics)."""
    with _lost_lock:
        return _lost


def describe(event: Any) -> str:
    """``<eventType> event of job <namespace>/<name> (run <runId>)`` of an event object or dict."""
    try:
        return _describe(event)
    except Exception:
        return f"an event ({type(event).__name__})"


def _describe(event: Any) -> str:

    def get(obj: Any, name: str) -> Any:
        return obj.get(name) if isinstance(obj, dict) else getattr(obj, name, None)

    job, run = get(event, "job"), get(event, "run")
    kind = get(event, "eventType")
    kind = getattr(kind, "value", kind)
    if job is None:
        dataset = get(event, "dataset")
        return f"dataset event {get(dataset, 'namespace')}/{get(dataset, 'name')}"
    text = f"{kind or 'job'} event of job {get(job, 'namespace')}/{get(job, 'name')}"
    return text + (f" (run {get(run, 'runId')})" if run is not None else "")


class EventLostError(OSError):
    """Raised (and contained) when an event could not be appended to the event log."""


def _default_path() -> str:
    try:
        from airflow_lineage_plus import conf

        return str(conf.event_log_path())
    except ImportError:  # the client used without Airflow
        return os.path.expanduser("~/.lineage_plus/events.jsonl")


def _flag(value: Any) -> bool:
    return value.strip().lower() in {"1", "true", "yes", "on"} if isinstance(value, str) else bool(value)


@attr.define
class EventLogConfig(Config):
    """Settings of :class:`EventLogTransport`.

    Attributes:
        log_file_path: the event log (default ``[lineage_plus] event_log_path``).
        budget: apply :func:`airflow_lineage_plus.budget.enforce` (size limits, redaction); default on.
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
                known[flag] = _flag(params[flag])
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
            from openlineage.client.transport import get_default_factory

            self.forward = get_default_factory().create(dict(config.forward))

    def emit(self, event: Any) -> None:
        data: Any = event
        try:
            data = self.prepare(event)
            self.append(dumps(data) + b"\n")
        except Exception as exc:
            global _lost
            with _lost_lock:
                _lost += 1
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
            from airflow_lineage_plus import budget

            data = budget.enforce(data)
        return data  # type: ignore[no-any-return]

    def line(self, event: Any) -> bytes:
        """The bytes of one log line for ``event``, newline ended."""
        return dumps(self.prepare(event)) + b"\n"

    def deliver(self, data: Any) -> bool:
        """Hand ``data`` to the ``forward`` transport; give up after ``forward_timeout`` seconds.

        The transport runs in a daemon thread; one that does not answer in time is left behind (a
        forked emitter exits right after, killing it). Returns whether delivery succeeded.
        """
        forward = self.forward
        if forward is None:
            return False
        outcome: dict[str, BaseException | None] = {}

        def send() -> None:
            try:
                forward.emit(data)
                outcome["error"] = None
            except BaseException as exc:  # reported by the calling thread
                outcome["error"] = exc

        thread = threading.Thread(target=send, name="lineage-plus-forward", daemon=True)
        thread.start()
        thread.join(self.config.forward_timeout)
        if "error" not in outcome:
            error: BaseException = TimeoutError(f"no answer within {self.config.forward_timeout:g} s")
        elif outcome["error"] is not None:
            error = outcome["error"]
        else:
            return True
        report(
            f"live delivery to the {forward.kind or type(forward).__name__} transport (events stay in the "
            f"event log {self.config.log_file_path}; `lineage-plus replay` re-sends them)",
            EventLostError(f"{describe(data)} not delivered: {type(error).__name__}: {error}"),
        )
        return False

    def append(self, line: bytes) -> None:
        """Append ``line`` under an exclusive lock, in one ``write`` unless the kernel writes short."""
        path = self.config.log_file_path
        try:
            fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT | os.O_CLOEXEC, 0o644)
        except FileNotFoundError:
            os.makedirs(os.path.dirname(path) or ".", exist_ok=True)
            fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT | os.O_CLOEXEC, 0o644)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX)
            try:
                start = os.fstat(fd).st_size
                try:
                    view = memoryview(line)
                    while view:
                        written = os.write(fd, view)
                        if written <= 0:
                            raise OSError(errno.EIO, f"short write to {path}")
                        view = view[written:]
                    if self.config.fsync:
                        os.fsync(fd)
                except OSError:
                    # Never leave half a line behind (disk full mid-line): cut back to where it began.
                    if os.fstat(fd).st_size > start:
                        os.ftruncate(fd, start)
                    raise
            finally:
                fcntl.flock(fd, fcntl.LOCK_UN)
        finally:
            os.close(fd)


register_transport(EventLogTransport)
