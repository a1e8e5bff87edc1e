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
import time
from collections.abc import Callable, Sequence
from typing import Any

import attr

from airflow_lineage_plus import conf
from airflow_lineage_plus.act.message import Alert
from airflow_lineage_plus.claims import Claims
from airflow_lineage_plus.containment import call_within, report

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


#: Tries an alert gets in one courier before it is reported failed and its claim given back.
ATTEMPTS = 3
#: Seconds kept free before the courier's deadline: its claims are given back within them.
_MARGIN = 1.0


def _send(alert: Alert, factory: NotifierFactory, seconds: float) -> bool:
    """One try: False when the factory gives no notifier (the alert is dropped); raises when it fails,
    :class:`TimeoutError` when the notifier takes over ``seconds`` (it is left behind in its thread)."""
    notifier = factory(alert)
    if notifier is None:
        return False
    what = f"the {alert.kind} alert to {alert.owner}"
    call_within(seconds, what, notifier.notify, {"lineage_plus_alert": alert, "alert": alert.facts})
    return True


def send_once(
    alerts: Sequence[Alert], claims: Claims, factory: NotifierFactory, deadline: float | None = None
) -> Outcome:
    """Send each alert whose key this process claims, each try bounded in time, all before ``deadline``
    (a ``time.monotonic()`` value; default ``[lineage_plus] alert_timeout`` from now).

    An alert is claimed just before it is sent. A notifier that fails or hangs is tried again, up to
    :data:`ATTEMPTS` tries of at most ``alert_timeout / (2 * ATTEMPTS)`` seconds each; then its claim is
    given back, so a later sighting of the same failure sends it, and it is reported once (a warning
    naming the alert and the error). No claim is held past ``deadline``: an alert there is no time left
    for is not claimed, and is reported and counted failed.
    """
    budget = conf.alert_timeout()
    deadline = time.monotonic() + budget if deadline is None else deadline
    outcome = Outcome()
    for alert in alerts:
        if deadline - time.monotonic() < _MARGIN:
            report(f"the {alert.kind} alert to {alert.owner}", TimeoutError("no time left in alert_timeout"))
            outcome.failed.append(alert)
            continue
        if not claims.claim([alert.key]):
            outcome.already_claimed.append(alert)
            continue
        try:
            sent = _send_with_retries(alert, factory, budget / (2 * ATTEMPTS), deadline)
        except Exception as error:
            claims.release([alert.key])
            report(
                f"the {alert.kind} alert to {alert.owner} (tried {ATTEMPTS} times; claim given back)", error
            )
            outcome.failed.append(alert)
            continue
        if not sent:
            outcome.dropped.append(alert)
            continue
        log.info("airflow-lineage-plus: sent the %s alert %r to %s", alert.kind, alert.subject, alert.owner)
        outcome.sent.append(alert)
    return outcome


def _send_with_retries(alert: Alert, factory: NotifierFactory, seconds: float, deadline: float) -> bool:
    """:func:`_send` up to :data:`ATTEMPTS` times while time is left; the last error is raised."""
    error: Exception = TimeoutError("no time left in alert_timeout")
    for _ in range(ATTEMPTS):
        left = deadline - time.monotonic() - _MARGIN
        if left <= 0:
            break
        try:
            return _send(alert, factory, min(seconds, left))
        except Exception as exc:
            error = exc
    raise error
