/* Column mode: one column's path, hop by hop, up to the columns it comes from and down to the columns it
 * feeds (api/columns), drawn with the same layout as the lineage graph. */
import { selectNode } from "./actions.js";
import { api } from "./api.js";
import { $, append, clear, el, setStatus } from "./dom.js";
import { renderGraph } from "./render.js";
import { viewportRequests } from "./sequence.js";
import { state, updateUrl, when } from "./state.js";

// A column node's id: the dataset's id and the column, as JSON (any characters are safe in it).
export function columnId(datasetId, column) { return JSON.stringify([datasetId, column]); }

export function traceColumn(datasetId, column) {
  state.node = datasetId;
  state.column = column;
  updateUrl();
  loadColumns();
}

export function leaveColumnMode(reload) {
  state.column = null;
  updateUrl();
  showModeBar();
  reload();
}

export function loadColumns() {
  setStatus("Tracing the column\u2026");
  showModeBar();
  var query = { node: state.node, column: state.column, depth: state.depth, asOf: when().asOf };
  var isCurrent = viewportRequests();
  api("columns", query).then(function (answer) {
    if (!isCurrent()) return;  // a newer graph or column request was made since
    var graph = columnGraph(answer);
    state.graph = graph;
    setStatus(graph.nodes.length ? "" : "No column lineage recorded for this column.");
    $("banner").hidden = true;
    renderGraph(graph);
  }).catch(function (error) {
    if (!isCurrent()) return;
    clear($("viewport"));
    setStatus(error.message, true);
  });
}

// The answer as a graph: a node per (dataset, column), an edge per hop the data takes.
function columnGraph(answer) {
  var target = answer.target, nodes = [], seen = {};
  function add(datasetId, namespace, name, column, depth) {
    var id = columnId(datasetId, column);
    if (seen[id]) return;
    seen[id] = true;
    nodes.push({ id: id, type: "COLUMN", name: column, namespace: name, dataset: datasetId, datasetNamespace: namespace, depth: depth });
  }
  var top = { id: columnId(target.id, answer.column), type: "COLUMN", name: answer.column, namespace: target.name, dataset: target.id, depth: 0 };
  seen[top.id] = true;
  [["upstream", -1], ["downstream", 1]].forEach(function (way) {
    (answer[way[0]] || []).forEach(function (row) {
      add("dataset:" + row.namespace + ":" + row.name, row.namespace, row.name, row.column, way[1] * row.depth);
    });
  });
  var edges = (answer.paths || []).map(function (p) {
    return { origin: columnId(p.from.dataset, p.from.column), destination: columnId(p.to.dataset, p.to.column) };
  });
  return { target: top, nodes: nodes, edges: edges, column: true };
}

// The bar saying the view traces a column, with the way back.
function showModeBar() {
  var bar = $("mode-bar");
  clear(bar);
  bar.hidden = !state.column;
  if (!state.column) return;
  append(bar, el("span", { text: "Column mode: where " + state.column + " comes from and where it goes." }));
  append(bar, el("button", { type: "button", "class": "button", id: "leave-columns", text: "Back to datasets and jobs",
    onclick: function () { document.dispatchEvent(new CustomEvent("lineage:leave-columns")); } }));
}

// Clicking a column shows its dataset's details; double-clicking traces that column instead.
export function onColumnNode(node, double) {
  if (double) traceColumn(node.dataset, node.name);
  else selectNode(node.dataset);
}
