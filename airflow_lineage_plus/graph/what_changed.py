"""The ``what-changed`` answer: the changes upstream of a dataset, the likely cause first.

Given the upstream walk of the target (the target included, hidden nodes never entered: :mod:`.visibility`)
and each node's per-run history (:mod:`.history`), the rules of :mod:`.changes` give each node's
changes; here each gets its depth and its path to the target, and they are ranked:

1. *causes* first: changes of a node that no other changed node is upstream of (nothing changed above
   it explains it; a slower run, a retry or a byte size explains nothing: :data:`.changes.EXPLAINING`);
   then the changes they may explain; a new SQL or code version is always a cause;
2. among each, by kind (:data:`.changes.KIND_ORDER`: a failed or skipped job, a new SQL or code version,
   a cached run, a schema change ... a duration last), then farther upstream first, then bigger first.

A dataset whose runs recorded no figures is listed in ``cannotTell`` with the reason: the answer never
claims that nothing changed there.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from airflow_lineage_plus.graph.changes import (
    EXPLAINING,
    INTRINSIC,
    KIND_ORDER,
    Change,
    Thresholds,
    dataset_changes,
    job_changes,
)
from airflow_lineage_plus.graph.history import DatasetRun, History
from airflow_lineage_plus.store import wire as w

if TYPE_CHECKING:
    from airflow_lineage_plus.graph.visibility import Visibility

__all__ = ["MAX_NODES", "Thresholds", "answer", "change_entry", "nearest", "render", "visible_histories"]

Edges = Mapping[tuple[str, str], str]
#: the walked nodes whose runs are compared, nearest the target first (the default of
#: ``[lineage_plus] what_changed_max_nodes``)
MAX_NODES = 200


def nearest(seen: Mapping[str, int], max_nodes: int | None) -> tuple[dict[str, int], dict[str, Any] | None]:
    """(the walked nodes whose runs are compared: the ``max_nodes`` nearest the target, by depth then id,
    every one for None; what was left out, for the answer's ``notCompared``, or None when nothing was).
    Every node nearer than one compared is compared too, so each compared node keeps its path."""
    if max_nodes is not None and max_nodes < 1:
        raise ValueError("max_nodes must be 1 or more")
    if max_nodes is None or len(seen) <= max_nodes:
        return dict(seen), None
    order = sorted(seen, key=lambda n: (seen[n], n))
    left = order[max_nodes:]
    kept = {node: seen[node] for node in order[:max_nodes]}
    return kept, {"nodes": len(left), "maxNodes": max_nodes, "fromDepth": seen[left[0]]}


def visible_histories(histories: Mapping[str, History], visibility: Visibility) -> dict[str, History]:
    """The histories without the dataset runs of jobs the reader may not see (a visible table also
    written by a hidden job: that job's figures are not shown, as in the details), and with a dataset's
    freshness target taken from the writers they may see only (a hidden job's SLO is not theirs, as in
    :mod:`airflow_lineage_plus.act.freshness`)."""
    shown: dict[str, History] = {}
    for node, history in histories.items():
        runs, slo = history.runs, history.slo_minutes
        if node.startswith("dataset:"):
            runs = tuple(r for r in runs if isinstance(r, DatasetRun) and visibility.node(r.job_id))
            slo = _visible_slo(node, visibility) if slo is not None else None
        shown[node] = History(node, runs, slo)  # type: ignore[arg-type]
    return shown


def _visible_slo(dataset_id: str, visibility: Visibility) -> int | None:
    """The least ``freshnessMinutes`` of the dataset's writers the reader may see (the writers a history's
    ``slo_minutes`` is taken from: :mod:`.history`), None when none of them has one."""
    graph = visibility.graph
    writers = graph.neighbours(dataset_id, upstream=True, retired=True, declared_too=False)
    targets = [
        job.slo_minutes
        for job in (graph.job_record(job_id) for job_id, _ in writers)
        if job is not None and job.slo_minutes is not None and visibility.node(job.id)
    ]
    return min(targets) if targets else None


def paths_to(target: str, seen: Mapping[str, int], edges: Edges) -> dict[str, list[str]]:
    """{node: [node, ..., target]}: a shortest path downstream from each walked node to the target (the
    least id at each step, so the same graph gives the same path)."""
    downstream: dict[str, list[str]] = {}
    for origin, destination in edges:
        if origin in seen and destination in seen:
            downstream.setdefault(origin, []).append(destination)
    paths = {target: [target]}
    for node in sorted(seen, key=lambda n: (seen[n], n)):
        nearer = sorted(d for d in downstream.get(node, ()) if seen[d] == seen[node] - 1 and d in paths)
        if nearer:
            paths[node] = [node, *paths[nearer[0]]]
    return paths


def node_changes(
    histories: Mapping[str, History],
    seen: Mapping[str, int],
    baseline_runs: int,
    thresholds: Thresholds,
    now: int,
) -> tuple[list[Change], dict[str, str]]:
    """(every change of the walked nodes, {dataset: why it cannot tell})."""
    changes: list[Change] = []
    cannot: dict[str, str] = {}
    for node in sorted(seen, key=lambda n: (seen[n], n)):
        history = histories.get(node)
        if node.startswith("job:"):
            changes += job_changes(history, baseline_runs, thresholds) if history is not None else []
            continue
        if history is None:
            cannot[node] = "no runs recorded"
            continue
        found, reason = dataset_changes(history, baseline_runs, thresholds, now)
        changes += found
        if reason is not None:
            cannot[node] = reason
    return changes, cannot


def rank(changes: list[Change], seen: Mapping[str, int], paths: Mapping[str, list[str]]) -> list[Change]:
    """Causes first, then what they may explain (see the module docstring)."""
    changed = {c.node for c in changes if c.kind in EXPLAINING}
    explained = {node for other in changed for node in paths.get(other, [other])[1:] if node in changed}

    def key(change: Change) -> tuple[int, int, int, float, str, str, str]:
        return (
            1 if change.node in explained and change.kind not in INTRINSIC else 0,
            KIND_ORDER.get(change.kind, len(KIND_ORDER)),
            -seen.get(change.node, 0),
            -min(change.weight, 1e12),
            change.node,
            change.column or "",
            str(change.size),
        )

    return sorted(changes, key=key)


def answer(
    target_node: dict[str, Any],
    seen: Mapping[str, int],
    edges: Edges,
    histories: Mapping[str, History],
    *,
    baseline_runs: int,
    thresholds: Thresholds,
    now: int,
    as_of: int | None,
    failed_assertions: Mapping[str, list[dict[str, Any]]] | None = None,
    not_compared: dict[str, Any] | None = None,
) -> dict[str, Any]:
    """The JSON answer (docs/what-changed.md) over a walk already limited to what the reader may see
    (``seen``: the nodes compared; ``not_compared``: the farther ones left out, see :func:`nearest`);
    ``failed_assertions``: {walked dataset: its failed assertions} (:func:`.failed.failed_assertions`),
    named whether or not they failed before (a change is an assertion that newly failed)."""
    target = str(target_node["id"])
    paths = paths_to(target, seen, edges)
    found, cannot = node_changes(histories, seen, baseline_runs, thresholds, now)
    ranked = rank(found, seen, paths)
    extra = {"notCompared": not_compared} if not_compared is not None else {}
    return {
        "target": target_node,
        "asOf": w.format_micros(as_of if as_of is not None else now),
        "baseline": {"runs": baseline_runs},
        "changes": [change_entry(c, seen.get(c.node, 0), paths.get(c.node, [c.node])) for c in ranked],
        "cannotTell": [
            {"node": node, "reason": reason, "depth": seen[node], "path": paths.get(node, [node])}
            for node, reason in sorted(cannot.items(), key=lambda kv: (seen[kv[0]], kv[0]))
        ],
        "failedAssertions": [
            {"node": node, **item, "depth": seen[node], "path": paths.get(node, [node])}
            for node in sorted(failed_assertions or {}, key=lambda n: (seen.get(n, 0), n))
            if node in seen
            for item in (failed_assertions or {})[node]
        ],
        **extra,
    }


def change_entry(change: Change, depth: int | None = None, path: list[str] | None = None) -> dict[str, Any]:
    """One change as the answers give it (``what-changed``'s with its ``depth`` and ``path``)."""
    entry: dict[str, Any] = {
        "node": change.node,
        "kind": change.kind,
        "column": change.column,
        "from": change.before,
        "to": change.after,
        "change": change.size,
    }
    if depth is not None:
        entry["depth"] = depth
    entry["at"] = w.format_micros(change.at)
    if path is not None:
        entry["path"] = path
    return entry


_WORDS = {
    "state": "the latest run was {to} (usually {from_})",
    "executionMode": "the latest run was {to} (usually {from_})",
    "sql": "its SQL changed ({from_} -> {to})",
    "sourceCode": "its code changed ({from_} -> {to})",
    "retries": "{to} retries (usually {from_})",
    "duration": "took {to} s (usually {from_} s, {pct})",
    "rowCount": "{to} rows (usually {from_}, {pct})",
    "bytes": "{to} bytes (usually {from_}, {pct})",
    "nullCount": "{to} nulls in {column} (usually {from_}, {pct})",
    "nullRate": "null rate of {column} {to} (usually {from_})",
    "schema": "column {column} {change} ({from_} -> {to})",
    "assertion": "assertion {change} failed{on}",
    "partition": "partition {change} (after {from_}, then {to})",
    "freshness": "written {to} s apart (usually every {from_} s)",
    "freshnessSlo": "last written {to} s ago, past its SLO of {from_} s",
}


def describe(change: dict[str, Any]) -> str:
    """One change in words: ``JOB|DATASET name: what``."""
    return f"{_label(change['node'])}: {words(change)}"


def words(change: dict[str, Any]) -> str:
    """What one change is, in words, without its node (``880 rows (usually 1000, -12 %)``)."""
    size = change["change"]
    pct = f"{size * 100:+.0f} %" if isinstance(size, float) else "new"
    return _WORDS.get(change["kind"], "{kind} {from_} -> {to}").format(
        to=change["to"],
        from_=change["from"],
        column=change["column"],
        on=f" on {change['column']}" if change["column"] is not None else "",
        change=size,
        kind=change["kind"],
        pct=pct,
    )


def _label(node_id: str) -> str:
    kind, _, rest = node_id.partition(":")
    return f"{kind} {rest}"


def render(answer: dict[str, Any]) -> str:
    """The answer for people: the top cause in one sentence first, then every change, then what it cannot
    tell."""
    target = answer["target"]
    name = f"{target['namespace']} / {target['name']}"
    changes, left = answer["changes"], answer.get("notCompared")
    if changes:
        top = changes[0]
        via = f", {top['depth']} hop(s) upstream" if top["depth"] else ""
        lines = [f"Most likely cause for {name}: {describe(top)}{via} (at {top['at']})."]
    elif left is not None:
        lines = [
            f"No change found in the {left['maxNodes']} nodes nearest {name}; farther ones were not compared."
        ]
    elif answer["cannotTell"]:
        lines = [f"No change found upstream of {name} in what was recorded, but some datasets cannot tell."]
    else:
        lines = [f"Nothing changed upstream of {name} beyond the usual run-to-run spread."]
    lines.append(f"  as of {answer['asOf']}, against each node's last {answer['baseline']['runs']} runs")
    if left is not None:
        lines.append(
            f"  {left['nodes']} farther node(s), from depth {left['fromDepth']} on, were not compared "
            f"([lineage_plus] what_changed_max_nodes = {left['maxNodes']}): nothing is said of them"
        )
    for change in changes:
        lines.append(f"  [{change['depth']}] {describe(change)}")
        if len(change["path"]) > 1:
            lines.append(f"        path: {' -> '.join(change['path'])}")
    for item in answer["cannotTell"]:
        lines.append(f"  cannot tell {_label(item['node'])}: {item['reason']}")
    for item in answer.get("failedAssertions", ()):
        on = f" on {item['column']}" if item["column"] is not None else ""
        lines.append(
            f"  [{item['depth']}] {_label(item['node'])}: its latest assertion {item['assertion']}{on} "
            f"failed (by {item['job']} at {item['at']})"
        )
    return "\n".join(lines)
