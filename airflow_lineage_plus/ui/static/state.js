/* What the view shows (read from the page's URL at load) and how it is written back to the URL. */

const MAX_DEPTH = 12;

export function clampDepth(value, fallback) {
  var n = parseInt(value, 10);
  return isNaN(n) ? fallback : Math.max(1, Math.min(MAX_DEPTH, n));
}

var params = new URLSearchParams(window.location.search);

// A parameter Airflow fills into a tab's URL ({DAG_ID}, {TASK_ID}, {RUN_ID}: see navigation.py).
// Airflow 3.1 puts the ids in as they are, later versions percent-encoded; in both a "+" is part of the
// id (run ids end in "+00:00"), never a space, so it is decoded with decodeURIComponent and not with
// URLSearchParams, which would turn that "+" into a space and find no event of the run.
function airflowParam(name) {
  var raw = null;
  window.location.search.slice(1).split("&").forEach(function (pair) {
    var at = pair.indexOf("=");
    if (raw === null && at > 0 && pair.slice(0, at) === name) raw = pair.slice(at + 1);
  });
  if (!raw) return null;
  try { return decodeURIComponent(raw); } catch (notEncoded) { return raw; }  // a bare "%" (Airflow 3.1)
}

export const state = {
  node: params.get("node"),
  depth: clampDepth(params.get("depth"), airflowParam("dag_id") && !airflowParam("task_id") ? 2 : 6),
  direction: params.get("direction") || "both",
  dagId: airflowParam("dag_id"),
  taskId: airflowParam("task_id"),
  runId: airflowParam("run_id"),
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
  // a space as %20, not "+": the Airflow ids are read back with airflowParam, where "+" is a plus
  window.history.replaceState(null, "", "?" + qs.toString().replace(/\+/g, "%20"));
}

// The time travel and retired-edge parameters of every graph request.
export function when() {
  return { asOf: state.asOf, includeRetired: state.includeRetired ? "true" : null };
}
