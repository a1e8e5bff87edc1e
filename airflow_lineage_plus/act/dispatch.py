"""What the courier does with a job: open the configured lineage, build the alerts, send each once."""

from __future__ import annotations

from typing import Any

from airflow_lineage_plus import conf
from airflow_lineage_plus.act.failure import Failure
from airflow_lineage_plus.act.failure_alerts import failure_alerts
from airflow_lineage_plus.act.notifiers import Outcome, configured_factory, factory_named, send_once
from airflow_lineage_plus.claims import open_alert_claims
from airflow_lineage_plus.sources import open_configured_source


def run_job(job: dict[str, Any], deadline: float | None = None) -> Outcome | None:
    """Send the alerts of one handed-off job before ``deadline`` (``time.monotonic()``); None when no
    notifier is configured."""
    factory = factory_named(job["notifier"]) if job.get("notifier") else configured_factory()
    if factory is None:
        return None
    if job["kind"] != "failure":
        raise ValueError(f"unknown alert job kind {job['kind']!r}")
    source = open_configured_source(explain_missing_log=True)
    try:
        alerts = failure_alerts(
            source,
            Failure.from_json(job["failure"]),
            base_url=conf.airflow_base_url(),
            recipients=conf.alert_recipients(),
        )
    finally:
        source.close()
    return send_once(alerts, open_alert_claims(), factory, deadline)
