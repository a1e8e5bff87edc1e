"""Shared by the act tests (its fixtures are re-exported by ``conftest.py``): the real runs they share once
per session: the sample orders pipeline on a good day, then on a day whose staging load fails, with impact
alerts on, through a real SMTP server."""

from __future__ import annotations

import json
import os
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from tests.support.harness import REPO, TESTS, AirflowRunner, DagRunResult, Recording
from tests.support.smtp_server import LocalSmtp

if str(TESTS / "samples") not in sys.path:
    sys.path.insert(0, str(TESTS / "samples"))

from tests.support.sample_world import BUCKET, ORDERS_DAG, LocalS3, make_world

BASE_URL = "http://airflow.example.test:8080"
RECIPIENTS = {"team:commerce-data": "commerce-data@example.com", "team:analytics": ["analytics@example.com"]}
ADDRESSES = ("commerce-data@example.com", "analytics@example.com")


@dataclass
class AlertedPipeline:
    """The shared event log, the two runs, the SMTP server and the environment alerts ran with."""

    log: Path
    good: DagRunResult
    failed: DagRunResult
    smtp: LocalSmtp
    env: dict[str, str]
    failure_messages: int


def alert_env(smtp: LocalSmtp, log: Path) -> dict[str, str]:
    """Airflow configuration with alerts on: SMTP notifier, recipients, the shared event log."""
    return {
        "AIRFLOW__LINEAGE_PLUS__EVENT_LOG_PATH": str(log),
        "AIRFLOW__LINEAGE_PLUS__ALERT_NOTIFIER": "smtp",
        "AIRFLOW__LINEAGE_PLUS__ALERT_RECIPIENTS": json.dumps(RECIPIENTS),
        # both teams' addresses read as Airflow's default simple-auth-manager user, who reads every DAG
        "AIRFLOW__LINEAGE_PLUS__ALERT_USERS": json.dumps(dict.fromkeys(ADDRESSES, "admin")),
        "AIRFLOW__LINEAGE_PLUS__ALERT_SMTP_CONN_ID": "smtp_alerts",
        "AIRFLOW__LINEAGE_PLUS__ALERT_TIMEOUT": "90",
        "AIRFLOW_CONN_SMTP_ALERTS": smtp.connection(),
        "AIRFLOW__API__BASE_URL": BASE_URL,
    }


@pytest.fixture(scope="session")
def smtp() -> Iterator[LocalSmtp]:
    with LocalSmtp() as server:
        yield server


@pytest.fixture(scope="session")
def alerted_pipeline(
    airflow_db: Path, smtp: LocalSmtp, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[AlertedPipeline]:
    root = tmp_path_factory.mktemp("alerted-pipeline")
    log = root / "events-ecommerce_orders.jsonl"  # the runner's log: both runs append to it
    s3 = LocalS3()
    s3.start()
    try:
        s3.create_bucket(BUCKET)
        world = make_world(root / "world", s3)
        # the sample's DAG helpers, and this checkout's package ahead of any installed copy
        paths = [str(REPO / "dags"), str(REPO), os.environ.get("PYTHONPATH", "")]
        env = {**world.env, **alert_env(smtp, log), "PYTHONPATH": os.pathsep.join(p for p in paths if p)}
        runner = AirflowRunner(root)
        good, failed = runner.run_many(
            ORDERS_DAG,
            recordings=[
                # dates of its own: tests/samples records 06-01..06-03
                Recording("ecommerce_orders", "2024-07-01", {"order_count": 40}),
                Recording(
                    "ecommerce_orders", "2024-07-03", {"order_count": 25, "fail_stage": "load_stg_orders"}
                ),
            ],
            env=env,
        )
        # the courier the failed task handed off to sends one alert per owner: two owners downstream
        smtp.wait_for(2)
        yield AlertedPipeline(log, good, failed, smtp, env, failure_messages=len(smtp.messages))
    finally:
        s3.stop()
