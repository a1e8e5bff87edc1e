"""Impact alerts on a real failure: the sample's staging load fails, and each owner downstream gets one
e-mail through the SMTP provider's notifier to a real SMTP server; seen again by another process (the
way the API server sees a task marked failed, or the scheduler one it fails itself), nobody gets a
second one."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from email.message import EmailMessage
from pathlib import Path

import pytest

from airflow_lineage_plus.act.message import VIEW_PATH
from airflow_lineage_plus.ui.mount import URL_PREFIX
from tests.act.alert_pipeline import BASE_URL, AlertedPipeline
from tests.support.harness import read_events
from tests.support.openlineage_spec import validate_events

pytestmark = [pytest.mark.airflow, pytest.mark.minutes(2)]

FAILED_JOB = "job%3Atest-airflow%3Aecommerce_orders.load_stg_orders"


def _failure_mails(pipeline: AlertedPipeline) -> dict[str, EmailMessage]:
    mails = [m for m in pipeline.smtp.messages if "failed" in str(m[1]["Subject"])]
    return {",".join(sorted(to)): message for to, message in mails}


def _body(message: EmailMessage) -> str:
    part = message.get_body(("html", "plain"))
    assert part is not None
    return str(part.get_content())


def test_the_failed_run_is_recorded_and_its_events_follow_the_spec(alerted_pipeline: AlertedPipeline) -> None:
    assert alerted_pipeline.good.returncode == 0, alerted_pipeline.good.output[-3000:]
    events = read_events(alerted_pipeline.log)
    assert validate_events(events) == len(events)
    failed = [e for e in alerted_pipeline.failed.task_events("load_stg_orders") if e["eventType"] == "FAIL"]
    assert len(failed) == 1


def test_each_downstream_owner_gets_exactly_one_alert(alerted_pipeline: AlertedPipeline) -> None:
    mails = _failure_mails(alerted_pipeline)
    assert alerted_pipeline.failure_messages == 2
    assert sorted(mails) == ["analytics@example.com", "commerce-data@example.com"]


def test_the_alert_names_the_failure_what_is_stale_downstream_and_who_owns_it(
    alerted_pipeline: AlertedPipeline,
) -> None:
    mail = _failure_mails(alerted_pipeline)["analytics@example.com"]
    # downstream of the staging table: the dbt model that builds the mart (run by the task
    # ecommerce_orders.fct_daily_orders), dbt's tests of the source and of the mart (docs/dbt.md)
    assert mail["Subject"] == (
        "[lineage-plus] MEDIUM impact: ecommerce_orders.load_stg_orders failed, 2 dataset(s) stale"
    )
    assert mail["From"] == "lineage-alerts@example.com"
    body = _body(mail)
    assert "Task ecommerce_orders.load_stg_orders failed." in body
    assert "SimulatedStageError: load_stg_orders failed on purpose" in body
    assert "Impact: MEDIUM (3 downstream job(s), 2 stale dataset(s))" in body
    assert "analytics.staging.stg_orders  (owners: team:commerce-data)" in body
    assert "analytics.marts.fct_daily_orders  (owners: team:analytics)  &lt;- yours" in body
    assert "test-airflow / analytics.marts.shop.fct_daily_orders.build.run" in body
    assert "You get this because team:analytics owns:" in body
    assert f'href="{BASE_URL}/lineage-plus/?node={FAILED_JOB}"' in body
    other = _body(_failure_mails(alerted_pipeline)["commerce-data@example.com"])
    assert "analytics.staging.stg_orders  (owners: team:commerce-data)  &lt;- yours" in other
    assert VIEW_PATH == URL_PREFIX


SEE_IT_AGAIN = """
import sys
from airflow.listeners.listener import get_listener_manager
from airflow.models.taskinstance import TaskInstance
from airflow.utils.session import create_session
from airflow_lineage_plus.act import courier
from airflow_lineage_plus.alerts import DownstreamOwnersNotifier

with create_session() as session:
    ti = session.query(TaskInstance).filter_by(
        dag_id="ecommerce_orders", task_id="load_stg_orders", run_id=sys.argv[1]
    ).one()
    # what the API server does when a task is marked failed by hand, and the explicit callback
    hook = get_listener_manager().hook
    hook.on_task_instance_failed(previous_state=None, task_instance=ti, error="marked failed")
    DownstreamOwnersNotifier(notifier="smtp").notify({"ti": ti, "exception": "marked failed"})
handed = list(courier._running)
codes = [p.wait(120) for p in handed]
print(len(handed), codes)
"""


def test_a_failure_seen_again_by_other_processes_sends_nothing_twice(
    alerted_pipeline: AlertedPipeline,
) -> None:
    (fail,) = [e for e in alerted_pipeline.failed.task_events("load_stg_orders") if e["eventType"] == "FAIL"]
    run_id = fail["run"]["facets"]["airflow"]["dagRun"]["run_id"]
    proc = subprocess.run(
        [sys.executable, "-c", SEE_IT_AGAIN, run_id],
        env={**os.environ, **alerted_pipeline.env},
        capture_output=True,
        text=True,
        timeout=240,
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr[-3000:]
    assert proc.stdout.strip().splitlines()[-1] == "2 [0, 0]"
    assert len(_failure_mails(alerted_pipeline)) == 2
    assert len([m for m in alerted_pipeline.smtp.messages if "failed" in str(m[1]["Subject"])]) == 2
    log = Path(os.environ["AIRFLOW_HOME"]) / "lineage_plus" / "alerts.log"
    outcomes = [
        json.loads(line.split("outcome ", 1)[1])
        for line in log.read_text().splitlines()
        if "outcome " in line
    ]
    # the first courier sent both; the two of the second process found both claimed
    assert [(o["sent"], o["alreadySent"]) for o in outcomes][-3:] == [(2, 0), (0, 2), (0, 2)]
