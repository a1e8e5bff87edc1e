"""Pictures of lineage: Mermaid flowcharts and Graphviz DOT graphs of nodes and edges.

Every name is hostile input (it comes from DAG code or an event): no name is ever an id in the picture
(nodes are ``n0``, ``n1``, ... in the order given), and every label is escaped for its language:

- Mermaid: any character other than letters, digits, space and ``_.-/:`` becomes an entity code
  (``#60;``), which Mermaid shows as that character and never reads as syntax, HTML, Markdown or a
  fence; so a picture can sit in a Markdown code block of a pull-request comment.
- DOT: labels are double-quoted strings with ``\\`` and ``"`` escaped and line breaks flattened.

Failed, skipped and upstream-failed jobs, the target, marked nodes (a change found by ``what-changed``, a
failed assertion) and retired, declared, triggered (cross-DAG), added, removed and changed edges are
styled.
:func:`graph_picture` draws the answer of a graph question (``upstream``, ``downstream``, ``impact``,
``failed-upstream``, its datasets whose assertions failed marked); :meth:`Picture.mark` adds a note to a
node (``what-changed``: its top change); :class:`Picture` draws any nodes and edges (``diff``).
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from airflow_lineage_plus.node_ids import split_node_id

#: a label longer than this is cut (names can be long; the JSON has them whole)
MAX_LABEL = 120
_SAFE = re.compile(r"[A-Za-z0-9 _.\-/:]")
_STATE_CLASS = {
    "FAILED": "failed",
    "ABORTED": "failed",
    "SKIPPED": "skipped",
    "UPSTREAM_FAILED": "upstreamFailed",
    "RUNNING": "running",
}
_MERMAID_CLASSES = {
    "failed": "fill:#fde2e1,stroke:#c0392b,stroke-width:2px,color:#7b241c",
    "skipped": "fill:#eeeeee,stroke:#888888,stroke-dasharray:4 3,color:#555555",
    "upstreamFailed": "fill:#fdebd0,stroke:#d35400,stroke-dasharray:4 3,color:#6e2c00",
    "running": "fill:#eaf2f8,stroke:#2e86c1",
    "changed": "fill:#fef5e7,stroke:#b9770e,stroke-width:2px,color:#6e2c00",
    "assertionFailed": "fill:#fde2e1,stroke:#c0392b,stroke-width:2px,stroke-dasharray:2 2,color:#7b241c",
    "target": "stroke-width:3px",
}
#: the classes of :meth:`Picture.mark` (a node styled by its state keeps that style)
MARKS = ("changed", "assertionFailed")
_DOT_NODE = {
    "failed": 'style="filled,bold" fillcolor="#fde2e1" color="#c0392b"',
    "skipped": 'style="filled,dashed" fillcolor="#eeeeee" color="#888888"',
    "upstreamFailed": 'style="filled,dashed" fillcolor="#fdebd0" color="#d35400"',
    "running": 'style="filled" fillcolor="#eaf2f8" color="#2e86c1"',
    "changed": 'style="filled,bold" fillcolor="#fef5e7" color="#b9770e"',
    "assertionFailed": 'style="filled,dotted,bold" fillcolor="#fde2e1" color="#c0392b"',
}
#: edge kind -> (Mermaid arrow, its label, link style; DOT attributes)
_EDGES = {
    "current": ("-->", "", "", ""),
    "retired": ("-.->", "retired", "stroke:#999999", 'style=dashed color="#999999" label="retired"'),
    "declared": ("-.->", "declared", "stroke:#2e86c1", 'style=dotted color="#2e86c1" label="declared"'),
    "triggered": ("-.->", "triggered", "stroke:#7b4fc9", 'style=dashed color="#7b4fc9" label="triggered"'),
    "added": ("==>", "added", "stroke:#1e8449,stroke-width:3px", 'color="#1e8449" penwidth=2 label="added"'),
    "removed": ("-.->", "removed", "stroke:#c0392b", 'style=dashed color="#c0392b" label="removed"'),
    "changed": ("-->", "changed", "stroke:#d35400,stroke-width:2px", 'color="#d35400" label="changed"'),
}


@dataclass
class Picture:
    """Nodes (by id: kind, name, state) and edges (origin, destination, kind) to draw."""

    nodes: dict[str, tuple[str, str, str | None]] = field(default_factory=dict)
    edges: list[tuple[str, str, str]] = field(default_factory=list)
    target: str | None = None
    #: node id -> (class, note): a node marked (:data:`MARKS`), its label followed by the note
    marks: dict[str, tuple[str, str]] = field(default_factory=dict)

    def node(self, node_id: str, kind: str, name: str, state: str | None = None) -> None:
        self.nodes.setdefault(node_id, (kind, name, state))

    def edge(self, origin: str, destination: str, kind: str = "current") -> None:
        if kind not in _EDGES:
            raise ValueError(f"unknown edge kind {kind!r}")
        for end in (origin, destination):
            self.node(end, "DATASET" if end.startswith("dataset:") else "JOB", _name_of(end))
        self.edges.append((origin, destination, kind))

    def mark(self, node_id: str, css_class: str, note: str) -> None:
        """Style a drawn node as ``css_class`` (one of :data:`MARKS`) and add ``note`` to its label."""
        if css_class not in MARKS:
            raise ValueError(f"unknown mark {css_class!r}")
        if node_id in self.nodes:
            self.marks[node_id] = (css_class, note)

    def _text(self, node_id: str) -> str:
        kind, name, state = self.nodes[node_id]
        note = self.marks.get(node_id, ("", ""))[1]
        return _label(kind, name, state) + (f" · {_cut(note)}" if note else "")

    def _style(self, node_id: str) -> str | None:
        """The node's class: its state's, else its mark's."""
        state = self.nodes[node_id][2]
        return _STATE_CLASS.get(state or "") or self.marks.get(node_id, (None, ""))[0]

    def mermaid(self) -> str:
        """A Mermaid flowchart, left to right."""
        ids = {node_id: f"n{i}" for i, node_id in enumerate(self.nodes)}
        lines = ["flowchart LR"]
        for node_id, (kind, _, _) in self.nodes.items():
            label = mermaid_text(self._text(node_id))
            shape = f'[("{label}")]' if kind == "DATASET" else f'["{label}"]'
            lines.append(f"  {ids[node_id]}{shape}")
        styles = []
        for i, (origin, destination, kind) in enumerate(self.edges):
            arrow, text, style = _EDGES[kind][:3]
            lines.append(f"  {ids[origin]} {arrow}{f'|{text}|' if text else ''} {ids[destination]}")
            if style:
                styles.append(f"  linkStyle {i} {style}")
        lines += styles
        for name, css in _MERMAID_CLASSES.items():
            members = [ids[n] for n in self._members(name)]
            if members:
                lines += [f"  classDef {name} {css}", f"  class {','.join(members)} {name}"]
        return "\n".join(lines)

    def dot(self) -> str:
        """A Graphviz DOT digraph, left to right."""
        ids = {node_id: f"n{i}" for i, node_id in enumerate(self.nodes)}
        lines = ["digraph lineage {", "  rankdir=LR;", '  node [fontname="Helvetica" fontsize=11];']
        for node_id, (kind, _, _) in self.nodes.items():
            attrs = [f"label={dot_text(self._text(node_id))}"]
            attrs.append("shape=cylinder" if kind == "DATASET" else "shape=box")
            style = self._style(node_id)
            if style:
                attrs.append(_DOT_NODE[style])
            if node_id == self.target:
                attrs.append("penwidth=3")
            lines.append(f"  {ids[node_id]} [{' '.join(attrs)}];")
        for origin, destination, kind in self.edges:
            style = _EDGES[kind][3]
            lines.append(f"  {ids[origin]} -> {ids[destination]}" + (f" [{style}];" if style else ";"))
        lines.append("}")
        return "\n".join(lines)

    def _members(self, css_class: str) -> Iterable[str]:
        if css_class == "target":
            return [self.target] if self.target in self.nodes else []
        return [n for n in self.nodes if self._style(n) == css_class]


