"""``lineage-plus what-changed``: what changed upstream of a dataset (docs/what-changed.md).

Declared by :mod:`airflow_lineage_plus.cli.parser` (options: :func:`add_arguments`), answered by
:meth:`LineageQueries.what_changed <airflow_lineage_plus.graph.queries.LineageQueries.what_changed>`; the
thresholds and the default baseline come from ``[lineage_plus] what_changed_*`` when Airflow's
configuration can be read, else from the options' defaults.
"""

from __future__ import annotations

import argparse
from typing import TYPE_CHECKING, Any

import attrs

from airflow_lineage_plus import conf, pictures
from airflow_lineage_plus.exceptions import UsageError
from airflow_lineage_plus.graph import LineageQueries
from airflow_lineage_plus.graph import what_changed as changes
from airflow_lineage_plus.provider_info import OPTIONS

if TYPE_CHECKING:
    from airflow_lineage_plus.cli.remote import RemoteQueries

COMMAND = "what-changed"
HELP = "what changed upstream of a dataset against its recent runs, likely cause first"
DESCRIPTION = (
    "What changed upstream of a dataset: job states, modes, retries, durations, SQL and code versions; "
    "row counts, nulls, bytes, schemas, freshness, assertions, partitions. Each node upstream of the "
    "dataset (the dataset included) is compared with its own last N completed runs; changes within the "
    "usual run-to-run spread are left out, the likely cause comes first."
)
EXAMPLES = (
    "what-changed --namespace postgres://warehouse:5432 --name analytics.marts.revenue_daily",
    "what-changed --namespace NS --name NAME --as-of 2026-03-08T09:00:00Z --baseline-runs 14 --format json",
    "what-changed --namespace NS --name NAME --format mermaid",
)
#: ``--format`` choices: the picture ones draw the upstream graph with each changed node's top change
FORMATS = ("text", "json", "mermaid", "dot")


def add_arguments(command: argparse.ArgumentParser) -> None:
    """The options of ``what-changed`` (the CLI's parser declares the command and its ``--format``)."""
    command.add_argument("--namespace", help="dataset namespace")
    command.add_argument("--name", help="dataset name")
    command.add_argument("--as-of", help="answer as of this time (ISO-8601, e.g. 2026-03-01T12:00:00Z)")
    command.add_argument(
        "--baseline-runs",
        type=int,
        default=None,
        help="how many earlier completed runs of each node make its baseline "
        "(default: [lineage_plus] what_changed_baseline_runs, 7)",
    )
    command.add_argument("--depth", type=int, default=10, help="how many edges upstream to look (default 10)")


def _configured() -> tuple[int, changes.Thresholds]:
    """The configured default baseline and thresholds (the options' defaults without Airflow)."""
    try:
        return conf.what_changed_baseline_runs(), changes.Thresholds(**conf.what_changed_thresholds())
    except ImportError:
        defaults = {
            key: float(OPTIONS[f"what_changed_{key}"]["default"])
            for key in attrs.fields_dict(changes.Thresholds)
        }
        return int(OPTIONS["what_changed_baseline_runs"]["default"]), changes.Thresholds(**defaults)


def _max_nodes() -> int:
    """[lineage_plus] what_changed_max_nodes (the option's default without Airflow)."""
    try:
        return conf.what_changed_max_nodes()
    except ImportError:
        return int(OPTIONS["what_changed_max_nodes"]["default"])


def answer(
    queries: LineageQueries | RemoteQueries, args: argparse.Namespace, target: str, as_of: int | None
) -> tuple[dict[str, Any], str]:
    """(the JSON answer, its text) of one ``what-changed``."""
    baseline, thresholds = _configured()
    runs = args.baseline_runs if args.baseline_runs is not None else baseline
    if runs < 1:
        raise UsageError("--baseline-runs must be 1 or more")
    if args.depth < 0:
        raise UsageError("--depth must be 0 or more")
    found = queries.what_changed(
        target, runs, args.depth, as_of=as_of, thresholds=thresholds, max_nodes=_max_nodes()
    )
    if args.format in ("mermaid", "dot"):
        drawn = picture(queries.upstream(target, args.depth, as_of=as_of), found)
        return found, drawn.mermaid() if args.format == "mermaid" else drawn.dot()
    return found, changes.render(found)


def picture(upstream: dict[str, Any], found: dict[str, Any]) -> pictures.Picture:
    """The upstream graph (``upstream``'s answer, the walk ``what-changed`` compared) with each node that
    changed marked and labelled with its top change (the first of its changes in the ranked list), and
    each other dataset whose latest assertions failed marked with its first failed one."""
    drawn = pictures.graph_picture(upstream)
    for item in reversed(found.get("failedAssertions", ())):  # marked unless the node changed too
        on = f" on {item['column']}" if item["column"] is not None else ""
        drawn.mark(item["node"], "assertionFailed", f"assertion {item['assertion']}{on} failed")
    counts: dict[str, int] = {}
    for change in found["changes"]:
        counts[change["node"]] = counts.get(change["node"], 0) + 1
    for change in reversed(found["changes"]):  # the node's first (top) change is marked last: it stays
        more = counts[change["node"]] - 1
        note = changes.words(change) + (f" (+{more} more)" if more else "")
        drawn.mark(change["node"], "changed", note)
    return drawn
