/* Lineage view: search, a left-to-right lineage graph in SVG, and a details panel.
 *
 * This module starts the page and is where the state's changes take effect. The flow is one way: a
 * control or a click dispatches an action to the store (store.js, state.js); the new state is drawn here
 * (react), and what it asks for is loaded; a loader's answer is dispatched as an action in its turn, and
 * only while no newer request of its kind was made (sequence.js). Data is only ever put in the page as
 * text: see dom.js.
 */
import { api } from "./api.js";
import { columnGraph, renderModeBar } from "./columns.js";
import { $, append, el, setStatus } from "./dom.js";
import { setupExport } from "./export.js";
import { showPanel } from "./panel.js";
import { setupPanZoom } from "./panzoom.js";
import { markSelected, markStale, renderBanner, renderGraph } from "./render.js";
import { runSearch, setupSearch } from "./search.js";
import { viewportRequests } from "./sequence.js";
import { MAX_DEPTH, graphFailed, graphLoaded, panelKey, setDepth, setDirection, staleLoaded, viewportQuery } from "./state.js";
import { store } from "./store.js";
import { setupTimeline, showTimeline } from "./timeline.js";

// The graph's request for the state (a node's neighbourhood, a column's path or a DAG's graph); its answer
// is drawn only while it is the newest.
function loadGraph(state) {
  var request = viewportQuery(state), isCurrent = viewportRequests();
  if (!request) return;
  var columns = request.path === "columns";
  setStatus(columns ? "Tracing the column\u2026" : "Loading lineage\u2026");
  api(request.path, request.query).then(function (answer) {
    if (!isCurrent()) return;  // a newer graph or column request was made: its answer is the one to draw
    var graph = columns ? columnGraph(answer) : answer;
    setStatus(columns && !graph.nodes.length ? "No column lineage recorded for this column." : "");
    store.dispatch(graphLoaded(graph));
    // freshness is an extra: a source that cannot answer it (Marquez) leaves the graph as it is
    if (!columns) api("freshness", {}).then(function (report) { if (isCurrent()) store.dispatch(staleLoaded(report)); }).catch(function () {});
  }).catch(function (error) {
    if (!isCurrent()) return;
    store.dispatch(graphFailed());
    setStatus(error.message, true);
  });
}

// Draw what changed from `previous` to `state`, and load what the new state asks for.
function react(state, previous) {
  if (JSON.stringify(viewportQuery(state)) !== JSON.stringify(viewportQuery(previous))) loadGraph(state);
  if (state.graph !== previous.graph || state.collapsed !== previous.collapsed) {
    if (state.graph !== previous.graph) renderBanner(state.graph);
    renderGraph(state.graph, state.collapsed, state.selected);
    markStale(state.stale);
  } else {
    if (state.stale !== previous.stale) markStale(state.stale);
    if (state.selected !== previous.selected) markSelected(state.selected);
  }
  if (state.column !== previous.column) renderModeBar(state.column);
  if (state.asOf !== previous.asOf || state.includeRetired !== previous.includeRetired) showTimeline(state.asOf, state.includeRetired);
  if (panelKey(state) !== panelKey(previous)) showPanel(state);
  $("depth").value = String(state.depth);
  $("direction").value = state.direction;
}

// ---------------------------------------------------------------- start
function setupControls() {
  var depth = $("depth"), direction = $("direction");
  for (var i = 1; i <= MAX_DEPTH; i++) append(depth, el("option", { value: i, text: String(i) }));
  depth.addEventListener("change", function () { store.dispatch(setDepth(depth.value)); });
  direction.addEventListener("change", function () { store.dispatch(setDirection(direction.value)); });
}

// Nothing drawn and nothing shown: the page before its first state.
const BLANK = Object.freeze({ graph: undefined, collapsed: undefined, column: undefined, asOf: undefined, panel: undefined });

function start() {
  setupControls();
  setupTimeline();
  setupSearch();
  setupPanZoom();
  setupExport();
  store.subscribe(react);
  react(store.getState(), BLANK);
  if ($("search").value) runSearch($("search").value);  // typed before the script was ready
  document.body.setAttribute("data-ready", "true");
}

if (document.readyState === "loading") document.addEventListener("DOMContentLoaded", start);
else start();
