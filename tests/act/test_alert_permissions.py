"""Impact alerts through the Lineage view's permission model, with real FAB users and a real SMTP server.

DAG ``sec`` (team:secret) fails; ``pub`` (team:pub) reads what it writes. Each recipient is matched to a
FAB user (by e-mail, or by ``[lineage_plus] alert_users``): ``boss`` reads every DAG, ``pub`` only DAG
``pub``; ``outsider@example.com`` is nobody. The probe of issue 27 (``team:pub`` told the failed task, its
error with a customer number, and ``sec.model (owners: team:secret)``) is what must not happen.
"""

from __future__ import annotations

import html
import json
import os
import subprocess
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass
from email.message import EmailMessage
from pathlib import Path

import pytest

from airflow_lineage_plus.act.failure import Failure
from tests.act.alert_pipeline import BASE_URL
from tests.support.fab_airflow import fab_env
from tests.support.graph_builders import ds, facet, run_pair, write_log
from tests.support.harness import AirflowRunner, Recording, event_log_transport, read_events
from tests.support.openlineage_spec import validate_events
from tests.support.servers import free_port
from tests.support.smtp_server import LocalSmtp

pytestmark = [pytest.mark.airflow, pytest.mark.minutes(6)]

DAG_FILE = Path(__file__).resolve().parent / "dags" / "alert_perm_dags.py"
RECIPIENTS = {
    "team:secret": ["boss@example.org"],
    "team:pub": ["pub@example.org", "mapped@example.com", "outsider@example.com"],
}
USERS = {"mapped@example.com": "pub"}
#: what the failing DAG's lineage says that a reader of DAG ``pub`` only must never get
SEC_STRINGS = ("sec.load", "sec.model", "sec_vault", "sec_raw", "4711", "margin calc", "ValueError")

_USERS_SETUP = """
from airflow.providers.fab.auth_manager.cli_commands.utils import get_application_builder

with get_application_builder() as appbuilder:
    sm = appbuilder.sm
    viewer = {(p.action.name, p.resource.name) for p in sm.find_role("Viewer").permissions}
    sm.bulk_sync_roles([{"role": "PubReader", "perms": sorted(viewer - {("can_read", "DAGs")})
                         + [("can_read", "DAG:pub")]}])
    for name, role in [("boss", "Admin"), ("pub", "PubReader")]:
        if not sm.find_user(username=name):
            sm.add_user(name, name, "Test", name + "@example.org", sm.find_role(role), name)
print("alert users ready")
"""


@dataclass
class PermissionAlerts:
    mails: dict[str, EmailMessage]
    failed_run_id: str
    log: Path
    env: dict[str, str]


def _body(message: EmailMessage) -> str:
    """The alert's text: the HTML e-mail's pre-formatted part, unescaped."""
    part = message.get_body(("html",))
    assert part is not None
    content = str(part.get_content())
    return html.unescape(content.split('<pre style="font-family: monospace">', 1)[1].split("</pre>", 1)[0])


