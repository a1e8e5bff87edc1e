"""The lineage store's subcommands of ``lineage-plus``: ``import``, ``refold`` and ``retention``
(docs/graph.md).

    lineage-plus import LOG [--store URL]        load a JSONL event log into the store (idempotent)
    lineage-plus refold [--store URL]            fold every raw event again (after a folding rule changed)
    lineage-plus retention [--days N] [--store URL]   delete raw events older than the window

:func:`add_import_arguments`, :func:`add_store_option` and :func:`add_retention_arguments` give the
CLI's parser their options and :func:`run` runs one; the CLI module only wires them. Exit status: 0 done,
1 the store or the log cannot be used, 2 bad arguments.
"""

from __future__ import annotations

import argparse
from collections.abc import Iterator
from pathlib import Path

from airflow_lineage_plus.exceptions import SourceUnavailable
from airflow_lineage_plus.progress import Tracker, progress
from airflow_lineage_plus.sources import open_store
from airflow_lineage_plus.store import apply_retention, cutoff
from airflow_lineage_plus.store.spool import complete_lines, flush, pending_bytes

COMMANDS = ("import", "refold", "retention")
Result = tuple[int, str, str]
#: lines read between two updates of the progress bar
PROGRESS_EVERY = 1000


def add_import_arguments(load: argparse.ArgumentParser) -> None:
    """The options of ``import`` (the CLI's parser declares the command itself)."""
    load.add_argument("log", metavar="LOG", help="the event log to load (newline-delimited OpenLineage JSON)")
    _store_option(load)


def add_retention_arguments(keep: argparse.ArgumentParser) -> None:
    """The options of ``retention``."""
    keep.add_argument(
        "--days", type=float, help="the window in days (default: [lineage_plus] retention_days)"
    )
    _store_option(keep)


def add_store_option(parser: argparse.ArgumentParser) -> None:
    """``--store URL`` (for ``replay``, which sends the spool to the store when no Marquez is named)."""
    _store_option(parser)


def _store_option(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--store",
        metavar="URL",
        help="SQLAlchemy URL of the lineage store (default: [lineage_plus] store_url)",
    )


def run(args: argparse.Namespace) -> Result:
    """(exit status, stdout, stderr) of ``import``, ``refold`` or ``retention``."""
    if args.command == "import":
        return import_log(Path(args.log), args.store)
    if args.command == "refold":
        return refold(args.store)
    return retention(args.days, args.store)


def import_log(path: Path, url: str | None = None) -> Result:
    """``lineage-plus import LOG``: append the log's events the store does not have yet."""
    if not path.is_file():
        return 2, "", f"lineage-plus: no event log at {path}\n"
    problems: dict[str, int] = {}
    try:
        store = open_store(url)
        try:
            with progress(f"importing {path.name}", total=path.stat().st_size, unit="bytes") as bar:
                result = store.append(_lines(path, problems, bar))
            where = store.where
        finally:
            store.close()
    except (SourceUnavailable, OSError, ValueError) as exc:
        return 1, "", f"lineage-plus: cannot import {path}: {exc}\n"
    for kind, number in result.rejected.items():
        problems[kind] = problems.get(kind, 0) + number
    out = (
        f"imported {result.added} new events from {path} into {where} ({result.duplicates} already stored)\n"
    )
    err = ""
    if problems:
        err = (
            "lineage-plus: skipped input: "
            + ", ".join(f"{k}={v}" for k, v in sorted(problems.items()))
            + "\n"
        )
    return 0, out, err


def _lines(path: Path, problems: dict[str, int], bar: Tracker) -> Iterator[bytes]:
    """Every complete, non-blank line of the log (:func:`~airflow_lineage_plus.store.spool.complete_lines`:
    lines over the size budget counted as too_large); the bar shows the bytes read."""
    position = 0
    for count, (position, line) in enumerate(complete_lines(path, 0, problems)):
        if count % PROGRESS_EVERY == 0:
            bar.update(completed=position)
        yield line
    bar.update(completed=position)


def refold(url: str | None = None) -> Result:
    """``lineage-plus refold``: empty the folded state and fold every raw event again, in one
    transaction (writers wait, and the transport spools meanwhile)."""
    try:
        store = open_store(url, create=False)
        try:
            total = store.count()
            with progress("refolding", total=total, unit="events") as bar:
                problems = store.refold(bar.advance)
            where = store.where
        finally:
            store.close()
    except (SourceUnavailable, OSError) as exc:
        return 1, "", f"lineage-plus: cannot refold: {exc}\n"
    err = ""
    if problems:
        err = "lineage-plus: not folded: " + ", ".join(f"{k}={v}" for k, v in sorted(problems.items())) + "\n"
    return 0, f"refolded {total} raw events in {where}\n", err


def flush_spool(log: str | Path | None, url: str | None = None, dry_run: bool = False) -> Result:
    """``lineage-plus replay`` without Marquez: send the spool (``log``, else ``[lineage_plus]
    event_log_path``) where the transport sends events (the store ``url``, else the API server of
    ``[lineage_plus] collector_url``, else ``[lineage_plus] store_url``) and remove what was stored
    (:func:`~.store.spool.flush`)."""
    import httpx

    from airflow_lineage_plus import conf
    from airflow_lineage_plus.deliver.collector_writer import FLUSH_TIMEOUT, CollectorSink, CollectorWriter

    path = Path(log) if log else conf.event_log_path()
    waiting = pending_bytes(path)
    if dry_run or not waiting:
        return 0, f"{waiting} bytes of events wait in the spool {path}\n", ""
    collector = "" if url else conf.collector_url()
    try:
        if collector:
            writer = CollectorWriter(collector, path, timeout=FLUSH_TIMEOUT)
            result, where = flush(CollectorSink(writer), path), writer.where
        else:
            store = open_store(url)
            try:
                result = flush(store, path)
                where = store.where
            finally:
                store.close()
    except (SourceUnavailable, OSError, httpx.HTTPError) as exc:
        return 1, "", f"lineage-plus replay: the spool {path} stays as it is: {exc}\n"
    err = ""
    if result.problems:
        err = "lineage-plus: not stored: " + ", ".join(f"{k}={v}" for k, v in sorted(result.problems.items()))
        err += "\n"
    return (
        0,
        f"sent {result.added} events from the spool {path} to {where} ({result.duplicates} already stored)\n",
        err,
    )


def retention(days: float | None, url: str | None = None) -> Result:
    """``lineage-plus retention``: delete raw events older than ``days`` (default: the configuration)."""
    if days is None:
        from airflow_lineage_plus import conf

        days = conf.retention_days()
        if days is None:
            return 2, "", "lineage-plus: set [lineage_plus] retention_days or give --days\n"
    if days <= 0:
        return 2, "", "lineage-plus: --days must be more than 0\n"
    try:
        store = open_store(url, create=False)
        try:
            result = apply_retention(store, cutoff(days))
        finally:
            store.close()
    except (SourceUnavailable, OSError) as exc:
        return 1, "", f"lineage-plus: cannot apply retention: {exc}\n"
    return (
        0,
        f"deleted {result.deleted} raw events older than {days:g} days; kept {result.kept} of current runs\n",
        "",
    )
