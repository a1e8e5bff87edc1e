/* Runs that an Airflow task ran (dbt's model and test runs, a Spark application's) drawn under that task.
 *
 * The API gives a job node whose latest run was run by other runs a `ranBy` list (nearest first; the DAG
 * run is left out), so its last entry is the task. Each such job shows the task it ran in; a task's jobs
 * collapse into one node for the task (their edges re-routed to it) and expand again. Pure functions of
 * the API's graph JSON and the set of collapsed tasks: render.js draws what groupChildren returns.
 */

// The outermost run (an Airflow task) that ran this job's latest run, or null.
export function ownerOf(node) {
  var chain = node && node.type === "JOB" ? node.ranBy || [] : [];
  return chain.length ? chain[chain.length - 1] : null;
}

// Owner id -> {owner, members (job ids)} for the graph's jobs that were run by a task.
function groupsOf(nodes) {
  var groups = {};
  nodes.forEach(function (node) {
    var owner = ownerOf(node);
    if (!owner) return;
    var group = groups[owner.id] = groups[owner.id] || { owner: owner, members: [] };
    group.members.push(node.id);
  });
  return groups;
}

// The graph with every collapsed task's jobs replaced by one node for the task (never the target's).
// Job nodes of an expanded task get `owner` (the task) and `groupSize`; a collapsed task's node gets
// `group: {size}`. Edges, cut counts and failed upstream jobs follow the replacement.
export function groupChildren(graph, collapsed) {
  if (!graph || !graph.target) return graph;
  var nodes = graph.nodes || [];
  var groups = groupsOf(nodes.concat([graph.target]));
  var targetOwner = ownerOf(graph.target);
  var replaced = {};
  var shown = [];
  nodes.forEach(function (node) {
    var owner = ownerOf(node);
    var group = owner ? groups[owner.id] : null;
    if (group && collapsed[owner.id] && !(targetOwner && targetOwner.id === owner.id)) {
      replaced[node.id] = owner.id;
      return;
    }
    shown.push(group ? Object.assign({}, node, { owner: owner, groupSize: group.members.length }) : node);
  });
  Object.keys(groups).forEach(function (ownerId) {
    var hidden = groups[ownerId].members.filter(function (id) { return replaced[id]; });
    if (!hidden.length) return;
    shown = shown.filter(function (n) { return n.id !== ownerId; });  // the task itself, if drawn
    shown.push(taskNode(groups[ownerId].owner, hidden, nodes));
  });
  return Object.assign({}, graph, {
    nodes: shown,
    edges: rerouted(graph.edges || [], replaced),
    truncated: recount(graph.truncated, replaced),
    failedUpstream: (graph.failedUpstream || []).map(function (n) {
      return replaced[n.id] ? Object.assign({}, n, { id: replaced[n.id] }) : n;
    }),
  });
}

// The node that stands for a collapsed task: the task's job, at its nearest member's depth.
function taskNode(owner, hidden, nodes) {
  var depth = null;
  nodes.forEach(function (n) {
    if (hidden.indexOf(n.id) >= 0 && (depth === null || Math.abs(n.depth || 0) < Math.abs(depth))) depth = n.depth || 0;
  });
  return {
    id: owner.id, type: "JOB", namespace: owner.namespace, name: owner.name, depth: depth,
    latestRun: { runId: owner.runId, state: owner.state }, group: { size: hidden.length },
  };
}

function rerouted(edges, replaced) {
  var seen = {}, out = [];
  edges.forEach(function (e) {
    var origin = replaced[e.origin] || e.origin, destination = replaced[e.destination] || e.destination;
    var key = origin + "\n" + destination;
    if (origin === destination || seen[key]) return;
    seen[key] = true;
    out.push(Object.assign({}, e, { origin: origin, destination: destination }));
  });
  return out;
}

function recount(truncated, replaced) {
  if (!truncated || typeof truncated !== "object") return truncated;
  var out = {};
  Object.keys(truncated).forEach(function (id) {
    var key = replaced[id] || id;
    out[key] = (out[key] || 0) + truncated[id];
  });
  return out;
}
