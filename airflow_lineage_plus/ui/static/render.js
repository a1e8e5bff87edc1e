/* The lineage graph drawn in SVG (edges, then nodes) and the banner naming failed upstream jobs. */
import { $, append, clear, el, elideMiddle, fmtTime, nameLines, setStatus, shorten, stateClass, stateLabel, svg } from "./dom.js";
import { EDGE_CLASSES, triggerTitle } from "./edges.js";
import { groupChildren } from "./groups.js";
import { layout, nodeHeight, nodeWidth } from "./layout.js";
import { frame } from "./panzoom.js";
import { openNode, selectNode, toggleGroup, traceColumn } from "./state.js";
import { store } from "./store.js";

// ---------------------------------------------------------------- banner (failed upstream jobs)
export function renderBanner(graph) {
  var banner = $("banner");
  clear(banner);
  var failed = (graph && graph.failedUpstream) || [];
  if (!graph || !graph.target || graph.target.type !== "DATASET" || !failed.length) { banner.hidden = true; return; }
  append(banner, document.createTextNode(
    failed.length === 1 ? "An upstream job of this dataset failed in its latest run:" :
      failed.length + " upstream jobs of this dataset failed in their latest run:"));
  var list = el("ul");
  failed.forEach(function (job) {
    var run = job.latestRun || {};
    var ranBy = (job.ranBy || []).map(function (r) { return r.name + " (" + stateLabel(r.state) + ")"; });
    append(list, el("li", null,
      el("button", { type: "button", "class": "linkish", text: job.name, onclick: function () { store.dispatch(selectNode(job.id)); } }),
      ranBy.length ? " \u2014 run by " + ranBy.join(", run by ") : "",
      run.startedAt ? " \u2014 started " + fmtTime(run.startedAt) : "",
      run.errorMessage ? " \u2014 " + shorten(run.errorMessage, 160) : ""));
  });
  append(banner, list);
  banner.hidden = false;
}

// ---------------------------------------------------------------- graph
// The graph (an API answer, or null for none) with the collapsed tasks' runs drawn as one node each.
export function renderGraph(graph, collapsed, selected) {
  var viewport = $("viewport");
  clear(viewport);
  if (!graph || !graph.target) return;
  graph = groupChildren(graph, collapsed);
  var L = layout(graph);
  var failedIds = {};
  (graph.failedUpstream || []).forEach(function (n) { failedIds[n.id] = true; });

  var edgeLayer = svg("g", { "class": "edges" }), nodeLayer = svg("g", { "class": "nodes" });
  append(viewport, [edgeLayer, nodeLayer]);
  L.edges.forEach(function (e) { append(edgeLayer, drawEdge(L, e)); });
  L.order.forEach(function (id) {
    append(nodeLayer, drawNode(L.nodes[id], L.coords[id], {
      target: id === graph.target.id || (graph.dagJobs || []).indexOf(id) >= 0,
      failedUpstream: !!failedIds[id],
      selected: id === selected,
    }));
  });
  frame({ x: -40, y: -40, w: Math.max(L.width, 1) + 80, h: Math.max(L.height, 1) + 80 });
  var drawn = L.order.filter(function (id) { return L.nodes[id].type !== "MORE"; }).length;
  $("graph").setAttribute("data-node-count", String(drawn));
  if (selected) markSelected(selected);
}

// Freshness badges: datasets older than their SloTier target get a "STALE" pill and say why on hover.
export function markStale(report) {
  var byId = {};
  ((report && report.breaches) || []).forEach(function (b) { byId[b.dataset.id] = b; });
  document.querySelectorAll("#viewport g.node.dataset").forEach(function (group) {
    var breach = byId[group.getAttribute("data-node-id")];
    if (!breach || group.classList.contains("stale")) return;
    var w = nodeWidth({ type: "DATASET" }), job = breach.responsible;
    group.classList.add("stale");
    // above the name: a full name runs to the right edge on its first line
    append(group, svg("rect", { "class": "pill stale-pill", x: w - 56, y: 4, width: 48, height: 16, rx: 8 }));
    append(group, svg("text", { "class": "pill-text", x: w - 32, y: 15.5, "text-anchor": "middle", text: "STALE" }));
    append(group, svg("title", { text: "Older than its " + breach.freshnessMinutes + "-minute freshness target (" +
      breach.cause + (job ? ": " + job.name : "") + ")" }));
  });
}

