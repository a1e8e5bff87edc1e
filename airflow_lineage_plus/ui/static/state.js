/* What the view shows: its state read from the page's URL, the actions that change it (one reducer), and
 * what follows from a state: the URL that names it and the request that draws its graph.
 *
 * Pure: no DOM, no window. store.js holds the page's one state and applies these actions; a state is
 * frozen, and a new one is made for every change.
 */

export const MAX_DEPTH = 12;
const DIRECTIONS = ["both", "upstream", "downstream"];

export function clampDepth(value, fallback) {
  var n = parseInt(value, 10);
  return isNaN(n) ? fallback : Math.max(1, Math.min(MAX_DEPTH, n));
}

// The state a URL's query string (window.location.search) names. The side panel shows one of: a node's
// details ("details": of `selected`), a task instance ("task-instance"), what needs attention
// ("attention"), or its placeholder (null).
export function initialState(search) {
  var params = new URLSearchParams(search);
  var node = params.get("node"), dagId = airflowParam(search, "dag_id"), taskId = airflowParam(search, "task_id");
  var direction = params.get("direction");
  return Object.freeze({
    node: node,
    column: node ? params.get("column") : null,  // column mode: the column of `node` traced
    depth: clampDepth(params.get("depth"), dagId && !taskId ? 2 : 6),
    direction: DIRECTIONS.indexOf(direction) >= 0 ? direction : "both",
    asOf: params.get("asOf"),  // an ISO time, or null for now
    includeRetired: params.get("retired") === "1",
    dagId: dagId,  // the Airflow tab the page was opened from (a DAG's, a task's or a task instance's)
    taskId: taskId,
    runId: airflowParam(search, "run_id"),
    taskJob: null,  // the job of that task, once the task-instance answer named it
    selected: node,
    panel: node ? "details" : dagId && taskId ? "task-instance" : dagId ? null : "attention",
    graph: null,  // the graph drawn (the answer of viewportQuery's request), or null
    stale: null,  // the freshness report of the drawn graph's datasets
    collapsed: Object.freeze({}),  // task job id -> true: the runs it ran are drawn as one node (groups.js)
  });
}

// A parameter Airflow fills into a tab's URL ({DAG_ID}, {TASK_ID}, {RUN_ID}: see navigation.py).
// Airflow 3.1 puts the ids in as they are, later versions percent-encoded; in both a "+" is part of the
// id (run ids end in "+00:00"), never a space, so it is decoded with decodeURIComponent and not with
// URLSearchParams, which would turn that "+" into a space and find no event of the run.
function airflowParam(search, name) {
  var raw = null;
  String(search || "").replace(/^\?/, "").split("&").forEach(function (pair) {
    var at = pair.indexOf("=");
    if (raw === null && at > 0 && pair.slice(0, at) === name) raw = pair.slice(at + 1);
  });
  if (!raw) return null;
  try { return decodeURIComponent(raw); } catch (notEncoded) { return raw; }  // a bare "%" (Airflow 3.1)
}

// ---------------------------------------------------------------- actions
// Make the node the graph's centre and show its details.
export function openNode(node) { return { type: "openNode", node: node }; }
// Highlight the node in the drawn graph and show its details.
export function selectNode(node) { return { type: "selectNode", node: node }; }
export function setDepth(depth) { return { type: "setDepth", depth: depth }; }
export function setDirection(direction) { return { type: "setDirection", direction: direction }; }
// See the lineage as of an ISO time; null for now.
export function setAsOf(asOf) { return { type: "setAsOf", asOf: asOf }; }
export function setRetired(include) { return { type: "setRetired", include: include }; }
// Column mode: the path of one column of a dataset (its details stay in the panel).
export function traceColumn(dataset, column) { return { type: "traceColumn", dataset: dataset, column: column }; }
export function leaveColumns() { return { type: "leaveColumns" }; }
// Draw the runs a task ran as one node, or one by one again.
export function toggleGroup(owner) { return { type: "toggleGroup", owner: owner }; }
// What the loaders found: a graph to draw (or none, after an error), freshness, a task-instance's job.
export function graphLoaded(graph) { return { type: "graphLoaded", graph: graph }; }
export function graphFailed() { return { type: "graphFailed" }; }
export function staleLoaded(report) { return { type: "staleLoaded", report: report }; }
export function taskJobFound(job) { return { type: "taskJobFound", job: job }; }

// The state after an action; the same state when the action changes nothing.
export function reduce(state, action) {
  switch (action.type) {
    case "openNode": return changed(state, { node: action.node, column: null, selected: action.node, panel: "details" });
    case "selectNode": return changed(state, { selected: action.node, panel: "details" });
    case "setDepth": return changed(state, { depth: clampDepth(action.depth, state.depth) });
    case "setDirection":
      return changed(state, { direction: DIRECTIONS.indexOf(action.direction) >= 0 ? action.direction : "both" });
    case "setAsOf": return changed(state, { asOf: action.asOf || null });
    case "setRetired": return changed(state, { includeRetired: !!action.include });
    case "traceColumn":
      return changed(state, { node: action.dataset, column: action.column, selected: action.dataset, panel: "details" });
    case "leaveColumns": return changed(state, { column: null });
    case "toggleGroup": {
      var collapsed = Object.assign({}, state.collapsed);
      collapsed[action.owner] = !collapsed[action.owner];
      return changed(state, { collapsed: Object.freeze(collapsed) });
    }
    case "graphLoaded": return changed(state, { graph: action.graph, stale: null });
    case "graphFailed": return changed(state, { graph: null, stale: null });
    case "staleLoaded": return changed(state, { stale: action.report });
    case "taskJobFound": return changed(state, { taskJob: action.job, selected: action.job });
    default: throw new Error("Unknown action: " + action.type);
  }
}

function changed(state, fields) {
  var same = Object.keys(fields).every(function (key) { return state[key] === fields[key]; });
  return same ? state : Object.freeze(Object.assign({}, state, fields));
}

// ---------------------------------------------------------------- what follows from a state
// The page's query string for a state: a node's view, else the Airflow tab's ids; spaces as %20, not "+"
// (the Airflow ids are read back with airflowParam, where "+" is a plus).
export function urlOf(state) {
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
  return "?" + qs.toString().replace(/\+/g, "%20");
}

// The request whose answer the graph draws ({path, query} of api.js), or null when nothing is to be drawn:
// a column's path, a node's neighbourhood (the task-instance tab's job once known), or a DAG's graph.
export function viewportQuery(state) {
  var asOf = state.asOf, includeRetired = state.includeRetired ? "true" : null, centre = state.node || state.taskJob;
  if (state.node && state.column) {
    return { path: "columns", query: { node: state.node, column: state.column, depth: state.depth, asOf: asOf } };
  }
  if (centre) {
    return { path: "lineage", query: { node: centre, depth: state.depth, direction: state.direction, asOf: asOf, includeRetired: includeRetired } };
  }
  if (state.dagId && !state.taskId) {
    return { path: "dag", query: { dag_id: state.dagId, depth: state.depth, asOf: asOf, includeRetired: includeRetired } };
  }
  return null;
}

// What the side panel shows, as a key that changes when it must be loaded again (a node's details
// depend on the time looked at).
export function panelKey(state) {
  return state.panel === "details" ? "details " + state.selected + " " + (state.asOf || "") : String(state.panel);
}
