"""Provider metadata read by Airflow's ProvidersManager through the ``apache_airflow_provider`` entry point.

The ``[lineage_plus]`` configuration section is declared here, once: :mod:`airflow_lineage_plus.conf`
takes its fallbacks from :data:`OPTIONS`, so a default is written in one place only.
"""

from __future__ import annotations

from typing import Any

from airflow_lineage_plus.__about__ import __version__

SECTION = "lineage_plus"

OPTIONS: dict[str, dict[str, Any]] = {
    "disabled": {
        "description": "Turn every part of airflow-lineage-plus off (listener, facets, UI routes) "
        "without uninstalling it. The OpenLineage provider keeps working as before.",
        "type": "boolean",
        "default": "False",
        "example": "True",
    },
    "event_log_path": {
        "description": "Newline-delimited OpenLineage event log: the spool where the lineage_plus "
        "transport keeps events the lineage store could not take in time (they go on at its next write, "
        "or with ``lineage-plus replay``), and the history an earlier version wrote. A reader opening "
        "the store appends to it what this file gained since (never changing the file); with "
        "``graph_source = events`` the graph reads this file itself. Empty means "
        "``$AIRFLOW_HOME/lineage_plus/events.jsonl``.",
        "type": "string",
        "default": "",
        "example": "/var/lib/airflow/lineage/events.jsonl",
    },
    "event_log_file_mode": {
        "description": "Permissions (octal) the event log is created with. Lineage carries SQL, URIs "
        "and error messages: by default only the owner writes and its group reads (the API server "
        "and the CLI need read access through the group).",
        "type": "string",
        "default": "0640",
        "example": "0600",
    },
    "event_log_dir_mode": {
        "description": "Permissions (octal) the event log's directory is created with, when the event "
        "log transport creates it.",
        "type": "string",
        "default": "0750",
        "example": "0700",
    },
    "graph_source": {
        "description": "Where the Lineage view and the CLI read lineage from: ``store`` (the lineage "
        "store at ``store_url``, the default), ``events`` (the event log alone) or ``marquez`` (the "
        "Marquez API at ``marquez_url``).",
        "type": "string",
        "default": "store",
        "example": "marquez",
    },
    "store_url": {
        "description": "SQLAlchemy URL of the lineage store (raw events in a database; ``lineage-plus "
        "import`` fills it from an event log). Empty means SQLite in WAL mode beside the event log, "
        "named like it with ``.db``: ``$AIRFLOW_HOME/lineage_plus/events.db`` by default (created with "
        "``event_log_file_mode`` and ``event_log_dir_mode``); across machines a PostgreSQL database of "
        "its own or Airflow's metadata database (``postgresql+psycopg://user:password@host/db``); "
        "MySQL (``mysql+mysqldb://``) is written for but untested.",
        "type": "string",
        "default": "",
        "example": "postgresql+psycopg://airflow:airflow@postgres/airflow",
    },
    "store_read_timeout": {
        "description": "Seconds one statement reading the lineage store for a question (the Lineage view, "
        "the CLI, alerts, freshness) may run before it is stopped: PostgreSQL's statement_timeout for that "
        "read, an interrupt on SQLite; the question then fails with a message saying so (the view answers "
        "503). A question's statements take milliseconds (docs/graph.md); this bounds one gone wrong, so it "
        "never holds a thread of the view or the database (Airflow's own, when the store is in it). Empty "
        "or 0: no limit. Writes are not bounded by it.",
        "type": "float",
        "default": "30.0",
        "example": "5.0",
    },
    "store_prepared_statements": {
        "description": "Let psycopg prepare the statements the lineage store's readers and the API server's "
        "collector use repeatedly on PostgreSQL (after five uses, its default): questions and imports are "
        "faster (docs/graph.md). Only for a PostgreSQL reached directly, or through a pooler that keeps "
        "prepared statements apart (PgBouncer 1.21 or later with max_prepared_statements set): behind "
        "PgBouncer in transaction mode a prepared statement fails, or another client's of the same name "
        "runs. Off by default, as Airflow's Celery provider does for its result backend.",
        "type": "boolean",
        "default": "False",
        "example": "True",
    },
    "retention_days": {
        "description": "Raw events in the lineage store older than this many days are deleted (in small "
        "batches) by ``lineage-plus retention``; each job's current runs are kept, so the graph and the "
        "latest runs survive, and time travel before the window says it is not exact. Empty or 0 keeps "
        "everything.",
        "type": "float",
        "default": "",
        "example": "90",
    },
    "marquez_url": {
        "description": "Base URL of a Marquez API server, used when ``graph_source = marquez`` and by "
        "``lineage-plus replay``.",
        "type": "string",
        "default": "",
        "example": "http://marquez:5000",
    },
    "marquez_api_key": {
        "description": "API key sent as a Bearer token to Marquez. Prefer the environment variable "
        "AIRFLOW__LINEAGE_PLUS__MARQUEZ_API_KEY or a secrets backend over the config file.",
        "type": "string",
        "sensitive": True,
        "default": "",
        "example": "my-marquez-key",
    },
    "marquez_timeout": {
        "description": "Seconds to wait for one Marquez request before giving up with a clear error.",
        "type": "float",
        "default": "5.0",
        "example": "2.5",
    },
    "source_repository_url": {
        "description": "Repository URL put in the sourceCodeLocation job facet of declared tasks. Empty "
        "falls back to the environment variable LINEAGE_PLUS_REPOSITORY_URL.",
        "type": "string",
        "default": "",
        "example": "https://github.com/acme/data-pipelines",
    },
    "source_commit": {
        "description": "Commit (version) put in the sourceCodeLocation job facet. Empty falls back to "
        "LINEAGE_PLUS_COMMIT, then GIT_COMMIT.",
        "type": "string",
        "default": "",
        "example": "3f1c2e9",
    },
    "sql_max_length": {
        "description": "SQL job facets longer than this many characters are cut, with a marker, and the "
        "cut is counted and logged.",
        "type": "integer",
        "default": "4000",
        "example": "10000",
    },
    "schema_max_columns": {
        "description": "Schemas with more columns than this are summarised: the first columns are kept "
        "and the rest counted in the facet.",
        "type": "integer",
        "default": "500",
        "example": "2000",
    },
    "event_size_budget": {
        "description": "Largest event, in bytes of JSON, this package lets its facets grow an event to. "
        "Above it facets are trimmed in the documented order (docs/reliability.md).",
        "type": "integer",
        "default": "1000000",
        "example": "250000",
    },
    "quality_include_values": {
        "description": "Allow data-quality facets to carry values (min, max). Off by default: only "
        "counts leave the task.",
        "type": "boolean",
        "default": "False",
        "example": "True",
    },
    "emit_skip_records": {
        "description": "When a DAG run ends, emit one record for each task instance the scheduler "
        "skipped without running it.",
        "type": "boolean",
        "default": "True",
        "example": "False",
    },
    "skip_claims_table": {
        "description": "Table in Airflow's metadata database in which the skip-state listener claims "
        "each record's runId before emitting it, so that of all the schedulers (and API servers) "
        "reporting a DAG run exactly one emits each record. Created on first use, outside Airflow's "
        "migrations; see docs/deployment.md to remove it.",
        "type": "string",
        "default": "lineage_plus_skip_claims",
        "example": "lineage_plus_skip_claims",
    },
    "skip_query_timeout": {
        "description": "Seconds each metadata-database statement of the skip records may take "
        "(PostgreSQL statement_timeout, MySQL max_execution_time). The statements run in the "
        "OpenLineage provider's process pool, never in the scheduler loop; on a timeout that DAG "
        "run's records are lost with one warning.",
        "type": "float",
        "default": "5.0",
        "example": "2.0",
    },
    "contract_mode": {
        "description": "What a task does when the schema it wrote breaks the DataContract of one of its "
        "declared outputs (column removed, type narrowed or changed, nulls in a not-null column): "
        "``warn`` logs it and records a failed dataQualityAssertions entry, ``fail`` also fails the task, "
        "``off`` checks nothing (docs/alerts.md).",
        "type": "string",
        "default": "warn",
        "example": "fail",
    },
    "alert_notifier": {
        "description": "How impact and freshness alerts are sent: empty (no alerts), ``smtp`` (the SMTP "
        "provider's SmtpNotifier through ``alert_smtp_conn_id``) or the dotted path of a callable that "
        "takes an ``airflow_lineage_plus.act.message.Alert`` and returns an Airflow notifier (any "
        "``BaseNotifier``, such as the Slack provider's). See docs/alerts.md.",
        "type": "string",
        "default": "",
        "example": "smtp",
    },
    "alert_recipients": {
        "description": "JSON object mapping an owner (as declared: ``team:analytics``) to where its alerts "
        "go: an address or a list of addresses for ``smtp``, whatever the notifier expects otherwise. "
        "Owners that are e-mail addresses need no entry.",
        "type": "string",
        "default": "",
        "example": '{"team:analytics": "analytics@example.com"}',
    },
    "alert_users": {
        "description": "JSON object mapping an alert recipient (an address of ``alert_recipients`` or an "
        "owner that is an address) to the Airflow user whose rights it has. An alert tells its recipient "
        "only what the Lineage view shows that user; a recipient with no entry is matched to the FAB user "
        "with that e-mail; one with no user gets only its own datasets' names and that an upstream failed "
        "(docs/alerts.md).",
        "type": "string",
        "default": "",
        "example": '{"analytics@example.com": "ana", "#data-alerts": "alerts-bot"}',
    },
    "alert_smtp_conn_id": {
        "description": "Airflow connection of the SMTP server the ``smtp`` notifier sends through.",
        "type": "string",
        "default": "smtp_default",
        "example": "smtp_alerts",
    },
    "alert_from_email": {
        "description": "Sender of alert e-mails; empty means the SMTP connection's ``from_email``.",
        "type": "string",
        "default": "",
        "example": "lineage-alerts@example.com",
    },
    "alert_timeout": {
        "description": "Seconds an alert hand-off may take in all (reading the lineage, claiming, sending) "
        "before it is given up; it runs in a process of its own, never in the task or the scheduler.",
        "type": "float",
        "default": "60.0",
        "example": "20",
    },
    "ui_max_nodes": {
        "description": "Most nodes the Lineage view draws around one node; the rest show as 'N more'.",
        "type": "integer",
        "default": "300",
        "example": "1000",
    },
    "ui_request_timeout": {
        "description": "Seconds a Lineage view request may take. Past it the view answers 503 with a "
        "Retry-After header (the page retries), so a slow Marquez or a large event log never holds the API "
        "server; the question goes on in the view's own thread and its answer is dropped.",
        "type": "float",
        "default": "10.0",
        "example": "30.0",
    },
    "collector_max_bytes": {
        "description": "Largest request body the OpenLineage endpoint (POST /lineage-plus/api/v1/lineage "
        "and .../lineage/batch) accepts, in bytes, before and after gzip inflation; larger ones get 413.",
        "type": "integer",
        "default": "16777216",
        "example": "1048576",
    },
    "collector_max_writes": {
        "description": "The OpenLineage endpoint's own threads (not the API server's pool) that look up "
        "ingest keys and ask the auth manager. Requests beyond wait in the endpoint's queue "
        "(collector_queue_size). The endpoint's writer process checks and stores requests in groups, "
        "one transaction for every request that came while it wrote the last group.",
        "type": "integer",
        "default": "4",
        "example": "8",
    },
    "collector_queue_size": {
        "description": "Events the OpenLineage endpoint holds at once, from a request's arrival until it "
        "is answered (authenticated, read, checked, waiting for or going into the lineage store; a request "
        "counts as one event until its body is read). A request that finds the queue full, or whose events "
        "would take it past this, gets 429 with Retry-After; a request alone is taken whatever its size.",
        "type": "integer",
        "default": "1000",
        "example": "5000",
    },
    "collector_url": {
        "description": "Base URL of the Airflow API server whose OpenLineage endpoint the event-log "
        "transport sends each event to (<url>/lineage-plus/api/v1/lineage, with the ingest key of "
        "collector_connection_id), for workers and schedulers that do not reach the lineage store. Empty: "
        "the transport writes store_url itself. An event not accepted within the transport's store_timeout "
        "waits in the event log (the spool) and goes later. See docs/collector.md.",
        "type": "string",
        "default": "",
        "example": "http://airflow-api-server:8080",
    },
    "spool_retry_seconds": {
        "description": "After the lineage_plus transport spooled an event (the store or the API server of "
        "collector_url did not take it in time), a background process of its own tries to send the spool "
        "on, every few seconds (at most 15 s apart), until nothing waits in it or this many seconds passed. "
        "So events reach the destination soon after it is back, even when no event follows. A transport "
        'with ``"deferred": true`` leaves every event to that process (docs/collector.md). 0: no such '
        "process (the spool goes on at the next write that succeeds, or with ``lineage-plus replay``; a "
        "deferred transport writes directly).",
        "type": "float",
        "default": "3600",
        "example": "0",
    },
    "collector_connection_id": {
        "description": "Airflow connection whose password is the OpenLineage endpoint's ingest key "
        "(sent as 'Authorization: Bearer <key>' or 'X-Lineage-Plus-Key'); no such connection: no key.",
        "type": "string",
        "default": "lineage_plus_collector",
        "example": "lineage_plus_collector",
    },
    "ui_max_queries": {
        "description": "Lineage questions the view answers at the same time, each in a thread of its own "
        "(not the API server's). Requests beyond it wait, within ui_request_timeout, for a free one.",
        "type": "integer",
        "default": "4",
        "example": "8",
    },
    "what_changed_baseline_runs": {
        "description": (
            "How many earlier completed runs of each node ``what-changed`` compares the latest run with "
            "(``--baseline-runs`` overrides it). See docs/what-changed.md."
        ),
        "type": "integer",
        "default": "7",
        "example": "14",
    },
    "what_changed_spread": {
        "description": (
            "How many robust deviations (1.4826 x the median absolute deviation of the baseline runs) a "
            "figure must move from the baseline's median to count as a change in ``what-changed``."
        ),
        "type": "float",
        "default": "3.0",
        "example": "4.0",
    },
    "what_changed_min_relative": {
        "description": (
            "The least relative change (a fraction of the baseline median) of a row count, null count or "
            "byte size that ``what-changed`` reports, however steady the baseline."
        ),
        "type": "float",
        "default": "0.05",
        "example": "0.1",
    },
    "what_changed_duration_relative": {
        "description": (
            "The least relative change of a run's duration (a fraction of the baseline median) that ``what-"
            "changed`` reports."
        ),
        "type": "float",
        "default": "0.5",
        "example": "1.0",
    },
    "what_changed_duration_seconds": {
        "description": (
            "The least change of a run's duration, in seconds, that ``what-changed`` reports (a run a few "
            "seconds slower than usual is noise)."
        ),
        "type": "float",
        "default": "60",
        "example": "300",
    },
    "what_changed_null_rate_points": {
        "description": (
            "How much a column's null rate (nulls / rows) must rise, as a fraction (0.01: one percentage "
            "point), for ``what-changed`` to report it."
        ),
        "type": "float",
        "default": "0.01",
        "example": "0.05",
    },
    "what_changed_late_factor": {
        "description": (
            "A dataset is later than usual in ``what-changed`` when its latest write is older, or came after"
            " the one before, by more than this many times its usual interval between writes (and "
            "``what_changed_late_minutes`` more than it)."
        ),
        "type": "float",
        "default": "1.5",
        "example": "2.0",
    },
    "what_changed_late_minutes": {
        "description": (
            "The least lateness, in minutes past the usual interval between writes, that ``what-changed`` "
            "reports."
        ),
        "type": "float",
        "default": "10",
        "example": "60",
    },
    "what_changed_max_nodes": {
        "description": (
            "How many of the nodes upstream of a dataset ``what-changed`` compares, nearest the dataset "
            "first (each costs reading its recent runs back). When the walk reaches more, the answer's "
            "``notCompared`` says how many farther nodes were left out: it never claims that nothing "
            "changed there. See docs/what-changed.md."
        ),
        "type": "integer",
        "default": "200",
        "example": "500",
    },
    "what_changed_min_baseline": {
        "description": (
            "Fewer earlier completed runs than this and ``what-changed`` does not compare a node's figures "
            "(it says it cannot tell)."
        ),
        "type": "integer",
        "default": "3",
        "example": "5",
    },
}


def get_provider_info() -> dict[str, Any]:
    """Return the provider description Airflow lists in ``airflow providers list``."""
    return {
        "package-name": "airflow-lineage-plus",
        "name": "Lineage Plus",
        "description": "Declared, connected and truthful OpenLineage lineage for Airflow tasks, with a "
        "lineage graph, CLI and a Lineage view in the Airflow UI.",
        "versions": [__version__],
        "plugins": [
            {"name": "lineage_plus", "plugin-class": "airflow_lineage_plus.plugin.LineagePlusPlugin"},
        ],
        "config": {
            SECTION: {
                "description": "Settings of airflow-lineage-plus. Every option also reads from "
                "AIRFLOW__LINEAGE_PLUS__<OPTION>.",
                "options": {name: {"version_added": None, **spec} for name, spec in OPTIONS.items()},
            }
        },
    }
