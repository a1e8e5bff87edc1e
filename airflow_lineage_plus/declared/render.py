"""A lineage diff (:mod:`.compare`, with :mod:`.change_impact`) as text for a terminal, or Markdown for a pull
request comment.

Every name in the Markdown comes from DAG code or the lineage graph: it is written inside code spans
(literal text on GitHub and GitLab: no HTML, no links, no mentions) whose fence no run of backticks in
the name can close, with ``|`` escaped so a name cannot break the table, and line breaks flattened. The
picture of the added, removed and changed edges is a Mermaid block (:mod:`airflow_lineage_plus.pictures`
escapes its labels, so no name can end the block).
"""

from __future__ import annotations

import re
from typing import Any

from airflow_lineage_plus.node_ids import split_node_id
from airflow_lineage_plus.pictures import Picture

_ICON = {"breaking": ":red_circle: breaking", "compatible": ":green_circle: compatible"}


def _name(node_id: str) -> str:
    """A dataset or job by its name (ids stay in the JSON and in the Markdown's details)."""
    try:
        return split_node_id(node_id)[2]
    except ValueError:
        return node_id


def describe(change: dict[str, Any], code: Any = str) -> str:
    """One line saying what changed; ``code`` formats names (plain, or as Markdown code spans)."""
    kind, job = change["kind"], code(_name(change["job"]))
    dataset = code(_name(change["dataset"])) if "dataset" in change else ""
    column = code(change["column"]) if "column" in change else ""
    if kind in ("JOB_ADDED", "JOB_REMOVED"):
        parts = [f"reads {', '.join(code(_name(d)) for d in change['inputs'])}"] if change["inputs"] else []
        parts += (
            [f"writes {', '.join(code(_name(d)) for d in change['outputs'])}"] if change["outputs"] else []
        )
        verb = "added" if kind == "JOB_ADDED" else "removed"
        return f"task {job} {verb}" + (f" (it {'; '.join(parts)})" if parts else "")
    written = f", written by {job}"
    was, now = code(change.get("from") or "?"), code(change.get("to") or "?")
    texts = {
        "INPUT_ADDED": f"{job} now reads {dataset}",
        "INPUT_REMOVED": f"{job} no longer reads {dataset}",
        "OUTPUT_ADDED": f"{job} now writes {dataset}",
        "OUTPUT_REMOVED": f"{job} no longer writes {dataset}",
        "COLUMN_REMOVED": f"column {column} ({was}) removed from {dataset}{written}",
        "COLUMN_ADDED": f"column {column} ({now}) added to {dataset}{written}",
        "TYPE_CHANGED": f"column {column} of {dataset}: type {was} -> {now}{written}",
    }
    if kind == "COLUMN_LINEAGE_CHANGED":
        added = ", ".join(code(s) for s in change["added"]) or "nothing"
        removed = ", ".join(code(s) for s in change["removed"]) or "nothing"
        return f"column {column} of {dataset} now comes from {added} (no longer from {removed}){written}"
    return texts.get(kind, f"{kind} {job} {dataset}")


def impact_text(change: dict[str, Any]) -> str:
    impact = change.get("impact")
    if impact is None:
        return ""
    if impact["level"] is None:
        return "unknown (not in the current lineage graph)"
    jobs = len(impact["jobs"])
    return (
        f"{impact['level']}: {jobs} downstream job{'s' if jobs != 1 else ''}" if jobs else "none downstream"
    )


def _headline(answer: dict[str, Any]) -> str:
    summary = answer["summary"]
    return (
        f"{summary['breaking']} breaking change{'s' if summary['breaking'] != 1 else ''}, "
        f"{summary['compatible']} compatible"
    )


def render_text(answer: dict[str, Any]) -> str:
    lines = [
        f"lineage changes from {answer['base']['label']} to {answer['head']['label']}: {_headline(answer)}"
    ]
    if not answer["changes"]:
        lines.append("  (no changes in the declared lineage)")
    for change in answer["changes"]:
        lines.append(f"  {change['severity'].upper():<10} {describe(change)}")
        if change.get("impact"):
            lines.append(f"             impact: {impact_text(change)}")
            for job in change["impact"]["jobs"]:
                lines.append(f"               {_name(job)}")
            if change["impact"]["owners"]:
                lines.append(f"             owners to notify: {', '.join(change['impact']['owners'])}")
    for what in ("datasets", "edges"):
        for side in ("added", "removed"):
            items = answer[what][side]
            if items:
                lines.append(f"  {what} {side}: {len(items)}")
                lines += [f"    {_item(item)}" for item in items]
    if answer.get("impactNote"):
        lines.append(f"  impact not computed: {answer['impactNote']}")
    return "\n".join(lines)


