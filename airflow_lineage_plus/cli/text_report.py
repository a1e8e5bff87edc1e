"""Plain-text renderings of query answers, for people reading a terminal."""

from __future__ import annotations

from itertools import groupby
from typing import Any


def _node_line(node: dict[str, Any]) -> str:
    label = f"{node['type']:<7} {node['namespace']} / {node['name']}"
    run = node.get("latestRun")
    if node["type"] == "JOB":
        if run is None:
            return f"{label}  " + (
                "DECLARED (in DAG code; no run yet)" if node.get("declared") else "(no runs)"
            )
        parts = [f"{label}  {run['state']}", f"started {run['startedAt'] or '?'}"]
        if run.get("endedAt"):
            parts.append(f"ended {run['endedAt']}")
        text = "  ".join(parts)
        if run.get("errorMessage"):
            error = str(run["errorMessage"]).rstrip().replace("\n", "\n" + " " * 19)
            text += f"\n            error: {error}"
        for i, parent in enumerate(node.get("ranBy") or ()):
            head = "ran by:" if i == 0 else "       "
            text += f"\n            {head} JOB {parent['namespace']} / {parent['name']}  {parent['state']}"
        return text
    fields = node.get("fields") or []
    text = f"{label}  ({len(fields)} fields)" if fields else label
    for item in node.get("failedAssertions") or ():
        column = f" on {item['column']}" if item.get("column") is not None else ""
        by = f"(by {item['job']} at {item['at']})"
        text += f"\n            failed assertion: {item['assertion']}{column}  {by}"
    return text


def _when(answer: dict[str, Any]) -> list[str]:
    """Lines saying when the answer is as of, and whether the source could answer exactly."""
    lines = [f"  as of {answer['asOf']}"] if answer.get("asOf") else []
    if answer.get("exact") is False:
        lines.append("  (approximate: the source cannot say exactly what was asked; see docs/graph.md)")
    return lines


def render_graph(title: str, answer: dict[str, Any]) -> str:
    lines = [f"{title} {_node_line(answer['target'])}", *_when(answer)]
    if not answer["nodes"]:
        lines.append("  (nothing found)")
    for depth, nodes in groupby(answer["nodes"], key=lambda n: n["depth"]):
        lines.append(f"  depth {depth}")
        lines.extend(f"    {_node_line(n)}" for n in nodes)
    retired = [e for e in answer.get("edges", ()) if e.get("state") == "retired"]
    if retired:
        lines.append("  retired edges (no longer reported by the job's latest completed run):")
        lines.extend(f"    {e['origin']} -> {e['destination']}" for e in retired)
    triggered = [e for e in answer.get("edges", ()) if e.get("state") == "triggered"]
    if triggered:
        lines.append("  started by asset events of other DAG runs (cross-DAG):")
        lines.extend(_trigger_line(e, t) for e in triggered for t in e.get("triggers") or ())
    declared = sum(1 for edge in answer.get("edges", ()) if edge.get("state") == "declared")
    if declared:
        lines.append(f"  {declared} of {len(answer['edges'])} edges are declared in DAG code (no run yet)")
    if "level" in answer:
        lines.append(f"  impact level: {answer['level']}")
        lines.append(f"  owners to notify: {', '.join(answer['owners']) or '(none recorded)'}")
    return "\n".join(lines)


def _trigger_line(edge: dict[str, Any], trigger: dict[str, Any]) -> str:
    run = f"DAG run {trigger['runId']}" if trigger.get("runId") else f"a run of {trigger['taskJob']}"
    state = f" {trigger['state']}" if trigger.get("state") else ""
    return (
        f"    {edge['origin']} -> {edge['destination']}  {run}{state} (asset event of {trigger['taskJob']})"
    )


def render_schema_diff(answer: dict[str, Any]) -> str:
    lines = [f"schema changes of {_node_line(answer['target'])}", *_when(answer)]
    if not answer["changes"]:
        lines.append("  (no changes)")
    for change in answer["changes"]:
        lines.append(
            f"  {change['kind']:<15} {change['column']}  {change['from'] or '-'} -> {change['to'] or '-'}"
        )
    return "\n".join(lines)


def render_columns(answer: dict[str, Any]) -> str:
    lines = [f"column {answer['column']} of {_node_line(answer['target'])}", *_when(answer)]
    for direction in ("upstream", "downstream"):
        lines.append(f"  {direction}:")
        if not answer[direction]:
            lines.append("    (none)")
        for row in answer[direction]:
            kinds = ", ".join(
                "/".join(x for x in (t.get("type"), t.get("subtype")) if x) for t in row["transformations"]
            )
            lines.append(
                f"    depth {row['depth']}  {row['namespace']} / {row['name']} . {row['column']}"
                + (f"  [{kinds}]" if kinds else "")
            )
    return "\n".join(lines)


def render_lint(answer: dict[str, Any]) -> str:
    if not answer["groups"]:
        return "no dataset names look like duplicates"
    lines = []
    for group in answer["groups"]:
        suggested = group["suggested"]
        lines.append(f"{suggested['namespace']} / {suggested['name']}  ({group['reason']})")
        lines.extend(f"    {d['namespace']} / {d['name']}" for d in group["datasets"])
    return "\n".join(lines)


def render_report(answer: dict[str, Any]) -> str:
    lines = [
        f"source: {answer['source']}",
        f"datasets: {answer['datasets']}  jobs: {answer['jobs']}",
    ]
    if answer.get("problems"):
        lines.append(
            "skipped or trimmed input: "
            + ", ".join(f"{k}={v}" for k, v in sorted(answer["problems"].items()))
        )
    lines.append(f"jobs whose latest run failed: {len(answer['failedJobs'])}")
    lines.extend(f"    {_node_line(n)}" for n in answer["failedJobs"])
    lines.append(f"dataset name groups that are probably one: {answer['nameGroups']}")
    return "\n".join(lines)


def render_freshness(answer: dict[str, Any]) -> str:
    lines = [
        f"freshness at {answer['at']}: {answer['checked']} dataset(s) with a target, "
        f"{len(answer['breaches'])} stale"
    ]
    for breach in answer["breaches"]:
        dataset, job = breach["dataset"], breach["responsible"]
        age = f"{breach['ageMinutes']:.0f} min ago" if breach["ageMinutes"] is not None else "never written"
        lines.append(f"  STALE  {dataset['namespace']} / {dataset['name']}")
        lines.append(
            f"         target {breach['freshnessMinutes']} min, last success {breach['lastSuccess'] or '-'}"
            f" ({age})"
        )
        lines.append(f"         cause {breach['cause']}: " + (_node_line(job) if job else "no job writes it"))
    return "\n".join(lines)