// A curve from the right side of the origin to the left side of the destination.
function drawEdge(L, e) {
  var a = L.coords[e.origin], b = L.coords[e.destination];
  var wa = nodeWidth(L.nodes[e.origin]), ha = nodeHeight(L.nodes[e.origin]), hb = nodeHeight(L.nodes[e.destination]);
  var x1 = a.x + wa, y1 = a.y + ha / 2, x2 = b.x - 2, y2 = b.y + hb / 2;
  var dx = Math.max(40, Math.abs(x2 - x1) / 2);
  var classes = e.more ? "edge more-edge" : EDGE_CLASSES[e.state] || "edge";
  var path = svg("path", {
    "class": classes, "data-origin": e.origin, "data-destination": e.destination, "data-state": e.state || null,
    d: "M" + x1 + "," + y1 + " C" + (x1 + dx) + "," + y1 + " " + (x2 - dx) + "," + y2 + " " + x2 + "," + y2,
    "marker-end": "url(#arrow)",
  });
  if (e.state === "triggered") append(path, svg("title", { text: triggerTitle(e) }));
  return path;
}

const KINDS = { DATASET: "dataset", MORE: "more", DAG: "dag", COLUMN: "column", RESTRICTED: "restricted" };
const RESTRICTED_TITLE = "Lineage from DAGs you may not read: not shown.";
const NAME_CHARS = 31;

function drawNode(node, at, flags) {
  var kind = KINDS[node.type] || "job";
  var run = node.latestRun || null;
  var classes = ["node", kind];
  if (run) classes.push(stateClass(run.state));
  if (flags.target) classes.push("target");
  if (flags.failedUpstream) classes.push("failed-upstream");
  if (flags.selected) classes.push("selected");
  var group = svg("g", {
    "class": classes.join(" "), transform: "translate(" + at.x + "," + at.y + ")",
    "data-node-id": node.id, "data-type": node.type, "data-state": run ? run.state : null,
    "data-owner": node.owner ? node.owner.id : null, "data-group-size": node.group ? node.group.size : null,
    tabindex: 0, role: "button",
  });
  append(group, svg("title", { text: kind === "more"
    ? node.name + " nodes not drawn: lower the depth or pick one direction to see them."
    : kind === "restricted" ? RESTRICTED_TITLE : node.id }));
  if (kind === "dataset") drawDataset(group, node);
  else if (kind === "more") drawMore(group, node);
  else if (kind === "column") drawColumn(group, node);
  else if (kind === "restricted") drawRestricted(group, node);
  else drawJob(group, node, kind, run);
  listen(group, node, kind);
  return group;
}

// A cylinder with the name and the namespace.
function drawDataset(group, node) {
  var w = nodeWidth(node), h = nodeHeight(node), ry = 7;
  append(group, svg("path", {
    "class": "shape",
    d: "M0," + ry + " A" + w / 2 + "," + ry + " 0 0 1 " + w + "," + ry + " L" + w + "," + (h - ry) +
      " A" + w / 2 + "," + ry + " 0 0 1 0," + (h - ry) + " Z",
  }));
  append(group, svg("ellipse", { "class": "shape-top", cx: w / 2, cy: ry, rx: w / 2, ry: ry }));
  append(group, nameText(node.name, 14, 33));
  append(group, svg("text", { "class": "subtitle", x: 14, y: 64, text: elideMiddle(node.namespace, 36) }));
}

// The full name on up to two lines (one <text>, a <tspan> per line: its text is the whole name when it fits).
function nameText(name, x, y) {
  var text = svg("text", { "class": "name", x: x, y: y });
  nameLines(name, NAME_CHARS).forEach(function (line, i) {
    append(text, svg("tspan", { x: x, dy: i ? 14 : 0, text: line }));
  });
  return text;
}

// What the reader may not see next to a node: a dashed box, no name, no count.
function drawRestricted(group, node) {
  var w = nodeWidth(node), h = nodeHeight(node);
  append(group, svg("rect", { "class": "shape", width: w, height: h, rx: 10 }));
  append(group, svg("text", { "class": "restricted-label", x: w / 2, y: h / 2 - 2, "text-anchor": "middle", text: "Restricted" }));
  append(group, svg("text", { "class": "subtitle", x: w / 2, y: h / 2 + 14, "text-anchor": "middle", text: "lineage of DAGs you may not read" }));
}

// A column of a dataset (column mode): the column's name, the dataset's name under it.
function drawColumn(group, node) {
  var w = nodeWidth(node), h = nodeHeight(node);
  append(group, svg("rect", { "class": "shape", width: w, height: h, rx: 16 }));
  append(group, svg("text", { "class": "kind-label", x: 16, y: 17, text: "COLUMN" }));
  append(group, svg("text", { "class": "name", x: 16, y: 36, text: shorten(node.name, 32) }));
  append(group, svg("text", { "class": "subtitle", x: 16, y: 51, text: shorten(node.namespace, 34) }));
}