def _item(item: Any) -> str:
    return f"{item['origin']} -> {item['destination']}" if isinstance(item, dict) else str(item)


def code(text: str) -> str:
    """``text`` as a Markdown code span that is safe in a table cell (CommonMark and GitHub's tables).

    The fence is one backtick longer than the longest run of backticks in ``text`` (a shorter one could
    close the span early and leave the rest live: links, images, HTML), padded with spaces when the text
    has a backtick; ``|`` is escaped so it cannot end a table cell; line breaks are flattened.
    """
    flat = " ".join(str(text).split()).replace("|", "\\|")
    runs = [len(run) for run in re.findall(r"`+", flat)]
    if not runs:
        return f"`{flat}`"
    fence = "`" * (max(runs) + 1)
    return f"{fence} {flat} {fence}"


#: change kinds that change what a job writes into a dataset it keeps writing (the edge is "changed")
_EDGE_CHANGES = {"COLUMN_REMOVED", "COLUMN_ADDED", "TYPE_CHANGED", "COLUMN_LINEAGE_CHANGED"}


def picture(answer: dict[str, Any]) -> Picture:
    """The added, removed and changed edges of a diff, as a picture."""
    drawn = Picture()
    for side in ("added", "removed"):
        for edge in answer["edges"][side]:
            drawn.edge(edge["origin"], edge["destination"], side)
    seen = {(o, d) for o, d, _ in drawn.edges}
    for change in answer["changes"]:
        pair = (change["job"], change.get("dataset", ""))
        if change["kind"] in _EDGE_CHANGES and pair not in seen:
            seen.add(pair)
            drawn.edge(*pair, "changed")
    return drawn


def _mermaid_block(answer: dict[str, Any]) -> list[str]:
    drawn = picture(answer)
    if not drawn.edges:
        return []
    return ["", "```mermaid", drawn.mermaid(), "```"]


def render_markdown(answer: dict[str, Any]) -> str:
    """A pull-request comment: headline, one table row per change, details folded."""
    title = f"### Lineage changes: {code(answer['base']['label'])} → {code(answer['head']['label'])}"
    lines = [title, "", f"**{_headline(answer)}**."]
    impact = answer.get("impact")
    if impact and impact["breakingJobs"]:
        owners = ", ".join(code(o) for o in impact["breakingOwners"]) or "none recorded"
        lines[-1] += (
            f" Breaking changes reach {len(impact['breakingJobs'])} downstream job"
            f"{'s' if len(impact['breakingJobs']) != 1 else ''}; owners to notify: {owners}."
        )
    if answer.get("impactNote"):
        lines += ["", f"_Downstream impact not computed: {code(answer['impactNote'])}_"]
    if answer["changes"]:
        lines += ["", "| | Change | Downstream impact | Owners to notify |", "|---|---|---|---|"]
        for change in answer["changes"]:
            owners = ", ".join(code(o) for o in (change.get("impact") or {}).get("owners", []))
            cells = [_ICON[change["severity"]], describe(change, code), impact_text(change), owners]
            lines.append("| " + " | ".join(cells) + " |")
    else:
        lines += ["", "No changes in the declared lineage."]
    lines += _mermaid_block(answer)
    lines += _markdown_details(answer)
    jobs = answer["jobs"]
    lines += [
        "",
        f"<sub>lineage-plus diff: declared lineage of {jobs['base']} and {jobs['head']} tasks</sub>",
    ]
    return "\n".join(lines)


def _markdown_details(answer: dict[str, Any]) -> list[str]:
    lines: list[str] = []
    impacted = sorted({job for c in answer["changes"] for job in (c.get("impact") or {}).get("jobs", [])})
    if impacted:
        lines += ["", f"<details><summary>Downstream jobs ({len(impacted)})</summary>", ""]
        lines += [f"- {code(_name(job))}" for job in impacted]
        lines += ["", "</details>"]
    counts = {
        w: [f"{len(answer[w][s])} {s}" for s in ("added", "removed") if answer[w][s]]
        for w in ("datasets", "edges")
    }
    if any(counts.values()):
        summary = "; ".join(f"{what}: {', '.join(parts)}" for what, parts in counts.items() if parts)
        lines += ["", f"<details><summary>Datasets and edges ({summary})</summary>", ""]
        for what in ("datasets", "edges"):
            for side in ("added", "removed"):
                if answer[what][side]:
                    lines += [f"**{what.capitalize()} {side}**", ""]
                    lines += [f"- {code(_item(item))}" for item in answer[what][side]]
                    lines.append("")
        lines.append("</details>")
    return lines