def _name_of(node_id: str) -> str:
    """``<namespace> / <name>`` of a node id, as the text report and the graph pictures show nodes."""
    try:
        _, namespace, name = split_node_id(node_id)
    except ValueError:
        return node_id
    return f"{namespace} / {name}"


def _cut(text: str) -> str:
    flat = " ".join(str(text).split())
    return flat[: MAX_LABEL - 1] + "…" if len(flat) > MAX_LABEL else flat


def _label(kind: str, name: str, state: str | None) -> str:
    flat = _cut(name)
    return f"{flat} · {state}" if kind == "JOB" and state else flat


def mermaid_text(text: str) -> str:
    """``text`` for a double-quoted Mermaid label: only safe characters stay, the rest are entity codes."""
    return "".join(ch if _SAFE.fullmatch(ch) else f"#{ord(ch)};" for ch in text)


def dot_text(text: str) -> str:
    """``text`` as a double-quoted DOT string."""
    flat = " ".join(str(text).split())
    return '"' + flat.replace("\\", "\\\\").replace('"', '\\"') + '"'


def _state(node: Mapping[str, Any]) -> str | None:
    run = node.get("latestRun")
    if run:
        return str(run.get("state"))
    return "DECLARED" if node.get("declared") else None


def graph_picture(answer: Mapping[str, Any]) -> Picture:
    """The picture of a graph question's answer (its target, nodes and edges)."""
    picture = Picture(target=answer["target"]["id"])
    for node in [answer["target"], *answer.get("nodes", ())]:
        name = f"{node['namespace']} / {node['name']}"
        picture.node(node["id"], node["type"], name, _state(node) if node["type"] == "JOB" else None)
    for edge in answer.get("edges", ()):
        picture.edge(edge["origin"], edge["destination"], edge.get("state") or "current")
    for node in [answer["target"], *answer.get("nodes", ())]:
        failed = node.get("failedAssertions") or ()
        if failed:
            first = failed[0]
            on = f" on {first['column']}" if first.get("column") is not None else ""
            more = f" (+{len(failed) - 1} more)" if len(failed) > 1 else ""
            picture.mark(node["id"], "assertionFailed", f"assertion {first['assertion']}{on} failed{more}")
    return picture
