"""Sending alerts through Airflow's own notifiers, each alert once.

``[lineage_plus] alert_notifier`` names how: ``smtp`` (the SMTP provider's ``SmtpNotifier`` through
``alert_smtp_conn_id``) or the dotted path of a callable that takes an :class:`~.message.Alert` and returns
a notifier (any ``BaseNotifier``: Slack, Teams, PagerDuty ... or None to drop that alert). The notifier's
``notify()`` is called directly, not its templating ``__call__``: alert text comes from events and must
never be rendered as a Jinja template.
"""

from __future__ import annotations

import importlib
import logging
from collections.abc import Callable, Sequence
from typing import Any

import attr

from airflow_lineage_plus import conf
from airflow_lineage_plus.act.claims import Claims
from airflow_lineage_plus.act.message import Alert
from airflow_lineage_plus.containment import report

log = logging.getLogger(__name__)

NotifierFactory = Callable[[Alert], Any]


def smtp_notifier(alert: Alert) -> Any:
    """The SMTP provider's ``SmtpNotifier`` for ``alert`` (None when the owner has no address)."""
    from airflow.providers.smtp.notifications.smtp import SmtpNotifier

    if not alert.recipients:
        report(
            f"the alert to {alert.owner} (no address: add it to [lineage_plus] alert_recipients)",
            LookupError(alert.owner),
        )
        return None
    return SmtpNotifier(
        to=list(alert.recipients),
        from_email=conf.alert_from_email(),
        subject=alert.subject,
        html_content=alert.html,
        smtp_conn_id=conf.alert_smtp_conn_id(),
    )


def configured_factory() -> NotifierFactory | None:
    """The factory ``[lineage_plus] alert_notifier`` names (None: alerts are off)."""
    name = conf.alert_notifier()
    return factory_named(name) if name else None


def factory_named(name: str) -> NotifierFactory:
    """``smtp`` or the callable at a dotted path."""
    if name == "smtp":
        return smtp_notifier
    module, _, attribute = name.rpartition(".")
    if not module:
        raise ValueError(f"alert notifier {name!r} is neither 'smtp' nor a dotted path module.callable")
    factory = getattr(importlib.import_module(module), attribute)
    if not callable(factory):
        raise TypeError(f"alert notifier {name!r} is not callable")
    return factory  # type: ignore[no-any-return]


@attr.define
class Outcome:
    """What became of a batch of alerts."""

    sent: list[Alert] = attr.Factory(list)
    already_claimed: list[Alert] = attr.Factory(list)
    dropped: list[Alert] = attr.Factory(list)
    failed: list[Alert] = attr.Factory(list)

    def counts(self) -> dict[str, int]:
        return {
            "sent": len(self.sent),
            "alreadySent": len(self.already_claimed),
            "dropped": len(self.dropped),
            "failed": len(self.failed),
        }


def send_once(alerts: Sequence[Alert], claims: Claims, factory: NotifierFactory) -> Outcome:
    """Send each alert whose key this process claims; give the claim back when sending fails."""
    outcome = Outcome()
    mine = claims.claim([a.key for a in alerts])
    for alert in alerts:
        if alert.key not in mine:
            outcome.already_claimed.append(alert)
            continue
        try:
            notifier = factory(alert)
            if notifier is None:
                outcome.dropped.append(alert)
                continue
            notifier.notify({"lineage_plus_alert": alert, "alert": alert.facts})
        except Exception as exc:
            report(f"the {alert.kind} alert to {alert.owner}", exc)
            claims.release([alert.key])
            outcome.failed.append(alert)
            continue
        log.info("airflow-lineage-plus: sent the %s alert %r to %s", alert.kind, alert.subject, alert.owner)
        outcome.sent.append(alert)
    return outcome
