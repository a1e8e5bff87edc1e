"""``DownstreamOwnersNotifier``: the impact alert as an explicit ``on_failure_callback``.

.. code-block:: python

    from airflow_lineage_plus.alerts import DownstreamOwnersNotifier

    @task(on_failure_callback=DownstreamOwnersNotifier(notifier="smtp"))
    def load(): ...

It hands off like the listener (and shares its claims: with both on, each owner still gets one alert),
so the callback returns at once.
"""

from __future__ import annotations

from typing import Any

from airflow.sdk import BaseNotifier

from airflow_lineage_plus.act.trigger import alert_if_failed
from airflow_lineage_plus.containment import contained


class DownstreamOwnersNotifier(BaseNotifier):
    """Tell the owners of everything downstream of the failed task (see docs/alerts.md).

    ``notifier``: ``smtp`` or the dotted path of a factory (an ``Alert`` -> a notifier); None uses
    ``[lineage_plus] alert_notifier``.
    """

    template_fields = ()

    def __init__(self, notifier: str | None = None) -> None:
        super().__init__()
        self.notifier = notifier

    def notify(self, context: Any) -> None:
        with contained("the impact alert of a failed task (on_failure_callback)"):
            alert_if_failed(context["ti"], context.get("exception"), notifier=self.notifier)
