"""An alert to one owner, and its text: what failed or went stale, what is affected, who owns it, a link.

Every value in an alert comes from events, so it is hostile: the HTML form escapes all of it, and notifiers
are called without template rendering (:mod:`.notifiers`), so a dataset named ``{{ conn.x.password }}``
stays text.
"""

from __future__ import annotations

import html
import re
from collections.abc import Callable
from typing import Any
from urllib.parse import quote

import attr

from airflow_lineage_plus import node_ids as ids
from airflow_lineage_plus.act.alert_impact import Impact, Node
from airflow_lineage_plus.act.audience import NO_USER, access_of
from airflow_lineage_plus.graph.visibility import DagAccess

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


def lineage_link(base_url: str, node_id: str | None) -> str:
    """The Lineage view of ``node_id`` (None: the view's start page) under Airflow's ``[api] base_url``."""
    page = f"{base_url.rstrip('/')}{VIEW_PATH}/"
    return page if node_id is None else f"{page}?node={quote(node_id, safe='')}"


def first_node(impact: Impact, owner: str) -> str | None:
    """The node a reader's link centres on: the first of the owner's they see, else the first they see."""
    for nodes in (impact.nodes_of(owner), [*impact.stale, *impact.jobs]):
        if nodes:
            return str(nodes[0]["id"])
    return None


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


#: Characters no header may carry: C0 and C1 controls, DEL, and the Unicode line and paragraph separators.
_CONTROL = re.compile("[\x00-\x1f\x7f-\x9f\u2028\u2029]+")


def header_text(text: str) -> str:
    """``text`` fit for a subject or header: every run of control characters (CR/LF included) one space."""
    return _CONTROL.sub(" ", text).strip()


def _address(value: str) -> str | None:
    """``value`` when it can be a recipient header as it is (no control character, no space)."""
    return value if value and not _CONTROL.search(value) and not any(c.isspace() for c in value) else None


def recipients_for(owner: str, configured: dict[str, list[str]]) -> tuple[str, ...]:
    """Where ``owner``'s alerts go: the configured entry, else the owner itself when it is an address
    (a value with a control character or a space is no address: it would forge headers)."""
    if owner in configured:
        found = [_address(value) for value in configured[owner]]
        return tuple(value for value in found if value is not None)
    address = owner.partition(":")[2] if ":" in owner else owner
    return (address,) if "@" in address and _address(address) else ()


@attr.frozen
class Telling:
    """What one alert says about its event, as one reader may be told it (see :data:`Tell`)."""

    subject: str
    head: list[str]
    link: str
    facts: dict[str, Any]


#: ``tell(access, impact, owner)``: the subject, head, link and facts for a reader whose Airflow user may
#: read ``access`` (``None``: a recipient with no user), given the ``impact`` as that reader sees it.
Tell = Callable[[DagAccess | None, Impact, str], Telling]


def own_datasets(impact: Impact, owner: str) -> Impact:
    """What a recipient with no Airflow user is told of an impact: the names of ``owner``'s datasets."""
    mine = tuple(
        {key: node[key] for key in ("id", "type", "namespace", "name", "depth")}
        for node in impact.nodes_of(owner)
        if node["type"] == ids.DATASET
    )
    return Impact(stale=mine, jobs=(), level="", owners={owner: tuple(n["id"] for n in mine)}, hidden=True)


def _text(telling: Telling, shown: Impact, owner: str, access: DagAccess | None) -> str:
    if access is None:
        lines = ["", "Your datasets now stale:"] + (
            [f"  - {node_label(n)}" for n in shown.stale] or ["  (none; something else you own is affected)"]
        )
    else:
        lines = ["", *impact_lines(shown, owner)]
        if shown.hidden:
            lines.append("  (and lineage you may not see)")
    mine = ", ".join(node_label(n) for n in shown.nodes_of(owner)) or "(lineage you may not see)"
    return "\n".join(
        [
            *telling.head,
            *lines,
            "",
            f"You get this because {owner} owns: {mine}",
            f"Lineage view: {telling.link}",
        ]
    )


def make_alerts(
    kind: str, key: str, impact: Impact, configured: dict[str, list[str]], tell: Tell
) -> list[Alert]:
    """One alert per owner of something in ``impact`` and per recipient of that owner, each telling only
    what the recipient's Airflow user may read (:mod:`.audience`); the owner's own marked."""
    where = {owner: recipients_for(owner, configured) for owner in impact.owners}
    readers = access_of(r for found in where.values() for r in found)
    alerts = []
    for owner in impact.owners:
        for recipient in where[owner] or (None,):  # no address: one alert, told as to no user
            access = readers.get(recipient) if recipient is not None else NO_USER
            shown = own_datasets(impact, owner) if access is None else impact.seen_by(access.predicate())
            telling = tell(access, shown, owner)
            text = _text(telling, shown, owner, access)
            alerts.append(
                Alert(
                    kind=kind,
                    key=f"{key}|{owner}" + (f"|{recipient}" if recipient is not None else ""),
                    owner=owner,
                    recipients=(recipient,) if recipient is not None else (),
                    subject=header_text(telling.subject),
                    text=text,
                    html=as_html(text, telling.link),
                    level=shown.level,
                    link=telling.link,
                    facts={
                        **telling.facts,
                        "owner": owner,
                        "level": shown.level,
                        "stale": list(shown.stale),
                        "downstreamJobs": list(shown.jobs),
                    },
                )
            )
    return alerts
