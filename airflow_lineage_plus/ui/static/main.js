/* Lineage view: search, a left-to-right lineage graph in SVG, and a details panel.
 *
 * This module starts the page and wires it: the controls, what to load for the URL's parameters, and the
 * two actions (open a node, select a node). Data is only ever put in the page as text: see dom.js.
 */
import { provideActions } from "./actions.js";
import { renderAttention } from "./attention.js";
import { api } from "./api.js";
import { leaveColumnMode, loadColumns, onColumnNode, traceColumn } from "./columns.js";
import { $, append, clear, el, setStatus } from "./dom.js";
import { setupExport } from "./export.js";
import { showDetails } from "./panel.js";
import { setupPanZoom } from "./panzoom.js";
import { markSelected, markStale, renderBanner, renderGraph } from "./render.js";
import { runSearch, setupSearch } from "./search.js";
import { viewportRequests } from "./sequence.js";
import { clampDepth, state, updateUrl, when } from "./state.js";
import { renderTaskInstance } from "./task-instance.js";
import { setupTimeline } from "./timeline.js";

// ---------------------------------------------------------------- navigation
function openNode(nodeId) {
  state.node = nodeId;
  state.column = null;
  state.selected = nodeId;
  updateUrl();
  loadGraph();
  showDetails(nodeId);
}

function selectNode(nodeId) {
  state.selected = nodeId;
  markSelected(nodeId);
  showDetails(nodeId);
}

// The node's neighbourhood (or a column's path), or the DAG's graph; anything else has no graph.
function loadGraph() {
  var request, at = when(), isCurrent;
  if (state.node && state.column) { loadColumns(); return; }
  setStatus("Loading lineage\u2026");
  if (state.node) {
    request = api("lineage", { node: state.node, depth: state.depth, direction: state.direction, asOf: at.asOf, includeRetired: at.includeRetired });
  } else if (state.dagId && !state.taskId) {
    request = api("dag", { dag_id: state.dagId, depth: state.depth, asOf: at.asOf, includeRetired: at.includeRetired });
  } else {
    return;
  }
  isCurrent = viewportRequests();
  request.then(function (graph) {
    if (!isCurrent()) return;  // a newer request was made: its answer is the one to draw
    state.graph = graph;
    setStatus("");
    renderBanner(graph);
    renderGraph(graph);
    // freshness is an extra: a source that cannot answer it (Marquez) leaves the graph as it is
    api("freshness", {}).then(function (report) { if (isCurrent()) markStale(report); }).catch(function () {});
  }).catch(function (error) {
    if (!isCurrent()) return;
    state.graph = null;
    clear($("viewport"));
    $("banner").hidden = true;
    setStatus(error.message, true);
  });
}

// ---------------------------------------------------------------- task-instance tab
function loadTaskInstance() {
  setStatus("Loading the task's lineage\u2026");
  var isCurrent = viewportRequests();
  api("task-instance", { dag_id: state.dagId, task_id: state.taskId, run_id: state.runId }).then(function (body) {
    if (!isCurrent()) return;
    var panel = $("details");
    clear(panel);
    renderTaskInstance(panel, body);
    state.node = body.job.id;
    state.selected = body.job.id;
    loadGraph();
  }).catch(function (error) {
    if (isCurrent()) setStatus(error.message, true);
  });
}

// ---------------------------------------------------------------- start
function setupControls() {
  var depth = $("depth");
  for (var i = 1; i <= state.maxDepth; i++) append(depth, el("option", { value: i, text: String(i) }));
  depth.value = String(state.depth);
  depth.addEventListener("change", function () { state.depth = clampDepth(depth.value, 3); updateUrl(); loadGraph(); });
  var direction = $("direction");
  direction.value = ["both", "upstream", "downstream"].indexOf(state.direction) >= 0 ? state.direction : "both";
  state.direction = direction.value;
  direction.addEventListener("change", function () { state.direction = direction.value; updateUrl(); loadGraph(); });
}

// What the time slider, the retired switch and column mode ask for.
function setupModes() {
  setupTimeline(function () { loadGraph(); if (state.selected) showDetails(state.selected); });
  document.addEventListener("lineage:trace-column", function (event) {
    state.selected = event.detail.dataset;
    traceColumn(event.detail.dataset, event.detail.column);
  });
  document.addEventListener("lineage:column", function (event) { onColumnNode(event.detail.node, event.detail.double); });
  document.addEventListener("lineage:leave-columns", function () { leaveColumnMode(loadGraph); });
}

function start() {
  provideActions(openNode, selectNode);
  setupControls();
  setupModes();
  setupSearch();
  setupPanZoom();
  setupExport();
  if (state.node) { state.selected = state.node; loadGraph(); showDetails(state.node); }
  else if (state.dagId && state.taskId) loadTaskInstance();
  else if (state.dagId) loadGraph();
  else renderAttention($("details"));  // what needs attention, instead of an empty page
  if ($("search").value) runSearch($("search").value);  // typed before the script was ready
  document.body.setAttribute("data-ready", "true");
}

if (document.readyState === "loading") document.addEventListener("DOMContentLoaded", start);
else start();
