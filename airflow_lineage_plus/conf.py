"""The one place that reads ``[lineage_plus]`` configuration: one small function per option.

Fallbacks come from :data:`airflow_lineage_plus.provider_info.OPTIONS`, so a machine without a config
file still gets working single-machine defaults. Nothing is cached: the values are cheap to read and
tests change them through environment variables.
"""

from __future__ import annotations

import os
from pathlib import Path

from airflow_lineage_plus.provider_info import OPTIONS, SECTION


def _get(option: str) -> str:
    from airflow.configuration import conf

    value = conf.get(SECTION, option, fallback=OPTIONS[option]["default"])
    return str(value) if value is not None else str(OPTIONS[option]["default"])


def parse_bool(value: object) -> bool:
    """A configuration flag: ``True``/``"true"``/``"1"``/``"yes"``/``"on"`` (any case) are true."""
    if isinstance(value, str):
        return value.strip().lower() in {"1", "true", "t", "yes", "y", "on"}
    return bool(value)


def _get_bool(option: str) -> bool:
    return parse_bool(_get(option))


def _get_int(option: str) -> int:
    return int(_get(option))


def airflow_home() -> Path:
    """``$AIRFLOW_HOME``, as Airflow resolves it."""
    from airflow.configuration import AIRFLOW_HOME

    return Path(AIRFLOW_HOME)


def is_disabled() -> bool:
    """[lineage_plus] disabled."""
    return _get_bool("disabled")


def event_log_path() -> Path:
    """[lineage_plus] event_log_path; empty means ``$AIRFLOW_HOME/lineage_plus/events.jsonl``."""
    configured = _get("event_log_path").strip()
    if configured:
        return Path(os.path.expanduser(configured))
    return airflow_home() / "lineage_plus" / "events.jsonl"


def index_path() -> Path | None:
    """[lineage_plus] index_path: the index of the event log; empty means beside the log, ``none`` no
    index (the log is read whole into memory): None."""
    configured = _get("index_path").strip()
    if configured.lower() == "none":
        return None
    if configured:
        return Path(os.path.expanduser(configured))
    return event_log_path().with_name(event_log_path().name + ".lpindex")


def graph_source() -> str:
    """[lineage_plus] graph_source: ``events`` or ``marquez``."""
    value = _get("graph_source").strip().lower() or "events"
    if value not in {"events", "marquez"}:
        raise ValueError(f"[lineage_plus] graph_source must be 'events' or 'marquez', not {value!r}")
    return value


def marquez_url() -> str:
    """[lineage_plus] marquez_url."""
    return _get("marquez_url").strip().rstrip("/")


def marquez_api_key() -> str:
    """[lineage_plus] marquez_api_key."""
    return _get("marquez_api_key").strip()


def marquez_timeout() -> float:
    """[lineage_plus] marquez_timeout, in seconds."""
    return float(_get("marquez_timeout"))


def source_repository_url() -> str:
    """[lineage_plus] source_repository_url, else env LINEAGE_PLUS_REPOSITORY_URL."""
    return _get("source_repository_url").strip() or os.environ.get("LINEAGE_PLUS_REPOSITORY_URL", "")


def source_commit() -> str:
    """[lineage_plus] source_commit, else env LINEAGE_PLUS_COMMIT, else GIT_COMMIT."""
    return (
        _get("source_commit").strip()
        or os.environ.get("LINEAGE_PLUS_COMMIT", "")
        or os.environ.get("GIT_COMMIT", "")
    )


def sql_max_length() -> int:
    """[lineage_plus] sql_max_length."""
    return _get_int("sql_max_length")


def schema_max_columns() -> int:
    """[lineage_plus] schema_max_columns."""
    return _get_int("schema_max_columns")


def event_size_budget() -> int:
    """[lineage_plus] event_size_budget, in bytes."""
    return _get_int("event_size_budget")


def quality_include_values() -> bool:
    """[lineage_plus] quality_include_values."""
    return _get_bool("quality_include_values")


def emit_skip_records() -> bool:
    """[lineage_plus] emit_skip_records."""
    return _get_bool("emit_skip_records")


def skip_ledger_path() -> Path:
    """[lineage_plus] skip_ledger_path; empty means ``$AIRFLOW_HOME/lineage_plus/skip_records.sqlite``."""
    configured = _get("skip_ledger_path").strip()
    if configured:
        return Path(os.path.expanduser(configured))
    return airflow_home() / "lineage_plus" / "skip_records.sqlite"


def ui_max_nodes() -> int:
    """[lineage_plus] ui_max_nodes."""
    return _get_int("ui_max_nodes")


def openlineage_namespace() -> str:
    """The job namespace the OpenLineage provider uses ([openlineage] namespace)."""
    from airflow.providers.openlineage import conf as ol_conf

    return str(ol_conf.namespace())


def airflow_api_base_path() -> str:
    """Path part of Airflow's ``[api] base_url`` (``/`` when unset), always ending with ``/``."""
    from urllib.parse import urlsplit

    from airflow.configuration import conf

    path = urlsplit(conf.get("api", "base_url", fallback="") or "").path or "/"
    return path if path.endswith("/") else path + "/"
