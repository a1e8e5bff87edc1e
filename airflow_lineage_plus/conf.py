"""The one place that reads ``[lineage_plus]`` configuration: one small function per option.

Fallbacks come from :data:`airflow_lineage_plus.provider_info.OPTIONS`, so a machine without a config
file still gets working single-machine defaults. Each value is read once per process, and again whenever
one of its environment variables changes (how tests and operators change them): Airflow's lookup would
be paid several times per event otherwise (docs/reliability.md, "What a user pays per event"), and the
config file does not change under a running process.

A process that has not imported Airflow (the ``lineage-plus`` command) reads an option without it where
Airflow's answer is plain: the ``AIRFLOW__LINEAGE_PLUS__<OPTION>`` variable, else the option in
``airflow.cfg`` (``$AIRFLOW_CONFIG``, else ``$AIRFLOW_HOME/airflow.cfg``), else the default, each with
Airflow's ``expand_env_var``. Importing Airflow costs more than a quick answer itself. Whatever needs
Airflow (an ``_cmd`` or ``_secret`` form, unit-test mode, a file the standard parser cannot read) is asked
of Airflow, and a process that has imported Airflow always asks it.
"""

from __future__ import annotations

import configparser
import functools
import os
import sys
from pathlib import Path

from airflow_lineage_plus.provider_info import OPTIONS, SECTION

_read: dict[str, tuple[tuple[str | None, ...], str]] = {}


def _get(option: str) -> str:
    name = f"AIRFLOW__{SECTION.upper()}__{option.upper()}"
    env = (os.environ.get(name), os.environ.get(f"{name}_CMD"), os.environ.get(f"{name}_SECRET"))
    cached = _read.get(option)
    if cached is not None and cached[0] == env:
        return cached[1]
    text = _without_airflow(option, env)
    if text is None:
        from airflow.configuration import conf

        value = conf.get(SECTION, option, fallback=OPTIONS[option]["default"])
        text = str(value) if value is not None else str(OPTIONS[option]["default"])
    _read[option] = (env, text)
    return text


def _without_airflow(option: str, env: tuple[str | None, str | None, str | None]) -> str | None:
    """Airflow's answer for ``option`` read without importing Airflow, or None where only Airflow knows."""
    if _airflow_loaded() or env[1] is not None or env[2] is not None:
        return None
    if os.environ.get("AIRFLOW__CORE__UNIT_TEST_MODE") is not None:
        return None
    if env[0] is not None:
        return _expand_env_var(env[0])
    config = os.environ.get("AIRFLOW_CONFIG")
    path = _expand_env_var(config) if config is not None else os.path.join(_home(), "airflow.cfg")
    try:
        parser = _config_file(path)
        if any(parser.has_option(SECTION, f"{option}{form}") for form in ("_cmd", "_secret")):
            return None
        if not parser.has_option(SECTION, option):
            return str(OPTIONS[option]["default"])
        return _expand_env_var(parser.get(SECTION, option))
    except (configparser.Error, OSError, UnicodeDecodeError):
        return None


@functools.lru_cache(maxsize=4)
def _config_file(path: str) -> configparser.ConfigParser:
    """``airflow.cfg`` at ``path``, parsed once per process (as Airflow does), with its interpolation."""
    parser = configparser.ConfigParser(strict=False)
    parser.read(path, encoding="utf-8")
    return parser


def _airflow_loaded() -> bool:
    """Whether this process has imported Airflow's configuration (then it is asked, at no extra cost)."""
    return "airflow.configuration" in sys.modules


def _expand_env_var(value: str) -> str:
    """Airflow's ``expand_env_var``: ``$VAR`` and ``~`` expanded until nothing changes."""
    while True:
        expanded = os.path.expanduser(os.path.expandvars(value))
        if expanded == value:
            return expanded
        value = expanded


def _home() -> str:
    """``$AIRFLOW_HOME`` as Airflow resolves it (``~/airflow`` when unset)."""
    return _expand_env_var(os.environ.get("AIRFLOW_HOME", "~/airflow"))


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
    """``$AIRFLOW_HOME``, as Airflow resolves it (read without Airflow where it is not imported)."""
    if not _airflow_loaded():
        return Path(_home())
    from airflow.configuration import AIRFLOW_HOME

    return Path(AIRFLOW_HOME)


def package_home() -> Path:
    """``$AIRFLOW_HOME/lineage_plus``: the package's own files (created ``0750``, :mod:`.private_dirs`)."""
    return airflow_home() / "lineage_plus"


def is_disabled() -> bool:
    """[lineage_plus] disabled."""
    return _get_bool("disabled")


