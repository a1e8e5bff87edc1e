"""Re-send to Marquez, from the lineage store, the events it missed while it was unreachable.

``lineage-plus replay --since 2024-05-01T10:00Z [--until ...] [--dry-run]`` reads the lineage store and
what its spool still holds (or the event log ``--event-log`` names), keeps
the events whose ``eventTime`` falls in ``[since, until)``, asks Marquez which of their runs it already
has (``GET /api/v1/jobs/runs/{runId}``) and posts only what it lacks (``POST /api/v1/lineage``), in the
order the events were logged, exactly as they were logged:

* a run Marquez does not know (404): all its events in the window are sent;
* a run Marquez knows but has not finished (``NEW``/``RUNNING``): only its terminal events
  (``COMPLETE``, ``FAIL``, ``ABORT``) are sent, the rest it already has;
* a run Marquez has finished (``COMPLETED``, ``FAILED``, ``ABORTED``): nothing is sent;
* an event without a run (a dataset or job event): skipped, there is no way to ask whether it arrived;
* the same event logged twice (same runId, eventType, eventTime): sent once.

Run ids are deterministic (the provider derives them from the task instance), so a re-sent event
lands on the run Marquez already shows and never creates a second run. The result is a
:class:`ReplayReport`: what was sent, skipped (and why) and what failed.
"""

from __future__ import annotations

import argparse
import json
from collections.abc import Iterable, Iterator, Sequence
from datetime import datetime, timezone
from pathlib import Path
from typing import Any
from urllib.parse import quote

import attr
import orjson

from airflow_lineage_plus import conf
from airflow_lineage_plus.exceptions import NodeNotFound, ReplayError, SourceUnavailable
from airflow_lineage_plus.progress import progress
from airflow_lineage_plus.timestamps import parse_iso

TERMINAL_EVENTS = frozenset({"COMPLETE", "FAIL", "ABORT"})
FINISHED_RUNS = frozenset({"COMPLETED", "FAILED", "ABORTED"})


@attr.frozen
class LoggedEvent:
    """One event of the log: where it is, what it is, and its bytes as logged."""

    line: int
    run_id: str | None
    job: str
    event_type: str
    event_time: datetime
    raw: bytes = attr.field(repr=False)

    def summary(self) -> dict[str, Any]:
        return {
            "line": self.line,
            "runId": self.run_id,
            "job": self.job,
            "eventType": self.event_type,
            "eventTime": self.event_time.isoformat(),
        }


@attr.define
class ReplayReport:
    """What a replay sent, skipped (with the reason) and failed to send (with the error)."""

    since: datetime
    until: datetime
    dry_run: bool
    in_window: int = 0
    unreadable_lines: int = 0
    sent: list[LoggedEvent] = attr.Factory(list)
    skipped: list[tuple[LoggedEvent, str]] = attr.Factory(list)
    failed: list[tuple[LoggedEvent, str]] = attr.Factory(list)

    @property
    def ok(self) -> bool:
        return not self.failed

    def to_dict(self) -> dict[str, Any]:
        return {
            "since": self.since.isoformat(),
            "until": self.until.isoformat(),
            "dryRun": self.dry_run,
            "inWindow": self.in_window,
            "unreadableLines": self.unreadable_lines,
            "sent": [e.summary() for e in self.sent],
            "skipped": [{**e.summary(), "reason": why} for e, why in self.skipped],
            "failed": [{**e.summary(), "error": err} for e, err in self.failed],
        }

    def to_text(self) -> str:
        verb = "would send" if self.dry_run else "sent"
        lines = [
            f"replay {self.since.isoformat()} .. {self.until.isoformat()}: {self.in_window} event(s) in the "
            f"window; {verb} {len(self.sent)}, skipped {len(self.skipped)}, failed {len(self.failed)}"
            + (f"; {self.unreadable_lines} unreadable line(s) ignored" if self.unreadable_lines else "")
        ]
        lines += [f"  {verb}: {_label(e)}" for e in self.sent]
        lines += [f"  skipped: {_label(e)}: {why}" for e, why in self.skipped]
        lines += [f"  FAILED: {_label(e)}: {err}" for e, err in self.failed]
        return "\n".join(lines) + "\n"


def _label(event: LoggedEvent) -> str:
    return f"{event.event_type} {event.job} run {event.run_id} at {event.event_time.isoformat()}"


