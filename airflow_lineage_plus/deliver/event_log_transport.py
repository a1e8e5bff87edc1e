"""An OpenLineage transport that writes events to the lineage store, and to the event log (the spool)
when the store cannot take them in time.

Each event goes to the store (``store_url``, default ``[lineage_plus] store_url``: SQLite beside the
log) within ``store_timeout`` seconds (:mod:`.store_writer`), or, with ``collector_url`` set (default
``[lineage_plus] collector_url``), to the OpenLineage endpoint of that Airflow API server, which writes
the store (:mod:`.collector_writer`: workers and schedulers on other machines). An event not taken in
time is appended to the event log at ``log_file_path``, which is then the *spool*: a retry process of its
own sends it on once the destination takes it again (:mod:`.spool_retry`), the next write that succeeds
flushes it in the background, and ``lineage-plus replay`` does it by hand
(:mod:`airflow_lineage_plus.store.spool`); one warning says so. ``"store_url": "none"`` (and no
collector) writes the event log only, as versions before the store did.

Appending to the log is done safely from many processes at once. The client's ``file`` transport
(``append: true``) writes each line through a buffered text file
without a lock. On a local Linux filesystem one large ``write`` is usually applied whole, so
concurrent appends rarely interleave (docs/reliability.md, "Measurements"), but nothing guarantees it:
a short write (disk full, a signal, a
network filesystem) leaves half a line that the next writer's line is glued to, and the whole
line is lost. :class:`EventLogTransport` instead

* serialises the event once with orjson (:mod:`airflow_lineage_plus.deliver.serialize`: the same JSON
  as the client's ``Serde``, in less of the task's time; docs/reliability.md has the figures),
* takes an exclusive ``flock`` on the log, waiting at most ``lock_timeout`` seconds (non-blocking
  tries: a writer stuck while holding the lock costs that event, never a hung task or scheduler),
  cuts off a torn last line a writer killed mid-line left behind, and hands the whole line to the
  kernel in one ``os.write`` on an ``O_APPEND`` descriptor (looping only on a short write, still under
  the lock); a write that fails is cut back off (no half lines),
* creates the log ``0640`` in a directory ``0750`` (``[lineage_plus] event_log_file_mode`` and
  ``event_log_dir_mode``): lineage carries SQL and error messages that not everyone may read,
* checks every event first (:func:`airflow_lineage_plus.deliver.event_budget.check`: values policy, size
  limits, redaction; ``budget: false`` turns the limits and the values policy off, never redaction)
  and fails closed: a string that cannot be checked within the redaction budget is withheld whole
  (a marker replaces it, the event is kept), and an event that could not be checked at all is
  neither logged nor forwarded, with one warning saying which event was lost,
* never raises into its caller: a failed write (disk full, not writable, missing directory, lock
  not acquired in time) is counted as a lost event and logged once through
  :mod:`airflow_lineage_plus.containment`.

Configure it in one line (``log_file_path`` defaults to ``[lineage_plus] event_log_path``, ``store_url``
to ``[lineage_plus] store_url``)::

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
from pathlib import Path
from typing import Any

import attr
import orjson
from openlineage.client.transport import get_default_factory, register_transport
from openlineage.client.transport.transport import Config, Transport

from airflow_lineage_plus import conf
from airflow_lineage_plus.containment import call_within, report
from airflow_lineage_plus.deliver import collector_writer, spool_retry
from airflow_lineage_plus.deliver.collector_writer import CollectorWriter
from airflow_lineage_plus.deliver.event_budget import PROBES, check
from airflow_lineage_plus.deliver.ingest_key import ingest_key
from airflow_lineage_plus.deliver.redaction import redact_json
from airflow_lineage_plus.deliver.serialize import describe, dumps
from airflow_lineage_plus.deliver.store_writer import StoreWriter
from airflow_lineage_plus.deliver.warm_up import warm_up
from airflow_lineage_plus.exceptions import EventLostError, EventRefusedError
from airflow_lineage_plus.private_dirs import ensure_dir
from airflow_lineage_plus.store.fold import Folder
from airflow_lineage_plus.store.spool import lock_exclusive

_counts_lock = threading.Lock()
_counts = {"lost": 0, "torn": 0}


def lost_events() -> int:
    """Events this process failed to write to the event log (for tests and diagnostics)."""
    with _counts_lock:
        return _counts["lost"]


def torn_lines_cut() -> int:
    """Torn last lines (left by writers killed mid-line) this process cut off before appending."""
    with _counts_lock:
        return _counts["torn"]


def _count(what: str) -> None:
    with _counts_lock:
        _counts[what] += 1


def _default_path() -> str:
    try:
        return str(conf.event_log_path())
    except ImportError:  # the client used without Airflow
        return os.path.expanduser("~/.lineage_plus/events.jsonl")


def _store_url(log_file_path: str) -> str:
    """The store the transport writes to when its config names none: ``[lineage_plus] store_url``, whose
    default is a SQLite file beside the log."""
    log = Path(log_file_path)
    try:
        return conf.store_url(beside=log)
    except ImportError:  # the client used without Airflow
        return f"sqlite:///{log.with_suffix('.db').absolute()}"


def _collector_url() -> str:
    """``[lineage_plus] collector_url`` (empty: none, and without Airflow)."""
    try:
        return conf.collector_url()
    except ImportError:  # the client used without Airflow
        return ""


def _modes() -> tuple[int, int]:
    """(file mode, directory mode) new event logs are created with."""
    try:
        return conf.event_log_file_mode(), conf.event_log_dir_mode()
    except ImportError:  # the client used without Airflow: the documented defaults
        return 0o640, 0o750


@attr.define
class EventLogConfig(Config):
    """Settings of :class:`EventLogTransport`.

    Attributes:
        log_file_path: the event log, the spool of events the store did not take (default
            ``[lineage_plus] event_log_path``).
        store_url: the lineage store (SQLAlchemy URL; default ``[lineage_plus] store_url``, a SQLite file
            beside the log); ``none``: write the log only.
        collector_url: the base URL of an Airflow API server whose OpenLineage endpoint takes the events
            instead of ``store_url`` (default ``[lineage_plus] collector_url``; empty or ``none``: the
            store itself).
        store_timeout: seconds an event may take to reach the store (or the endpoint) before it is
            spooled instead.
        budget: apply the size limits and the values policy of
            :func:`airflow_lineage_plus.deliver.event_budget.check`; default on. Redaction is always applied.
        fsync: flush each line to disk before returning; default off.
        forward: config of a transport to deliver each event to after it is logged (for example
            ``{"type": "http", "url": "http://marquez:5000", "retry": {"total": 0}}``).
        forward_timeout: seconds to wait for ``forward``; keep it below the provider's
            ``[openlineage] execution_timeout`` (10 s) so a slow backend never reaches that limit.
        lock_timeout: seconds to wait for the log's lock before the event is given up (lost, one
            warning); writers hold it for one ``write``, so only a stuck writer makes anyone wait.
        deferred: append each event to the event log only, and leave it to the spool's background
            process (:mod:`.spool_retry`, kept alive :data:`~.spool_retry.LINGER_SECONDS` after its last
            event) to send the log on to the store or the endpoint in batches, about a second later: a
            task pays an append per event instead of a store write or a request. Default off. Only for
            machines that outlive their tasks (not a Kubernetes pod per task: the log goes with the
            pod), and only with ``[lineage_plus] spool_retry_seconds`` above 0 (else events go directly).
    """

    log_file_path: str = attr.field(factory=_default_path)
    store_url: str | None = None
    collector_url: str | None = None
    store_timeout: float = 2.0
    budget: bool = True
    fsync: bool = False
    forward: dict[str, Any] | None = None
    forward_timeout: float = 5.0
    lock_timeout: float = 2.0
    deferred: bool = False

    @classmethod
    def from_dict(cls, params: dict[str, Any]) -> EventLogConfig:
        known: dict[str, Any] = {}
        if params.get("log_file_path"):
            known["log_file_path"] = os.path.expanduser(str(params["log_file_path"]))
        for url in ("store_url", "collector_url"):
            if params.get(url):
                known[url] = str(params[url])
        for flag in ("budget", "fsync", "deferred"):
            if flag in params:
                known[flag] = conf.parse_bool(params[flag])
        if params.get("forward"):
            known["forward"] = dict(params["forward"])
        for seconds in ("forward_timeout", "lock_timeout", "store_timeout"):
            if seconds in params:
                known[seconds] = float(params[seconds])
        return cls(**known)

    def destination(self) -> tuple[str, str]:
        """Where events go: ``("collector", its base URL)``, ``("store", its URL)``, or ``("log", "")``
        (``none`` for both: the event log alone)."""
        url = self.store_url or _store_url(self.log_file_path)
        collector = self.collector_url or _collector_url()
        if collector and collector.lower() != "none":
            return "collector", collector
        if url.lower() != "none":
            return "store", url
        return "log", ""


def prepare_process(params: dict[str, Any]) -> None:
    """Build in this process what every new process compiles or reads for its first event with the
    transport configured by ``params`` (the redaction scanners; the fold statements of the store's engine,
    or the collector's ingest key, kept :data:`~.ingest_key.KEY_TTL` seconds), so that processes forked
    after it start with them (:mod:`airflow_lineage_plus.deliver.preload`). Raises what reading the key
    raises."""
    # the budget's check (budget on), then redaction alone (budget off) and the exact pass: compiled,
    # and their automata's states built on an event like the provider's
    warm_up(PROBES, ())
    kind, url = EventLogConfig.from_dict(params).destination()
    if kind == "collector":
        collector_writer.prepare(url)
        ingest_key()
    elif kind == "store":
        Folder.for_url(url)


class EventLogTransport(Transport):
    """Writes each event to the lineage store, else appends it as one line to the event log (atomically
    with respect to other writers); then, if configured, forwards it to another transport within a
    deadline."""

    kind = "lineage_plus_event_log"
    config_class = EventLogConfig

    def __init__(self, config: EventLogConfig) -> None:
        self.config = config
        kind, url = config.destination()
        self.store: StoreWriter | CollectorWriter | None = None
        if kind == "collector":
            self.store = CollectorWriter(url, Path(config.log_file_path), timeout=config.store_timeout)
        elif kind == "store":
            file_mode, dir_mode = _modes()
            self.store = StoreWriter(
                url,
                Path(config.log_file_path),
                timeout=config.store_timeout,
                file_mode=file_mode,
                dir_mode=dir_mode,
            )
        #: events go to the spool, and its background process sends them on (``deferred``, when that
        #: process may run)
        self.retry_seconds = spool_retry.lifetime() if config.deferred and self.store is not None else 0.0
        self.deferred = self.retry_seconds > 0
        self.forward: Transport | None = None
        if config.forward:
            self.forward = get_default_factory().create(dict(config.forward))

    def emit(self, event: Any) -> None:
        try:
            line = self.prepare(event)
        except Exception as exc:  # fail closed: what could not be checked is neither logged nor sent on
            _count("lost")
            report(
                f"lineage for the event log {self.config.log_file_path}"
                + (" and its forward transport" if self.forward is not None else ""),
                EventLostError(
                    f"{describe(event)} neither logged nor forwarded: it could not be checked for "
                    f"secrets: {type(exc).__name__}: {exc}"
                ),
            )
            return
        if self.store is None:
            self._spool(line, event)
        elif self.deferred:
            if self._spool(line, event):
                self._retry_later(self.store, self.retry_seconds, spool_retry.LINGER_SECONDS)
        elif not self._stored(self.store, line) and self._spool(line, event):
            self._retry_later(self.store)
        if self.forward is not None:
            self.deliver(orjson.loads(line))

    def _stored(self, store: StoreWriter | CollectorWriter, line: bytes) -> bool:
        """Whether the event needs no spooling: stored, or refused for good by the endpoint (lost, and
        reported once); another failure is reported once, and the caller spools the event."""
        try:
            store.write(line)
        except EventRefusedError as exc:
            _count("lost")
            report(f"lineage sent to the {store.what} {store.where} (refused events are not kept)", exc)
            return True
        except Exception as exc:
            report(
                f"live delivery to the {store.what} {store.where} (events wait in the spool "
                f"{self.config.log_file_path}: they go on once it takes them, or with `lineage-plus replay`)",
                EventLostError(f"not stored in time: {type(exc).__name__}: {exc}"),
            )
            return False
        return True

    def _spool(self, line: bytes, event: Any) -> bool:
        """Append the event to the event log; whether it is there (a failure is lost, reported once)."""
        try:
            self.append(line + b"\n")
        except Exception as exc:
            _count("lost")
            report(
                f"lineage written to the event log {self.config.log_file_path}",
                EventLostError(f"{describe(event)} not written: {type(exc).__name__}: {exc}"),
            )
            return False
        return True

    def _retry_later(
        self, store: StoreWriter | CollectorWriter, seconds: float | None = None, linger: float = 0.0
    ) -> None:
        """Have the spool sent on once its destination takes it (:mod:`.spool_retry`: its process tries for
        ``seconds``, default ``spool_retry_seconds``, and waits ``linger`` seconds for more events once
        it has sent them all), never failing."""
        try:
            spool_retry.start(Path(self.config.log_file_path), store.retry_destination(), seconds, linger)
        except Exception as exc:
            report(
                f"the timed retry of the spool {self.config.log_file_path} (its events go on at the next "
                "write that succeeds, or with `lineage-plus replay`)",
                EventLostError(f"{type(exc).__name__}: {exc}"),
            )

    def prepare(self, event: Any) -> bytes:
        """The line (without newline) to write and forward: checked (:func:`~.event_budget.check`) when
        ``budget`` is on, else only redacted. Raises when the event could not be checked."""
        if self.config.budget:
            return check(event)
        return redact_json(dumps(event))[0]

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
        """Append ``line`` under an exclusive lock (``lock_timeout``), after cutting off a torn last
        line, in one ``write`` unless the kernel writes short. Raises ``TimeoutError`` or ``OSError``."""
        path = self.config.log_file_path
        while True:
            fd = _open_for_append(path)
            try:
                _lock(fd, path, self.config.lock_timeout)
                try:
                    if not _still_the_log(fd, path):
                        continue  # a flush moved the spool aside meanwhile: write to the new one
                    _cut_torn_tail(fd, path)
                    _write_whole(fd, line, path, self.config.fsync)
                    return
                finally:
                    fcntl.flock(fd, fcntl.LOCK_UN)
            finally:
                os.close(fd)


def _still_the_log(fd: int, path: str) -> bool:
    """Whether the descriptor's file is still the one at ``path`` (a flush renames the spool)."""
    try:
        return os.stat(path).st_ino == os.fstat(fd).st_ino
    except FileNotFoundError:
        return False


def _open_for_append(path: str) -> int:
    """A read-write append descriptor; a new log and a new directory get exactly the configured modes."""
    flags = os.O_RDWR | os.O_APPEND | os.O_CLOEXEC
    try:
        return os.open(path, flags)
    except FileNotFoundError:
        pass
    file_mode, dir_mode = _modes()
    directory = os.path.dirname(path) or "."
    ensure_dir(directory, dir_mode)
    try:
        fd = os.open(path, flags | os.O_CREAT | os.O_EXCL, file_mode)
    except FileExistsError:  # another writer created it first
        return os.open(path, flags)
    os.fchmod(fd, file_mode)
    return fd


def _lock(fd: int, path: str, timeout: float) -> None:
    """Take the exclusive lock within ``timeout`` (:func:`~airflow_lineage_plus.store.spool.lock_exclusive`:
    non-blocking tries, so a writer stuck holding it costs this event, never a hung task); TimeoutError
    after that."""
    if not lock_exclusive(fd, timeout):
        raise TimeoutError(f"the event log {path} stayed locked by another writer for {timeout:g} s")


def _cut_torn_tail(fd: int, path: str) -> None:
    """Cut off a last line without newline (a writer killed mid-line), so no event is glued to it."""
    size = os.fstat(fd).st_size
    if size == 0 or os.pread(fd, 1, size - 1) == b"\n":
        return
    end = size
    while end > 0:
        start = max(0, end - 65536)
        newline = os.pread(fd, end - start, start).rfind(b"\n")
        if newline >= 0:
            end = start + newline + 1
            break
        end = start
    os.ftruncate(fd, end)
    _count("torn")
    report(
        f"a torn last line of the event log {path}",
        EventLostError(f"{size - end} bytes of a line a writer stopped writing midway were cut off"),
    )


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