// The "N more" placeholder.
function drawMore(group, node) {
  var w = nodeWidth(node), h = nodeHeight(node);
  append(group, svg("rect", { "class": "shape", width: w, height: h, rx: 10 }));
  append(group, svg("text", { x: w / 2, y: h / 2 + 4, "text-anchor": "middle", text: node.name }));
}

// A job (with its state as an accent bar) or a DAG, with a pill naming the latest run's state.
function drawJob(group, node, kind, run) {
  var w = nodeWidth(node), h = nodeHeight(node);
  append(group, svg("rect", { "class": "shape", width: w, height: h, rx: 10 }));
  if (kind === "job") {
    append(group, svg("path", {
      "class": "accent " + stateClass(run ? run.state : null),
      d: "M10,0 H6 A6,6 0 0 0 0,6 V" + (h - 6) + " A6,6 0 0 0 6," + h + " H10 Z",
    }));
  }
  append(group, svg("text", { "class": "kind-label", x: 18, y: 17, text: kind === "dag" ? "DAG" : node.group ? "TASK" : "JOB" }));
  append(group, nameText(node.name, 18, 36));
  if (node.owner) {  // run by a task (dbt's runs): name the task; its runs collapse into it
    append(group, svg("text", { "class": "subtitle", x: 18, y: 65, text: "in " + shorten(node.owner.name, 24) }));
    append(group, groupToggle(node.owner.id, w, "collapse", "Draw the runs of " + node.owner.name + " as one node"));
  } else if (node.group) {
    append(group, svg("text", { "class": "subtitle", x: 18, y: 65, text: node.group.size + (node.group.size === 1 ? " run inside" : " runs inside") }));
    append(group, groupToggle(node.id, w, "expand", "Draw the runs this task ran"));
  } else {
    append(group, svg("text", { "class": "subtitle", x: 18, y: 65, text: elideMiddle(node.namespace, 34) }));
  }
  var pill = run && run.state ? stateLabel(run.state) : node.declared ? "declared" : null;
  if (pill) {
    var pillClass = run && run.state ? stateClass(run.state) : "declared";
    var pw = pill.length * 6.2 + 14;
    append(group, svg("rect", { "class": "pill " + pillClass, x: w - pw - 8, y: 7, width: pw, height: 16, rx: 8 }));
    append(group, svg("text", { "class": "pill-text", x: w - pw / 2 - 8, y: 18.5, "text-anchor": "middle", text: pill.toUpperCase() }));
  }
}

// "collapse" / "expand" in a node's corner: the task's runs as one node, or drawn one by one.
function groupToggle(ownerId, w, label, title) {
  var toggle = svg("text", {
    "class": "group-toggle", x: w - 10, y: 65, "text-anchor": "end", text: label, role: "button",
    "data-toggle": ownerId,
  });
  append(toggle, svg("title", { text: title }));
  toggle.addEventListener("click", function (event) {
    event.stopPropagation();
    store.dispatch(toggleGroup(ownerId));
  });
  return toggle;
}

// Click or Enter selects a job or dataset, double-click opens it; a placeholder explains itself.
function listen(group, node, kind) {
  if (kind === "job" || kind === "dataset") {
    group.addEventListener("click", function () { store.dispatch(selectNode(node.id)); });
    group.addEventListener("dblclick", function () { store.dispatch(openNode(node.id)); });
    group.addEventListener("keydown", function (event) { if (event.key === "Enter") store.dispatch(selectNode(node.id)); });
  } else if (kind === "column") {  // a click shows its dataset's details, a double-click traces that column
    group.addEventListener("click", function () { store.dispatch(selectNode(node.dataset)); });
    group.addEventListener("dblclick", function () { store.dispatch(traceColumn(node.dataset, node.name)); });
  } else if (kind === "more") {
    group.addEventListener("click", function () {
      setStatus(node.name + " nodes are not drawn: lower the depth or pick one direction.", false);
    });
  } else if (kind === "restricted") {
    group.addEventListener("click", function () { setStatus(RESTRICTED_TITLE, false); });
  }
}

// Mark the node as selected in the drawn graph and highlight its edges (none for null).
export function markSelected(nodeId) {
  var groups = document.querySelectorAll("#viewport .node");
  groups.forEach(function (g) { g.classList.toggle("selected", g.getAttribute("data-node-id") === nodeId); });
  document.querySelectorAll("#viewport .edge").forEach(function (p) {
    p.classList.toggle("highlight", p.getAttribute("data-origin") === nodeId || p.getAttribute("data-destination") === nodeId);
  });
}