def parse_time(text: str) -> datetime:
    """An ISO 8601 time (``Z`` allowed); naive times are UTC."""
    try:
        return parse_iso(text)
    except ValueError as exc:
        raise ReplayError(f"not an ISO 8601 time: {text!r} (example: 2024-05-01T10:00:00Z)") from exc


def read_log(path: Path, report: ReplayReport | None = None) -> Iterator[LoggedEvent]:
    """The events of the log, in order; lines that are not events are counted and skipped."""
    try:
        handle = open(path, "rb")  # noqa: SIM115 - a generator: closed by the with below
    except OSError as exc:
        raise ReplayError(f"cannot read the event log {path}: {exc}") from exc
    with handle:
        yield from read_raw(handle, report)


def read_stored(url: str, spool: Path, report: ReplayReport | None = None) -> Iterator[LoggedEvent]:
    """The events of the lineage store at ``url`` in the order stored, then those of the spool it does not
    hold yet; ``line`` numbers count across both."""
    from airflow_lineage_plus.store import LineageStore

    try:
        store = LineageStore(url, create=False)
    except SourceUnavailable as exc:
        raise ReplayError(f"cannot read the lineage store: {exc}") from exc
    try:
        stored = store.all_payloads()
    finally:
        store.close()
    known = set(stored)
    spooled: list[bytes] = []
    if spool.exists():
        with open(spool, "rb") as handle:
            spooled = [line.strip() for line in handle if line.strip() and line.strip() not in known]
    yield from read_raw(stored + spooled, report)


def read_raw(raws: Iterable[bytes], report: ReplayReport | None = None) -> Iterator[LoggedEvent]:
    """The events of these JSON lines, numbered from 1; lines that are not events are counted and skipped."""
    for number, raw in enumerate(raws, start=1):
        raw = raw.strip()
        if not raw:
            continue
        try:
            data = orjson.loads(raw)
            run = data.get("run") or {}
            job = data.get("job") or {}
            yield LoggedEvent(
                line=number,
                run_id=run.get("runId"),
                job=f"{job.get('namespace', '?')}/{job.get('name', '?')}",
                event_type=str(data.get("eventType") or "OTHER"),
                event_time=parse_time(str(data["eventTime"])),
                raw=raw,
            )
        except (orjson.JSONDecodeError, AttributeError, KeyError, ReplayError):
            if report is not None:
                report.unreadable_lines += 1


class Marquez:
    """The two Marquez calls replay needs, through the package's one Marquez client."""

    def __init__(self, url: str, api_key: str = "", timeout: float = 5.0) -> None:
        if not url:
            raise ReplayError("no Marquez URL: pass --marquez or set [lineage_plus] marquez_url")
        from airflow_lineage_plus.marquez_client import MarquezClient  # httpx: only when replaying

        self.client = MarquezClient(url, api_key=api_key or None, timeout=timeout)

    def run_state(self, run_id: str) -> str | None:
        """The run's state in Marquez, or None when Marquez does not know the run."""
        try:
            body = self.client.get(f"/jobs/runs/{quote(run_id, safe='')}", missing=run_id)
        except NodeNotFound:
            return None
        return str((body or {}).get("state") or "NEW")

    def send(self, raw: bytes) -> None:
        self.client.post_lineage(raw)


def replay(
    log: Path,
    marquez: Marquez,
    since: datetime,
    until: datetime | None = None,
    *,
    dry_run: bool = False,
    store_url: str | None = None,
) -> ReplayReport:
    """Re-send the events of ``[since, until)`` that Marquez lacks; see the module doc for the rules.

    ``store_url``: read the events from that lineage store, then what ``log`` (its spool) still holds;
    without it, from the event log ``log`` alone."""
    until = until or datetime.now(timezone.utc)
    if until <= since:
        raise ReplayError(f"--until ({until.isoformat()}) must be after --since ({since.isoformat()})")
    report = ReplayReport(since=since, until=until, dry_run=dry_run)
    events = read_stored(store_url, log, report) if store_url else read_log(log, report)
    window = _window(events, report)
    states: dict[str, str | Exception | None] = {}
    with progress("replaying to Marquez", total=len(window)) as bar:
        for event in window:
            _replay_one(event, marquez, states, report)
            bar.advance()
    return report


