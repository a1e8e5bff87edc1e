/* Column mode: one column's path, hop by hop, up to the columns it comes from and down to the columns it
 * feeds (api/columns, loaded by main.js), drawn with the same layout as the lineage graph. */
import { $, append, clear, el } from "./dom.js";
import { leaveColumns } from "./state.js";
import { store } from "./store.js";

// A column node's id: the dataset's id and the column, as JSON (any characters are safe in it).
export function columnId(datasetId, column) { return JSON.stringify([datasetId, column]); }

// The api/columns answer as a graph: a node per (dataset, column), an edge per hop the data takes.
export function columnGraph(answer) {
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
    answer[way[0]].forEach(function (row) {
      add("dataset:" + row.namespace + ":" + row.name, row.namespace, row.name, row.column, way[1] * row.depth);
    });
  });
  var edges = answer.paths.map(function (p) {
    return { origin: columnId(p.from.dataset, p.from.column), destination: columnId(p.to.dataset, p.to.column) };
  });
  return { target: top, nodes: nodes, edges: edges, column: true };
}

// The bar saying the view traces `column` (none for null), with the way back.
export function renderModeBar(column) {
  var bar = $("mode-bar");
  clear(bar);
  bar.hidden = !column;
  if (!column) return;
  append(bar, el("span", { text: "Column mode: where " + column + " comes from and where it goes." }));
  append(bar, el("button", { type: "button", "class": "button", id: "leave-columns", text: "Back to datasets and jobs",
    onclick: function () { store.dispatch(leaveColumns()); } }));
}
