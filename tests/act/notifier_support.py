"""Notifier factories for ``[lineage_plus] alert_notifier`` as a user writes them (a dotted path), used by
``test_custom_notifiers.py``: a real Airflow ``BaseNotifier`` subclass that records what it is asked to send,
and the SMTP provider's ``SmtpNotifier`` to the connection ``AIRFLOW_CONN_CUSTOM_SMTP``."""

from __future__ import annotations

from typing import Any

from airflow.sdk import BaseNotifier

from airflow_lineage_plus.act.message import Alert

#: what the recording notifier was asked to send, in order: (owner, subject, facts)
SENT: list[tuple[str, str, dict[str, Any]]] = []
#: owners whose alerts the factory drops (returns no notifier for)
DROP = {"team:nobody-listens"}
#: owners whose notifier fails when asked to send
FAIL = {"team:broken-pager"}


class RecordingNotifier(BaseNotifier):
    """Records each alert instead of sending it; fails for the owners in :data:`FAIL`."""

    template_fields = ("subject",)

    def __init__(self, owner: str, subject: str) -> None:
        super().__init__()
        self.owner = owner
        self.subject = subject

    def notify(self, context: Any) -> None:
        if self.owner in FAIL:
            raise ConnectionError(f"the pager of {self.owner} is unreachable")
        SENT.append((self.owner, self.subject, dict(context["alert"])))


def recording(alert: Alert) -> RecordingNotifier | None:
    """The factory ``alert_notifier = tests.act.notifier_support.recording`` names."""
    if alert.owner in DROP:
        return None
    return RecordingNotifier(alert.owner, alert.subject)


def smtp(alert: Alert) -> Any:
    """The factory ``alert_notifier = tests.act.notifier_support.smtp`` names: the SMTP provider's
    notifier."""
    from airflow.providers.smtp.notifications.smtp import SmtpNotifier

    if not alert.recipients:
        return None
    return SmtpNotifier(
        to=list(alert.recipients),
        from_email="lineage-alerts@example.com",
        subject=alert.subject,
        html_content=alert.html,
        smtp_conn_id="custom_smtp",
    )