def event_log_path() -> Path:
    """[lineage_plus] event_log_path; empty means ``$AIRFLOW_HOME/lineage_plus/events.jsonl``."""
    configured = _get("event_log_path").strip()
    if configured:
        return Path(os.path.expanduser(configured))
    return package_home() / "events.jsonl"


def event_log_file_mode() -> int:
    """[lineage_plus] event_log_file_mode: permissions (octal, e.g. ``0640``) of a new event log."""
    return _get_mode("event_log_file_mode")


def event_log_dir_mode() -> int:
    """[lineage_plus] event_log_dir_mode: permissions (octal, e.g. ``0750``) of a new event log directory."""
    return _get_mode("event_log_dir_mode")


def _get_mode(option: str) -> int:
    value = _get(option).strip()
    try:
        mode = int(value, 8)
    except ValueError:
        mode = -1
    if not 0 <= mode <= 0o777:
        raise ValueError(
            f"[lineage_plus] {option} must be octal permissions such as "
            f"{OPTIONS[option]['default']}, not {value!r}"
        )
    return mode


def graph_source() -> str:
    """[lineage_plus] graph_source: ``events``, ``store`` or ``marquez``."""
    value = _get("graph_source").strip().lower() or "store"
    if value not in {"events", "store", "marquez"}:
        raise ValueError(f"[lineage_plus] graph_source must be 'events', 'store' or 'marquez', not {value!r}")
    return value


def store_url(beside: Path | None = None) -> str:
    """[lineage_plus] store_url; empty means a SQLite file beside the event log (``beside``, else
    ``event_log_path``) named like it with ``.db``: ``$AIRFLOW_HOME/lineage_plus/events.db``."""
    configured = _get("store_url").strip()
    if configured:
        return configured
    log = beside if beside is not None else event_log_path()
    return f"sqlite:///{log.with_suffix('.db').absolute()}"


def store_read_timeout() -> float | None:
    """[lineage_plus] store_read_timeout, in seconds; None (empty, 0 or not a number) for no limit."""
    try:
        seconds = float(_get("store_read_timeout").strip() or 0)
    except ValueError:
        return None
    return seconds if seconds > 0 and seconds != float("inf") else None


def store_prepared_statements() -> bool:
    """[lineage_plus] store_prepared_statements."""
    return _get_bool("store_prepared_statements")


def retention_days() -> float | None:
    """[lineage_plus] retention_days: None (empty or 0) keeps every raw event."""
    value = _get("retention_days").strip()
    try:
        days = float(value) if value else 0.0
    except ValueError:
        days = -1.0
    if days < 0 or days != days:
        raise ValueError(f"[lineage_plus] retention_days must be a number of days such as 90, not {value!r}")
    return days or None


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


def skip_claims_table() -> str:
    """[lineage_plus] skip_claims_table: the metadata-database table of the skip records' claims."""
    return _get("skip_claims_table").strip()


def skip_query_timeout() -> float:
    """[lineage_plus] skip_query_timeout, in seconds, per statement of the skip records."""
    return float(_get("skip_query_timeout"))


def ui_max_nodes() -> int:
    """[lineage_plus] ui_max_nodes."""
    return _get_int("ui_max_nodes")


def ui_request_timeout() -> float:
    """[lineage_plus] ui_request_timeout, in seconds (at least 0.1)."""
    return max(0.1, float(_get("ui_request_timeout")))


def ui_max_queries() -> int:
    """[lineage_plus] ui_max_queries (at least 1)."""
    return max(1, _get_int("ui_max_queries"))


def collector_max_bytes() -> int:
    """[lineage_plus] collector_max_bytes (at least 1 KiB)."""
    return max(1024, _get_int("collector_max_bytes"))


def collector_max_writes() -> int:
    """[lineage_plus] collector_max_writes (at least 1)."""
    return max(1, _get_int("collector_max_writes"))


def collector_queue_size() -> int:
    """[lineage_plus] collector_queue_size (at least 1)."""
    return max(1, _get_int("collector_queue_size"))


def spool_retry_seconds() -> float:
    """[lineage_plus] spool_retry_seconds (0 or more; 0: no retry process)."""
    return max(0.0, _get_float("spool_retry_seconds"))


def collector_url() -> str:
    """[lineage_plus] collector_url (the API server the transport sends to; empty: none)."""
    return _get("collector_url").strip()


def collector_connection_id() -> str:
    """[lineage_plus] collector_connection_id (the ingest key's Airflow connection)."""
    return _get("collector_connection_id").strip()


