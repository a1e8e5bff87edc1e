"""An alert to one owner, and its text: what failed or went stale, what is affected, who owns it, a link.

Every value in an alert comes from events, so it is hostile: the HTML form escapes all of it, and notifiers
are called without template rendering (:mod:`.notifiers`), so a dataset named ``{{ conn.x.password }}``
stays text.
"""

from __future__ import annotations

import html
from collections.abc import Iterable
from typing import Any
from urllib.parse import quote

import attr

from airflow_lineage_plus.act.impact import Impact, Node

#: Where the plugin mounts the Lineage view (``ui/mount.URL_PREFIX``; the act stage comes before the view,
#: so it names the path rather than importing it, and tests/act checks that the two agree).
VIEW_PATH = "/lineage-plus"
FAILURE = "failure"
FRESHNESS = "freshness"


@attr.frozen
class Alert:
    """One message to one owner.

    Attributes:
        kind: ``failure`` (a task failed) or ``freshness`` (a dataset is older than its SLO).
        key: what it is deduplicated on: the failed try or the breach, and the owner.
        owner: the owner as declared (``team:analytics``).
        recipients: where it goes ([lineage_plus] alert_recipients, or the owner when it is an address).
        subject, text, html: the message (``html`` is ``text`` escaped, with the link).
        level: the impact level, HIGH, MEDIUM or LOW.
        link: the Lineage view, centred on the failed job or the stale dataset.
        facts: the same content as JSON-ready data, for notifiers that format their own messages.
    """

    kind: str
    key: str
    owner: str
    recipients: tuple[str, ...]
    subject: str
    text: str
    html: str
    level: str
    link: str
    facts: dict[str, Any]


def lineage_link(base_url: str, node_id: str) -> str:
    """The Lineage view of ``node_id`` under Airflow's ``[api] base_url``."""
    return f"{base_url.rstrip('/')}{VIEW_PATH}/?node={quote(node_id, safe='')}"


def node_label(node: Node) -> str:
    return f"{node['namespace']} / {node['name']}"


def _node_line(node: Node, owner: str) -> str:
    owners = ", ".join(node.get("owners") or ()) or "no owner"
    run = node.get("latestRun") or {}
    state = f"  [{run['state']}]" if run.get("state") else ""
    mine = "  <- yours" if owner in (node.get("owners") or ()) else ""
    return f"  - {node_label(node)}{state}  (owners: {owners}){mine}"


def impact_lines(impact: Impact, owner: str) -> list[str]:
    """The stale datasets and downstream jobs, each with its owners, the owner's own marked."""
    lines = [
        f"Impact: {impact.level} ({len(impact.jobs)} downstream job(s), {len(impact.stale)} stale dataset(s))"
    ]
    lines += ["", "Datasets now stale:"] + ([_node_line(n, owner) for n in impact.stale] or ["  (none)"])
    lines += ["", "Downstream jobs:"] + ([_node_line(n, owner) for n in impact.jobs] or ["  (none)"])
    return lines


def as_html(text: str, link: str) -> str:
    """``text`` as escaped HTML (pre-formatted) with the link: nothing from an event is markup."""
    return (
        '<html><body><pre style="font-family: monospace">'
        + html.escape(text)
        + f'</pre><p><a href="{html.escape(link, quote=True)}">Open in the Lineage view</a></p></body></html>'
    )


def recipients_for(owner: str, configured: dict[str, list[str]]) -> tuple[str, ...]:
    """Where ``owner``'s alerts go: the configured entry, else the owner itself when it is an address."""
    if owner in configured:
        return tuple(configured[owner])
    address = owner.partition(":")[2] if ":" in owner else owner
    return (address,) if "@" in address else ()


def make_alerts(
    kind: str,
    key: str,
    subject: str,
    head: Iterable[str],
    impact: Impact,
    link: str,
    facts: dict[str, Any],
    configured: dict[str, list[str]],
) -> list[Alert]:
    """One alert per owner of something in ``impact``: ``head`` then the impact, the owner's marked."""
    alerts = []
    head = list(head)
    for owner in impact.owners:
        text = "\n".join(
            [
                *head,
                "",
                *impact_lines(impact, owner),
                "",
                f"You get this because {owner} owns: "
                + ", ".join(node_label(n) for n in impact.nodes_of(owner)),
                f"Lineage view: {link}",
            ]
        )
        alerts.append(
            Alert(
                kind=kind,
                key=f"{key}|{owner}",
                owner=owner,
                recipients=recipients_for(owner, configured),
                subject=subject,
                text=text,
                html=as_html(text, link),
                level=impact.level,
                link=link,
                facts={
                    **facts,
                    "owner": owner,
                    "level": impact.level,
                    "stale": list(impact.stale),
                    "downstreamJobs": list(impact.jobs),
                },
            )
        )
    return alerts
