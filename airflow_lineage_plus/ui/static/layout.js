/* Where each node of a lineage graph goes: layers (columns) left to right along the edges, an order in
 * each column that keeps edges short, then coordinates. Pure functions of the API's graph JSON. */

const JOB_W = 244, JOB_H = 72, DS_W = 244, DS_H = 76, COL_GAP = 56, ROW_GAP = 24;

export function nodeWidth(node) { return node.type === "DATASET" ? DS_W : JOB_W; }
export function nodeHeight(node) { return node.type === "DATASET" ? DS_H : JOB_H; }

// {nodes, order, edges, coords, width, height}; "N more" placeholders (type MORE) stand for what the
// server cut, with edges marked `more`.
export function layout(graph) {
  var g = indexGraph(graph);
  var layer = assignLayers(graph, g);
  var edges = g.edges.concat(addMorePlaceholders(graph, g, layer));
  var grid = columnsOf(g, layer);
  orderColumns(grid, g, layer);
  var placed = coordinates(grid);
  return {
    nodes: g.nodes, order: g.order, edges: edges, coords: placed.coords,
    width: placed.width, height: placed.height,
  };
}

// Nodes by id (target first, then in the server's order), the edges between them, and each node's
// incoming (inc) and outgoing (out) neighbours.
function indexGraph(graph) {
  var nodes = {}, order = [];
  function add(node) { if (node && !nodes[node.id]) { nodes[node.id] = node; order.push(node.id); } }
  add(graph.target);
  (graph.nodes || []).forEach(add);
  var edges = (graph.edges || []).filter(function (e) { return nodes[e.origin] && nodes[e.destination]; });
  var inc = {}, out = {};
  order.forEach(function (id) { inc[id] = []; out[id] = []; });
  edges.forEach(function (e) { out[e.origin].push(e.destination); inc[e.destination].push(e.origin); });
  return { nodes: nodes, order: order, edges: edges, inc: inc, out: out };
}

// The layer of every node: the roots (the target, or a DAG's jobs) at 0, upstream negative, downstream positive.
function assignLayers(graph, g) {
  var layer = {};
  var rootIds = graph.target && graph.target.type === "DAG" ? (graph.dagJobs || []) : [graph.target.id];
  rootIds = rootIds.filter(function (id) { return g.nodes[id]; });
  if (graph.target && graph.target.type === "DAG") rootIds.forEach(function (id) { layer[id] = 0; });
  else layer[graph.target.id] = 0;
  spreadFromRoots(rootIds, layer, g);
  placeNextToNeighbours(layer, g);
  pointEdgesRightwards(rootIds, layer, g);
  return layer;
}

// upstream: following incoming edges; downstream: following outgoing edges
function spreadFromRoots(rootIds, layer, g) {
  [[g.inc, -1], [g.out, 1]].forEach(function (pair) {
    var queue = rootIds.slice(), seen = {};
    rootIds.forEach(function (id) { seen[id] = true; });
    while (queue.length) {
      var id = queue.shift();
      pair[0][id].forEach(function (next) {
        if (seen[next]) return;
        seen[next] = true;
        if (layer[next] === undefined) layer[next] = layer[id] + pair[1];
        queue.push(next);
      });
    }
  });
}

// anything else: place next to a placed neighbour (what stays unplaced goes to layer 0)
function placeNextToNeighbours(layer, g) {
  var changed = true;
  while (changed) {
    changed = false;
    g.order.forEach(function (id) {
      if (layer[id] !== undefined) return;
      var from = g.inc[id].filter(function (o) { return layer[o] !== undefined; });
      var to = g.out[id].filter(function (d) { return layer[d] !== undefined; });
      if (from.length) { layer[id] = layer[from[0]] + 1; changed = true; }
      else if (to.length) { layer[id] = layer[to[0]] - 1; changed = true; }
    });
  }
  g.order.forEach(function (id) { if (layer[id] === undefined) layer[id] = 0; });
}

// make every edge point rightwards where the graph allows (bounded: cycles stay as they are)
function pointEdgesRightwards(rootIds, layer, g) {
  var isRoot = {};
  rootIds.forEach(function (id) { isRoot[id] = true; });
  for (var pass = 0; pass < g.order.length; pass++) {
    var moved = false;
    g.edges.forEach(function (e) {
      if (layer[e.origin] < layer[e.destination]) return;
      if (!isRoot[e.destination] && layer[e.destination] > 0) { layer[e.destination] = layer[e.origin] + 1; moved = true; }
      else if (!isRoot[e.origin] && layer[e.origin] <= 0) { layer[e.origin] = layer[e.destination] - 1; moved = true; }
    });
    if (!moved) break;
  }
}