def contract_mode() -> str:
    """[lineage_plus] contract_mode: ``warn`` (default), ``fail`` or ``off``."""
    value = _get("contract_mode").strip().lower() or "warn"
    if value not in {"warn", "fail", "off"}:
        raise ValueError(f"[lineage_plus] contract_mode must be 'warn', 'fail' or 'off', not {value!r}")
    return value


def alert_notifier() -> str:
    """[lineage_plus] alert_notifier: empty (alerts off), ``smtp`` or a dotted path."""
    return _get("alert_notifier").strip()


def alert_recipients() -> dict[str, list[str]]:
    """[lineage_plus] alert_recipients: owner -> where its alerts go (always a list)."""
    import json

    raw = _get("alert_recipients").strip() or "{}"
    try:
        value = json.loads(raw)
    except ValueError as exc:
        raise ValueError(f"[lineage_plus] alert_recipients is not JSON: {exc}") from exc
    if not isinstance(value, dict):
        raise ValueError('[lineage_plus] alert_recipients must be a JSON object {"owner": "address"}')
    return {str(k): [v] if isinstance(v, str) else [str(x) for x in v] for k, v in value.items()}


def alert_users() -> dict[str, str]:
    """[lineage_plus] alert_users: alert recipient -> the Airflow user name whose rights it has."""
    import json

    raw = _get("alert_users").strip() or "{}"
    try:
        value = json.loads(raw)
    except ValueError as exc:
        raise ValueError(f"[lineage_plus] alert_users is not JSON: {exc}") from exc
    if not isinstance(value, dict) or not all(isinstance(v, str) for v in value.values()):
        raise ValueError('[lineage_plus] alert_users must be a JSON object {"recipient": "user name"}')
    return {str(k): v for k, v in value.items()}


def alert_smtp_conn_id() -> str:
    """[lineage_plus] alert_smtp_conn_id."""
    return _get("alert_smtp_conn_id").strip() or "smtp_default"


def alert_from_email() -> str | None:
    """[lineage_plus] alert_from_email (None: the SMTP connection's sender)."""
    return _get("alert_from_email").strip() or None


def alert_timeout() -> float:
    """[lineage_plus] alert_timeout, in seconds."""
    return float(_get("alert_timeout"))


def alert_claims_path() -> Path:
    """Where alert claims are noted when Airflow's metadata database cannot be reached."""
    return package_home() / "alert_claims.sqlite"


def airflow_base_url() -> str:
    """Airflow's ``[api] base_url`` without a trailing slash (``http://localhost:8080`` when unset)."""
    from airflow.configuration import conf

    return (conf.get("api", "base_url", fallback="") or "http://localhost:8080").rstrip("/")


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


def _get_float(option: str) -> float:
    return float(_get(option))


def what_changed_baseline_runs() -> int:
    """[lineage_plus] what_changed_baseline_runs."""
    return _get_int("what_changed_baseline_runs")


def what_changed_spread() -> float:
    """[lineage_plus] what_changed_spread."""
    return _get_float("what_changed_spread")


def what_changed_min_relative() -> float:
    """[lineage_plus] what_changed_min_relative."""
    return _get_float("what_changed_min_relative")


def what_changed_duration_relative() -> float:
    """[lineage_plus] what_changed_duration_relative."""
    return _get_float("what_changed_duration_relative")


def what_changed_duration_seconds() -> float:
    """[lineage_plus] what_changed_duration_seconds."""
    return _get_float("what_changed_duration_seconds")


def what_changed_null_rate_points() -> float:
    """[lineage_plus] what_changed_null_rate_points."""
    return _get_float("what_changed_null_rate_points")


def what_changed_late_factor() -> float:
    """[lineage_plus] what_changed_late_factor."""
    return _get_float("what_changed_late_factor")


def what_changed_late_minutes() -> float:
    """[lineage_plus] what_changed_late_minutes."""
    return _get_float("what_changed_late_minutes")


def what_changed_min_baseline() -> int:
    """[lineage_plus] what_changed_min_baseline."""
    return _get_int("what_changed_min_baseline")


def what_changed_max_nodes() -> int:
    """[lineage_plus] what_changed_max_nodes."""
    return _get_int("what_changed_max_nodes")


def what_changed_thresholds() -> dict[str, float]:
    """The ``what-changed`` thresholds, as the keyword arguments of ``graph.changes.Thresholds``."""
    return {
        "spread": what_changed_spread(),
        "min_relative": what_changed_min_relative(),
        "duration_relative": what_changed_duration_relative(),
        "duration_seconds": what_changed_duration_seconds(),
        "null_rate_points": what_changed_null_rate_points(),
        "late_factor": what_changed_late_factor(),
        "late_minutes": what_changed_late_minutes(),
        "min_baseline": what_changed_min_baseline(),
    }
