/* Building blocks of the details panel: sections, key/value lists, tables, preformatted text, state
 * badges and links to other nodes. Text only (see dom.js). */
import { append, el, stateClass, stateLabel } from "./dom.js";
import { openNode } from "./state.js";
import { store } from "./store.js";

// A titled section appended to the panel; returns its body.
export function section(panel, title) {
  append(panel, el("h3", { text: title }));
  var body = el("div", { "class": "section" });
  append(panel, body);
  return body;
}

// A button that opens the node.
export function nodeLink(id, label) {
  return el("button", { type: "button", "class": "linkish", title: id, text: label || id, onclick: function () { store.dispatch(openNode(id)); } });
}

export function badge(runState) {
  return el("span", { "class": "badge " + stateClass(runState), text: stateLabel(runState).toUpperCase() });
}

// A <dl> of [label, value] pairs; empty values are left out, a DOM node value is shown as is.
export function kvList(pairs) {
  var dl = el("dl", { "class": "kv" });
  pairs.forEach(function (p) {
    if (p[1] === null || p[1] === undefined || p[1] === "") return;
    append(dl, [el("dt", { text: p[0] }), el("dd", null, typeof p[1] === "object" && p[1].nodeType ? p[1] : String(p[1]))]);
  });
  return dl;
}

export function table(headers, rows) {
  var t = el("table"), head = el("tr");
  headers.forEach(function (h) { append(head, el("th", { text: h })); });
  append(t, el("thead", null, head));
  var body = el("tbody");
  rows.forEach(function (row) {
    var tr = el("tr");
    row.forEach(function (cell) {
      append(tr, el("td", null, cell === null || cell === undefined ? "" : cell));
    });
    append(body, tr);
  });
  append(t, body);
  return t;
}

// Preformatted text; anything else as indented JSON.
export function pre(text) { return el("pre", { text: typeof text === "string" ? text : JSON.stringify(text, null, 2) }); }

// A list item linking to a dataset given as its id (a job's details) or as {namespace, name} (a run's).
export function datasetItem(item) {
  if (typeof item === "string") return el("li", null, nodeLink(item, labelFor(item)));
  return el("li", null, nodeLink("dataset:" + item.namespace + ":" + item.name, item.name));
}

// The name to show for a node id: from the drawn graph when the node is there (exact), else parsed.
export function labelFor(id) {
  var graph = store.getState().graph, found = null;
  if (graph) {
    [graph.target].concat(graph.nodes || []).forEach(function (n) { if (n && n.id === id) found = n; });
  }
  return found && found.name ? found.name : splitId(id).name;
}

// (namespace, name) of a node id; a URI namespace keeps its own colons (postgres://host:5432).
function splitId(id) {
  var rest = String(id).replace(/^(dataset|job):/, "");
  var uri = /^([A-Za-z][A-Za-z0-9+.-]*:\/\/[^/:]*(?::\d+)?):/.exec(rest);
  if (uri) return { namespace: uri[1], name: rest.slice(uri[0].length) };
  if (/^[A-Za-z][A-Za-z0-9+.-]*:\/\//.test(rest) && rest.lastIndexOf(":") > rest.indexOf("://")) {
    var last = rest.lastIndexOf(":");  // a namespace with a path (duckdb:///path/db): name after the last colon
    return { namespace: rest.slice(0, last), name: rest.slice(last + 1) };
  }
  var at = rest.indexOf(":");
  return at < 0 ? { namespace: "", name: rest } : { namespace: rest.slice(0, at), name: rest.slice(at + 1) };
}