@pytest.fixture(scope="module")
def permission_alerts(
    airflow_db: Path, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[PermissionAlerts]:
    root = tmp_path_factory.mktemp("alert-permissions")
    log = root / "events.jsonl"  # one log for both DAGs: the courier reads what pub's run wrote
    with LocalSmtp() as smtp:
        env = {
            **fab_env({}, log, free_port()),
            "AIRFLOW__OPENLINEAGE__TRANSPORT": event_log_transport(log),
            "AIRFLOW__LINEAGE_PLUS__ALERT_NOTIFIER": "smtp",
            "AIRFLOW__LINEAGE_PLUS__ALERT_RECIPIENTS": json.dumps(RECIPIENTS),
            "AIRFLOW__LINEAGE_PLUS__ALERT_USERS": json.dumps(USERS),
            "AIRFLOW__LINEAGE_PLUS__ALERT_SMTP_CONN_ID": "smtp_alerts",
            "AIRFLOW_CONN_SMTP_ALERTS": smtp.connection(),
            "AIRFLOW__API__BASE_URL": BASE_URL,
        }
        setup = subprocess.run(
            [sys.executable, "-c", _USERS_SETUP],
            env={**os.environ, **env},
            capture_output=True,
            text=True,
            timeout=300,
        )
        assert "alert users ready" in setup.stdout, setup.stdout[-2000:] + setup.stderr[-3000:]
        # a good day of sec (its model links its table to the shared one), pub's report, then sec fails
        good, report, failed = AirflowRunner(root).run_many(
            DAG_FILE,
            recordings=[
                Recording("sec", "2024-05-01"),
                Recording("pub", "2024-05-01"),
                Recording("sec", "2024-05-02", {"fail": True}),
            ],
            env=env,
            name="sec-pub",
        )
        assert good.returncode == 0, good.output[-3000:]
        assert report.returncode == 0, report.output[-3000:]
        assert failed.returncode != 0
        ends = [[e["eventType"] for e in run.dag_events()] for run in (good, report, failed)]
        assert ends == [["COMPLETE"], ["COMPLETE"], ["FAIL"]]  # each run holds its own DAG-run end
        messages = smtp.wait_for(4, timeout=120)
        events = read_events(log)
        validate_events(events)  # the runner validated its own log, which env replaced by this one
        (fail,) = [e for e in events if e["eventType"] == "FAIL" and e["job"]["name"] == "sec.load"]
        yield PermissionAlerts(
            mails={",".join(to): message for to, message in messages},
            failed_run_id=fail["run"]["facets"]["airflow"]["dagRun"]["run_id"],
            log=log,
            env={**os.environ, **env},
        )


def test_each_recipient_of_each_owner_gets_one_alert(permission_alerts: PermissionAlerts) -> None:
    assert sorted(permission_alerts.mails) == sorted(r for found in RECIPIENTS.values() for r in found)


def test_a_reader_of_every_dag_is_told_the_failure_in_full(permission_alerts: PermissionAlerts) -> None:
    mail = permission_alerts.mails["boss@example.org"]
    body = _body(mail)
    assert "sec.load failed" in str(mail["Subject"])
    assert "Task sec.load failed." in body
    assert "Error: ValueError: margin calc for customer 4711 failed" in body
    assert permission_alerts.failed_run_id in body


@pytest.mark.parametrize("recipient", ["pub@example.org", "mapped@example.com"])
def test_a_reader_of_pub_only_learns_that_an_upstream_they_may_not_see_failed(
    permission_alerts: PermissionAlerts, recipient: str
) -> None:
    mail = permission_alerts.mails[recipient]
    body = _body(mail)
    assert str(mail["Subject"]) == "[lineage-plus] LOW impact: an upstream job failed, 2 dataset(s) stale"
    assert body.startswith("An upstream job you may not see failed.\n")
    # what the view shows them: the shared table and their own report, their job, who owns those
    assert "analytics.pub_reports.margin_report  (owners: team:pub)  <- yours" in body
    # the shared table they read is theirs to see, its owner too (as the view shows it); nothing else of sec's
    assert "analytics.shared.margins  (owners: team:secret)" in body
    assert body.count("team:secret") == 1
    assert "pub.report" in body
    assert "(and lineage you may not see)" in body
    for hidden in (*SEC_STRINGS, permission_alerts.failed_run_id):
        assert hidden not in body, hidden
        assert hidden not in str(mail["Subject"]), hidden


def test_a_recipient_with_no_airflow_user_gets_only_their_datasets_names(
    permission_alerts: PermissionAlerts,
) -> None:
    mail = permission_alerts.mails["outsider@example.com"]
    body = _body(mail)
    assert str(mail["Subject"]) == "[lineage-plus] an upstream job failed: 1 dataset(s) stale"
    lines = body.splitlines()
    assert lines[:4] == [
        "An upstream job failed.",
        "",
        "Your datasets now stale:",
        "  - postgres://warehouse:5432 / analytics.pub_reports.margin_report",
    ]
    for hidden in (*SEC_STRINGS, permission_alerts.failed_run_id, "shared.margins", "pub.report", "owners:"):
        assert hidden not in body, hidden


#: ``[lineage_plus] alert_timeout`` of the courier runs below (seconds)
COURIER_ALERT_TIMEOUT = 24


def _courier(pipeline: PermissionAlerts, workdir: Path, smtp: LocalSmtp, run_id: str) -> tuple[int, str]:
    """Hand one failure of sec.load (boss the only recipient) to a courier, as a failed task does, and
    wait for it: (exit code, its output)."""
    failure = Failure("sec", "load", run_id, -1, 1, "test-airflow", error="ValueError: boom")
    job = workdir / f"job-{time.monotonic_ns()}.json"
    job.write_text(json.dumps({"deadline": 60, "jobs": [{"kind": "failure", "failure": failure.to_json()}]}))
    env = {
        **pipeline.env,
        "AIRFLOW__LINEAGE_PLUS__EVENT_LOG_PATH": str(pipeline.log),
        "AIRFLOW__LINEAGE_PLUS__ALERT_RECIPIENTS": json.dumps({"team:secret": "boss@example.org"}),
        "AIRFLOW_CONN_SMTP_ALERTS": smtp.connection(),
        # tries of alert_timeout / 6 = 4 s each (10 s at the default 60 s): a hang costs 12 s, not 30 s
        "AIRFLOW__LINEAGE_PLUS__ALERT_TIMEOUT": str(COURIER_ALERT_TIMEOUT),
    }
    proc = subprocess.run(
        [sys.executable, "-m", "airflow_lineage_plus.act.courier", str(job)],
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    return proc.returncode, proc.stdout + proc.stderr


def test_a_hanging_smtp_server_gets_three_tries_then_the_claim_is_given_back_and_reported_once(
    permission_alerts: PermissionAlerts, tmp_path: Path
) -> None:
    with LocalSmtp(hanging=True) as smtp:
        try:
            started = time.monotonic()
            code, output = _courier(permission_alerts, tmp_path, smtp, "hang-run-1")
            took = time.monotonic() - started
            assert code == 0, output[-3000:]
            # team:secret's alert was tried three times; team:pub's has no address (dropped)
            assert '"sent": 0, "alreadySent": 0, "dropped": 1, "failed": 1' in output, output[-3000:]
            assert smtp.data_commands == 3
            assert output.count("the failure alert to team:secret (tried 3 times; claim given back)") == 1
            assert took < 120  # bounded by alert_timeout (COURIER_ALERT_TIMEOUT) and the courier's start
            smtp.hanging = False  # the server answers again: the same failure seen again is sent
            code, output = _courier(permission_alerts, tmp_path, smtp, "hang-run-1")
            assert code == 0, output[-3000:]
            # sent now; team:pub's dropped alert (no address) keeps its claim: dropping is final
            assert '"sent": 1, "alreadySent": 1, "dropped": 0, "failed": 0' in output, output[-3000:]
            assert [to for to, _ in smtp.messages] == [["boss@example.org"]]
        finally:
            smtp.hanging = False


HOSTILE = "stale_table\r\nBcc: attacker@example.com"


def test_a_dataset_name_with_cr_lf_reaches_the_freshness_subject_as_one_line(
    permission_alerts: PermissionAlerts, tmp_path: Path
) -> None:
    """A job of no DAG (seen by readers of every DAG: boss) writes, once, a table whose name carries a
    header; a year later it is stale and its owner's alert goes out, the name on one subject line."""
    events = read_events(permission_alerts.log) + run_pair(
        "hostile.writer",
        "hostile-1",
        0,
        1,
        outputs=[ds(HOSTILE, owners=["team:hostile"])],
        owners=["team:hostile"],
    )
    for item in events[-2:]:
        item["job"]["facets"]["lineagePlus_sloTier"] = facet(tier="gold", freshnessMinutes=1)
    log = write_log(tmp_path / "hostile.jsonl", events)
    with LocalSmtp() as smtp:
        env = {
            **permission_alerts.env,
            "AIRFLOW__LINEAGE_PLUS__ALERT_RECIPIENTS": json.dumps({"team:hostile": "boss@example.org"}),
            "AIRFLOW_CONN_SMTP_ALERTS": smtp.connection(),
        }
        later = "2030-01-01T00:00:00+00:00"
        proc = subprocess.run(
            [
                str(Path(sys.executable).parent / "lineage-plus"),
                "--events",
                str(log),
                "freshness",
                "--at",
                later,
                "--notify",
                "--format",
                "json",
            ],
            env=env,
            capture_output=True,
            text=True,
            timeout=180,
        )
        assert proc.returncode == 0, proc.stdout[-2000:] + proc.stderr[-3000:]
        answer = json.loads(proc.stdout[proc.stdout.index("{\n") :])  # after Airflow's warnings
        assert answer["alerts"]["failed"] == 0, proc.stderr[-3000:]
        hostile = [(to, m) for to, m in smtp.messages if "stale_table" in str(m["Subject"])]
    assert [(to, str(m["Subject"])) for to, m in hostile] == [
        (["boss@example.org"], "[lineage-plus] stale: stale_table Bcc: attacker@example.com (LATE)")
    ]
