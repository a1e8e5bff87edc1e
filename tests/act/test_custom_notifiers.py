"""The custom-notifier path (``[lineage_plus] alert_notifier`` = a dotted path, ``act/notifiers.py``): each
alert sent once through the notifier the user's factory returns, dropped when it returns none, failed (and
its claim given back, so a later try sends it) when the notifier raises. With a real Airflow
``BaseNotifier`` subclass that records, and with the SMTP provider's notifier against a local SMTP server."""

from __future__ import annotations

import json
import socket
from collections.abc import Iterator
from pathlib import Path

import pytest

from airflow_lineage_plus.act.message import Alert
from airflow_lineage_plus.act.notifiers import configured_factory, send_once
from airflow_lineage_plus.claims import FileClaims
from tests.act import notifier_support
from tests.support.smtp_server import LocalSmtp


def _alert(owner: str, recipients: tuple[str, ...] = ("someone@example.com",)) -> Alert:
    return Alert(
        kind="failure",
        key=f"failure:orders.load:try-1:{owner}",
        owner=owner,
        recipients=recipients,
        subject=f"[HIGH] orders.load failed: {owner} is downstream",
        text="orders.load failed",
        html="<p>orders.load failed</p>",
        level="HIGH",
        link="http://airflow.example.test/lineage-plus/?node=job",
        facts={"failedJob": "orders.load", "owner": owner},
    )


@pytest.fixture
def recorded(monkeypatch: pytest.MonkeyPatch) -> Iterator[list[tuple[str, str, dict[str, object]]]]:
    monkeypatch.setenv("AIRFLOW__LINEAGE_PLUS__ALERT_NOTIFIER", "tests.act.notifier_support.recording")
    notifier_support.SENT.clear()
    yield notifier_support.SENT
    notifier_support.SENT.clear()


def test_a_base_notifier_subclass_named_by_dotted_path_sends_each_alert_once(
    recorded: list[tuple[str, str, dict[str, object]]], tmp_path: Path
) -> None:
    factory = configured_factory()
    assert factory is notifier_support.recording
    claims = FileClaims(tmp_path / "claims.sqlite")
    alerts = [_alert("team:analytics"), _alert("team:commerce-data")]
    outcome = send_once(alerts, claims, factory)
    assert outcome.counts() == {"sent": 2, "alreadySent": 0, "dropped": 0, "failed": 0}
    assert recorded == [(a.owner, a.subject, a.facts) for a in alerts]
    again = send_once(alerts, claims, factory)  # another process, or a second report of the same failure
    assert again.counts() == {"sent": 0, "alreadySent": 2, "dropped": 0, "failed": 0}
    assert len(recorded) == 2


def test_an_alert_the_factory_returns_no_notifier_for_is_dropped_and_the_rest_sent(
    recorded: list[tuple[str, str, dict[str, object]]], tmp_path: Path
) -> None:
    alerts = [_alert("team:nobody-listens"), _alert("team:analytics")]
    outcome = send_once(alerts, FileClaims(tmp_path / "claims.sqlite"), configured_factory())  # type: ignore[arg-type]
    assert outcome.counts() == {"sent": 1, "alreadySent": 0, "dropped": 1, "failed": 0}
    assert [a.owner for a in outcome.dropped] == ["team:nobody-listens"]
    assert [owner for owner, _, _ in recorded] == ["team:analytics"]


def test_a_notifier_that_raises_fails_its_alert_once_logged_and_gives_its_claim_back(
    recorded: list[tuple[str, str, dict[str, object]]], tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    claims = FileClaims(tmp_path / "claims.sqlite")
    alerts = [_alert("team:broken-pager"), _alert("team:analytics")]
    outcome = send_once(alerts, claims, configured_factory())  # type: ignore[arg-type]
    assert outcome.counts() == {"sent": 1, "alreadySent": 0, "dropped": 0, "failed": 1}
    lost = [r.getMessage() for r in caplog.records if "team:broken-pager" in r.getMessage()]
    assert len(lost) == 1 and "ConnectionError" in lost[0] and "the pager of team:broken-pager" in lost[0]
    # the claim was given back: once the pager works again, the next try sends the alert, and only it
    notifier_support.FAIL.discard("team:broken-pager")
    try:
        retry = send_once(alerts, claims, configured_factory())  # type: ignore[arg-type]
    finally:
        notifier_support.FAIL.add("team:broken-pager")
    assert retry.counts() == {"sent": 1, "alreadySent": 1, "dropped": 0, "failed": 0}
    assert [owner for owner, _, _ in recorded] == ["team:analytics", "team:broken-pager"]


def test_the_smtp_providers_notifier_named_by_dotted_path_delivers_drops_and_fails(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setenv("AIRFLOW__LINEAGE_PLUS__ALERT_NOTIFIER", "tests.act.notifier_support.smtp")
    factory = configured_factory()
    assert factory is notifier_support.smtp
    alerts = [_alert("team:analytics", ("analytics@example.com",)), _alert("team:no-address", ())]
    with LocalSmtp() as server:
        monkeypatch.setenv("AIRFLOW_CONN_CUSTOM_SMTP", server.connection())
        outcome = send_once(alerts, FileClaims(tmp_path / "claims.sqlite"), factory)
        assert outcome.counts() == {"sent": 1, "alreadySent": 0, "dropped": 1, "failed": 0}
        (message,) = server.wait_for(1, timeout=30)
    recipients, email = message
    assert recipients == ["analytics@example.com"]
    assert email["Subject"] == alerts[0].subject
    # the server gone: sending fails, the alert is counted failed and its claim given back
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        closed = sock.getsockname()[1]
    down = {**json.loads(server.connection()), "port": closed}
    monkeypatch.setenv("AIRFLOW_CONN_CUSTOM_SMTP", json.dumps(down))
    claims = FileClaims(tmp_path / "other-claims.sqlite")
    failed = send_once(alerts[:1], claims, factory)
    assert failed.counts() == {"sent": 0, "alreadySent": 0, "dropped": 0, "failed": 1}
    assert claims.claim([alerts[0].key]) == {alerts[0].key}  # released: free to claim again
