"""The lineage source the configuration names: the one way the CLI and the Lineage view open it.

``[lineage_plus] graph_source`` says ``store`` (the lineage store at ``store_url``, which first takes
in what the event log at ``event_log_path`` gained since it last looked: the spool, and an earlier
version's history), ``events`` (the event log alone) or ``marquez`` (``marquez_url``, ``marquez_api_key``,
``marquez_timeout``). Explicit arguments (the CLI's ``--events``,
``--marquez``, ``--api-key``, ``--timeout``) win over the configuration.
"""

from __future__ import annotations

from pathlib import Path

from airflow_lineage_plus import conf
from airflow_lineage_plus.exceptions import SourceUnavailable
from airflow_lineage_plus.graph import LineageSource, open_source
from airflow_lineage_plus.graph.store_source import StoreSource
from airflow_lineage_plus.store import LineageStore


def open_configured_source(
    *,
    events: str | Path | None = None,
    marquez: str | None = None,
    api_key: str | None = None,
    timeout: float | None = None,
    explain_missing_log: bool = False,
    quick: bool = False,
) -> LineageSource:
    """The event log or Marquez: the arguments given, else ``[lineage_plus]`` (which needs Airflow).

    With ``explain_missing_log`` a configured event log that does not exist yet is
    :class:`SourceUnavailable` with a message saying how lineage gets there. ``quick``: an event log is
    scanned for a question about one node instead of folded whole (:mod:`airflow_lineage_plus.graph.scan`).
    """
    if events is not None or marquez is not None:
        return open_source(
            events=events,
            marquez=marquez,
            api_key=api_key,
            timeout=timeout if timeout is not None else 5.0,
            quick=quick and events is not None,
        )
    if conf.graph_source() == "marquez":
        url = conf.marquez_url()
        if not url:
            raise SourceUnavailable("[lineage_plus] graph_source is 'marquez' but marquez_url is empty")
        return open_source(
            marquez=url,
            api_key=api_key or conf.marquez_api_key() or None,
            timeout=timeout if timeout is not None else conf.marquez_timeout(),
        )
    if conf.graph_source() == "store":
        return open_store_source(explain_missing_log=explain_missing_log)
    path = conf.event_log_path()
    if explain_missing_log and not path.exists():
        raise SourceUnavailable(
            f"No lineage recorded yet: the event log {path} does not exist. "
            "Run a DAG with the OpenLineage provider writing to it ([lineage_plus] event_log_path)."
        )
    return open_source(events=path, quick=quick)


def open_store(
    url: str | None = None, *, create: bool = True, read_timeout: float | None = None
) -> LineageStore:
    """The lineage store at ``url``, else ``[lineage_plus] store_url``; a new SQLite file gets the event
    log's modes (``event_log_file_mode``, ``event_log_dir_mode``); PostgreSQL's statements are prepared
    as ``store_prepared_statements`` says; ``read_timeout``: see :class:`LineageStore`."""
    where = url or conf.store_url()
    modes = {}
    if where.startswith("sqlite"):
        modes = {"file_mode": conf.event_log_file_mode(), "dir_mode": conf.event_log_dir_mode()}
    return LineageStore(
        where,
        create=create,
        read_timeout=read_timeout,
        prepared_statements=conf.store_prepared_statements(),
        **modes,
    )


def open_store_source(url: str | None = None, *, explain_missing_log: bool = False) -> LineageSource:
    """The lineage store (``url``, else ``[lineage_plus] store_url``) as a source, taking in the event
    log's new lines at each refresh (:func:`airflow_lineage_plus.store.spool.drain`). A store that does
    not exist yet is made when the event log exists (an upgrade from the event log); with neither,
    :class:`SourceUnavailable` (with ``explain_missing_log``, saying how lineage gets there). Every
    question reads the store's folded state where it looks, each statement within
    ``[lineage_plus] store_read_timeout``."""
    log = conf.event_log_path()
    try:
        store = open_store(url, create=log.exists(), read_timeout=conf.store_read_timeout())
    except SourceUnavailable as exc:
        if explain_missing_log and not log.exists():
            raise SourceUnavailable(
                f"No lineage recorded yet: the lineage store does not exist ({exc}), nor the event log "
                f"{log}. Run a DAG with the OpenLineage provider writing through the lineage_plus transport "
                "(README, 'Configure')."
            ) from exc
        raise
    return StoreSource(store, owns_store=True, spool=log)
