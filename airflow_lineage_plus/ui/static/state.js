/* What the view shows (read from the page's URL at load) and how it is written back to the URL. */

const MAX_DEPTH = 12;

export function clampDepth(value, fallback) {
  var n = parseInt(value, 10);
  return isNaN(n) ? fallback : Math.max(1, Math.min(MAX_DEPTH, n));
}

var params = new URLSearchParams(window.location.search);

export const state = {
  node: params.get("node"),
  depth: clampDepth(params.get("depth"), params.get("dag_id") && !params.get("task_id") ? 2 : 6),
  direction: params.get("direction") || "both",
  dagId: params.get("dag_id"),
  taskId: params.get("task_id"),
  runId: params.get("run_id"),
  asOf: params.get("asOf"),  // an ISO time, or null for now
  includeRetired: params.get("retired") === "1",
  column: params.get("column"),  // column mode: the column of state.node traced
  selected: null,
  graph: null,
  collapsed: {},  // task job id -> true: the runs it ran are drawn as one node (groups.js)
  maxDepth: MAX_DEPTH,
  view: { x: 0, y: 0, w: 1000, h: 600 },
  bounds: null,
};

export function updateUrl() {
  var qs = new URLSearchParams();
  if (state.node) qs.set("node", state.node);
  else {
    if (state.dagId) qs.set("dag_id", state.dagId);
    if (state.taskId) qs.set("task_id", state.taskId);
    if (state.runId) qs.set("run_id", state.runId);
  }
  qs.set("depth", String(state.depth));
  if (state.direction !== "both") qs.set("direction", state.direction);
  if (state.column && state.node) qs.set("column", state.column);
  if (state.asOf) qs.set("asOf", state.asOf);
  if (state.includeRetired) qs.set("retired", "1");
  window.history.replaceState(null, "", "?" + qs.toString());
}

// The time travel and retired-edge parameters of every graph request.
export function when() {
  return { asOf: state.asOf, includeRetired: state.includeRetired ? "true" : null };
}