def _window(events: Iterable[LoggedEvent], report: ReplayReport) -> list[LoggedEvent]:
    """The events in the report's window, each once (the others are counted as skipped)."""
    seen: set[tuple[str | None, str, datetime]] = set()
    window: list[LoggedEvent] = []
    for event in events:
        if not report.since <= event.event_time < report.until:
            continue
        report.in_window += 1
        identity = (event.run_id, event.event_type, event.event_time)
        if identity in seen:
            report.skipped.append((event, "logged twice; sent once"))
            continue
        seen.add(identity)
        window.append(event)
    return window


def _replay_one(
    event: LoggedEvent, marquez: Marquez, states: dict[str, str | Exception | None], report: ReplayReport
) -> None:
    """Send one event of the window unless Marquez has it; note what happened in ``report``."""
    dry_run = report.dry_run
    if event.run_id is None:
        report.skipped.append((event, "no run id: cannot ask Marquez whether it arrived"))
        return
    if event.run_id not in states:
        try:
            states[event.run_id] = marquez.run_state(event.run_id)
        except SourceUnavailable as exc:
            states[event.run_id] = exc
    state = states[event.run_id]
    if isinstance(state, Exception):
        report.failed.append((event, f"could not ask Marquez about the run: {state}"))
    elif state in FINISHED_RUNS:
        report.skipped.append((event, f"Marquez already has the run ({state})"))
    elif state is not None and event.event_type not in TERMINAL_EVENTS:
        report.skipped.append((event, f"Marquez already has the run ({state}) with this event"))
    elif dry_run:
        report.sent.append(event)
    else:
        try:
            marquez.send(event.raw)
        except SourceUnavailable as exc:
            report.failed.append((event, str(exc)))
        else:
            report.sent.append(event)


# -- command line -------------------------------------------------------------------------------------


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """The options of ``lineage-plus replay`` (also used when run as ``python -m``)."""
    parser.add_argument(
        "--since",
        help="start of the window (ISO 8601, e.g. 2024-05-01T10:00Z); needed to replay to Marquez",
    )
    parser.add_argument("--until", help="end of the window, exclusive (default: now)")
    parser.add_argument(
        "--event-log",
        help="an event log to read instead of the lineage store and its spool",
    )
    parser.add_argument("--dry-run", action="store_true", help="report what would be sent, send nothing")
    parser.add_argument(
        "--format", choices=("text", "json"), default="text", help="output format: text (default) or JSON"
    )


def command(args: argparse.Namespace) -> tuple[int, str, str]:
    """Run ``replay`` for parsed arguments: (exit status, stdout, stderr); 1 if anything failed.

    Reads ``--marquez``/``--api-key``/``--timeout``/``--events`` when the caller's parser has them
    (``lineage-plus``), else the ``[lineage_plus]`` configuration.
    """
    if args.since is None:
        return 2, "", "lineage-plus replay: --since is needed to replay to Marquez\n"
    try:
        given = args.event_log or getattr(args, "events", None)
        log = Path(given or conf.event_log_path())
        store_url = None if given else conf.store_url(beside=log)  # the store, then its spool
        marquez = Marquez(
            getattr(args, "marquez", None) or conf.marquez_url(),
            getattr(args, "api_key", None) or conf.marquez_api_key(),
            getattr(args, "timeout", None) or conf.marquez_timeout(),
        )
        result = replay(
            log,
            marquez,
            parse_time(args.since),
            parse_time(args.until) if args.until else None,
            dry_run=args.dry_run,
            store_url=store_url,
        )
    except ReplayError as exc:
        return 2, "", f"lineage-plus replay: {exc}\n"
    out = json.dumps(result.to_dict(), indent=2) + "\n" if args.format == "json" else result.to_text()
    return (0 if result.ok else 1), out, ""


def main(argv: Sequence[str] | None = None) -> int:
    import sys

    parser = argparse.ArgumentParser(
        prog="lineage-plus replay", description="Re-send to Marquez the events it missed."
    )
    parser.add_argument("--marquez", help="Marquez base URL (default: [lineage_plus] marquez_url)")
    parser.add_argument("--api-key", help="Marquez API key (default: [lineage_plus] marquez_api_key)")
    parser.add_argument("--timeout", type=float, help="seconds per Marquez request")
    add_arguments(parser)
    code, out, err = command(parser.parse_args(argv))
    sys.stdout.write(out)
    sys.stderr.write(err)
    return code


if __name__ == "__main__":
    raise SystemExit(main())