// "N more" placeholders for what the server cut: one next to each node that lost neighbours.
// `truncated` is a count (cut around the target) or {node id: count}. Returns the placeholders' edges.
function addMorePlaceholders(graph, g, layer) {
  var moreEdges = [];
  var cut = graph.truncated;
  if (typeof cut === "number" && cut > 0) {
    cut = {};
    cut[graph.target.id] = graph.truncated;
  }
  Object.keys(cut && typeof cut === "object" ? cut : {}).forEach(function (id) {
    var count = cut[id];
    if (!g.nodes[id] || typeof count !== "number" || count <= 0) return;
    moreEdges.push(addMore(g, layer, id, count));
  });
  return moreEdges;
}

// One placeholder beside the node `id`: on its left when it is upstream of the roots, else on its right.
function addMore(g, layer, id, count) {
  var moreId = "more:" + id;
  g.nodes[moreId] = { id: moreId, type: "MORE", name: count + " more", of: id };
  g.order.push(moreId);
  g.inc[moreId] = []; g.out[moreId] = [];
  if (layer[id] < 0) {
    layer[moreId] = layer[id] - 1;
    g.out[moreId].push(id); g.inc[id].push(moreId);
    return { origin: moreId, destination: id, more: true };
  }
  layer[moreId] = layer[id] + 1;
  g.inc[moreId].push(id); g.out[id].push(moreId);
  return { origin: id, destination: moreId, more: true };
}

// The columns (node ids by layer, each sorted by type then name) and their layers in order.
function columnsOf(g, layer) {
  var columns = {};
  g.order.forEach(function (id) { (columns[layer[id]] = columns[layer[id]] || []).push(id); });
  var keys = Object.keys(columns).map(Number).sort(function (a, b) { return a - b; });
  keys.forEach(function (k) {
    columns[k].sort(function (a, b) {
      var na = g.nodes[a], nb = g.nodes[b];
      return String(na.type).localeCompare(String(nb.type)) || String(na.name).localeCompare(String(nb.name));
    });
  });
  return { columns: columns, keys: keys };
}

// Barycentre ordering: four rounds of a left-to-right then a right-to-left sweep.
function orderColumns(grid, g, layer) {
  var columns = grid.columns, keys = grid.keys, position = {};
  keys.forEach(function (k) { columns[k].forEach(function (id, i) { position[id] = i; }); });
  function sweep(keysInOrder, neighbours) {
    keysInOrder.forEach(function (k) {
      var bary = {};
      columns[k].forEach(function (id) {
        var ns = neighbours(id);
        bary[id] = ns.length ? ns.reduce(function (s, n) { return s + position[n]; }, 0) / ns.length : position[id];
      });
      columns[k].sort(function (a, b) { return bary[a] - bary[b] || position[a] - position[b]; });
      columns[k].forEach(function (id, i) { position[id] = i; });
    });
  }
  for (var round = 0; round < 4; round++) {
    sweep(keys.slice(1), function (id) { return g.inc[id].filter(function (n) { return layer[n] < layer[id]; }); });
    sweep(keys.slice(0, -1).reverse(), function (id) { return g.out[id].filter(function (n) { return layer[n] > layer[id]; }); });
  }
}

// coordinates: columns left to right, each column centred vertically
function coordinates(grid) {
  var columns = grid.columns, keys = grid.keys;
  var coords = {}, tallest = 0;
  keys.forEach(function (k) { tallest = Math.max(tallest, columns[k].length); });
  var rowH = Math.max(JOB_H, DS_H) + ROW_GAP;
  keys.forEach(function (k, ci) {
    var column = columns[k];
    var offset = (tallest - column.length) * rowH / 2;
    column.forEach(function (id, i) {
      coords[id] = { x: ci * (JOB_W + COL_GAP), y: offset + i * rowH };
    });
  });
  return { coords: coords, width: keys.length * (JOB_W + COL_GAP) - COL_GAP, height: tallest * rowH - ROW_GAP };
}
