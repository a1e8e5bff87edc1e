/* Lineage view: search, a left-to-right lineage graph in SVG, and a details panel.
 *
 * Safety rule for this file: data from the server (names, facet values, SQL, errors) is only ever put in
 * the page as text (textContent, SVG text nodes, attribute values set with setAttribute on non-URL
 * attributes). No HTML-parsing DOM sink is ever used. Links are built from our own base path and encodeURIComponent.
 */
(function () {
  "use strict";

  var SVG_NS = "http://www.w3.org/2000/svg";
  var JOB_W = 244, JOB_H = 58, DS_W = 244, DS_H = 62, COL_GAP = 56, ROW_GAP = 24;
  var STATES = ["COMPLETED", "FAILED", "SKIPPED", "RUNNING", "ABORTED", "START"];

  var params = new URLSearchParams(window.location.search);
  var state = {
    node: params.get("node"),
    depth: clampDepth(params.get("depth"), params.get("dag_id") && !params.get("task_id") ? 2 : 6),
    direction: params.get("direction") || "both",
    dagId: params.get("dag_id"),
    taskId: params.get("task_id"),
    runId: params.get("run_id"),
    selected: null,
    graph: null,
    maxDepth: 12,
    view: { x: 0, y: 0, w: 1000, h: 600 },
    bounds: null,
  };

  // ---------------------------------------------------------------- small DOM helpers (text only)
  function el(tag, attrs) {
    var node = document.createElement(tag);
    setAttrs(node, attrs);
    for (var i = 2; i < arguments.length; i++) append(node, arguments[i]);
    return node;
  }
  function svg(tag, attrs) {
    var node = document.createElementNS(SVG_NS, tag);
    setAttrs(node, attrs);
    for (var i = 2; i < arguments.length; i++) append(node, arguments[i]);
    return node;
  }
  function setAttrs(node, attrs) {
    if (!attrs) return;
    Object.keys(attrs).forEach(function (key) {
      var value = attrs[key];
      if (value === null || value === undefined || value === false) return;
      if (key === "text") node.textContent = String(value);
      else if (key === "onclick") node.addEventListener("click", value);
      else node.setAttribute(key, String(value));
    });
  }
  function append(parent, child) {
    if (child === null || child === undefined || child === false) return;
    if (Array.isArray(child)) { child.forEach(function (c) { append(parent, c); }); return; }
    if (typeof child === "string" || typeof child === "number") parent.appendChild(document.createTextNode(String(child)));
    else parent.appendChild(child);
  }
  function clear(node) { while (node.firstChild) node.removeChild(node.firstChild); }
  function $(id) { return document.getElementById(id); }
  function clampDepth(value, fallback) {
    var n = parseInt(value, 10);
    return isNaN(n) ? fallback : Math.max(1, Math.min(12, n));
  }
  function stateClass(s) { return STATES.indexOf(s) >= 0 ? "state-" + s : "state-NONE"; }
  function shorten(text, max) {
    text = String(text === null || text === undefined ? "" : text);
    return text.length <= max ? text : "\u2026" + text.slice(text.length - max + 1);
  }
  function fmtTime(value, short) {
    if (!value) return "";
    var d = new Date(value);
    if (isNaN(d.getTime())) return String(value);
    var text = d.toISOString().replace("T", " ").replace(/\.\d+Z$/, "Z").replace(/Z$/, short ? "" : " UTC");
    return short ? text.slice(5) : text;
  }
  function fmtDuration(start, end) {
    if (!start || !end) return "";
    var ms = new Date(end) - new Date(start);
    if (!(ms >= 0)) return "";
    if (ms < 1000) return ms + " ms";
    var s = ms / 1000;
    if (s < 120) return s.toFixed(1) + " s";
    return Math.round(s / 60) + " min";
  }
  function stateLabel(s) { return s === "SKIPPED" ? "skipped" : String(s || "").toLowerCase(); }

  // Base path of Airflow (everything before "lineage-plus/"), to link to Airflow's own pages.
  function airflowBase() {
    var path = window.location.pathname;
    var at = path.lastIndexOf("/lineage-plus/");
    return at >= 0 ? path.slice(0, at + 1) : "/";
  }
  function taskInstanceHref(dagId, runId, taskId, mapIndex) {
    if (!dagId || !taskId) return null;
    var href = airflowBase() + "dags/" + encodeURIComponent(dagId);
    if (runId) {
      href += "/runs/" + encodeURIComponent(runId) + "/tasks/" + encodeURIComponent(taskId);
      if (mapIndex !== undefined && mapIndex !== null && String(mapIndex) !== "-1") {
        href += "/mapped/" + encodeURIComponent(String(mapIndex));
      }
    } else {
      href += "/tasks/" + encodeURIComponent(taskId);
    }
    return href;
  }
  function safeExternalUrl(url) {
    return typeof url === "string" && /^https?:\/\//i.test(url) ? url : null;
  }

  // ---------------------------------------------------------------- API
  // A 503 "Still loading" means the server is opening a large event log: wait and ask again.
  function api(path, query, attempt) {
    attempt = attempt || 0;
    return apiOnce(path, query).catch(function (error) {
      if (error.status === 503 && /^Still loading/.test(error.message) && attempt < 200) {
        setStatus(error.message, false);
        return new Promise(function (resolve) { setTimeout(resolve, 3000); }).then(function () {
          return api(path, query, attempt + 1);
        });
      }
      throw error;
    });
  }

  function apiOnce(path, query) {
    var qs = new URLSearchParams();
    Object.keys(query || {}).forEach(function (k) {
      if (query[k] !== null && query[k] !== undefined && query[k] !== "") qs.set(k, query[k]);
    });
    return fetch("api/" + path + "?" + qs.toString(), {
      credentials: "same-origin",
      headers: { Accept: "application/json" },
    }).then(function (response) {
      return response.json().catch(function () { return {}; }).then(function (body) {
        if (response.ok) return body;
        var message = (body && typeof body.detail === "string") ? body.detail : "HTTP " + response.status;
        if (response.status === 401) message = "Your Airflow session has expired or is missing: log in to Airflow again.";
        if (response.status === 403) message = "Your Airflow user may not read DAGs and assets, so lineage is not shown.";
        var error = new Error(message);
        error.status = response.status;
        throw error;
      });
    });
  }

  function setStatus(text, isError) {
    var node = $("status");
    node.textContent = text || "";
    node.className = isError ? "status error" : "status";
  }

  // ---------------------------------------------------------------- search
  var searchTimer = null, searchSeq = 0, activeResult = -1;
  function setupSearch() {
    var input = $("search"), list = $("search-results");
    input.addEventListener("input", function () {
      clearTimeout(searchTimer);
      searchTimer = setTimeout(function () { runSearch(input.value); }, 180);
    });
    input.addEventListener("keydown", function (event) {
      var items = list.querySelectorAll("li[data-index]");
      if (event.key === "ArrowDown" || event.key === "ArrowUp") {
        if (!items.length) return;
        event.preventDefault();
        activeResult = (activeResult + (event.key === "ArrowDown" ? 1 : -1) + items.length) % items.length;
        items.forEach(function (item, i) { item.classList.toggle("active", i === activeResult); });
      } else if (event.key === "Enter") {
        event.preventDefault();
        var pick = items[activeResult >= 0 ? activeResult : 0];
        if (pick) pick.click();
      } else if (event.key === "Escape") {
        list.hidden = true;
      }
    });
    document.addEventListener("click", function (event) {
      if (!list.contains(event.target) && event.target !== input) list.hidden = true;
    });
  }
  function runSearch(text) {
    var list = $("search-results"), seq = ++searchSeq;
    if (!text.trim()) { list.hidden = true; return; }
    api("search", { q: text, limit: 25 }).then(function (body) {
      if (seq !== searchSeq) return;
      clear(list);
      activeResult = -1;
      var results = body.results || [];
      if (!results.length) append(list, el("li", { "class": "empty", text: "No dataset or job matches." }));
      results.forEach(function (node, i) {
        append(list, el("li", {
          role: "option", "data-index": i, "data-node-id": node.id, title: node.id,
          onclick: function () { list.hidden = true; $("search").value = node.name; openNode(node.id); },
        },
          el("span", { "class": "kind kind-" + (node.type === "JOB" ? "JOB" : "DATASET"), text: node.type === "JOB" ? "Job" : "Dataset" }),
          el("span", { "class": "result-name", text: node.name }),
          el("span", { "class": "result-ns", text: node.namespace })));
      });
      list.hidden = false;
    }).catch(function (error) {
      if (seq !== searchSeq) return;
      clear(list);
      append(list, el("li", { "class": "empty", text: error.message }));
      list.hidden = false;
    });
  }

  // ---------------------------------------------------------------- navigation
  function updateUrl() {
    var qs = new URLSearchParams();
    if (state.node) qs.set("node", state.node);
    else {
      if (state.dagId) qs.set("dag_id", state.dagId);
      if (state.taskId) qs.set("task_id", state.taskId);
      if (state.runId) qs.set("run_id", state.runId);
    }
    qs.set("depth", String(state.depth));
    if (state.direction !== "both") qs.set("direction", state.direction);
    window.history.replaceState(null, "", "?" + qs.toString());
  }
  function openNode(nodeId) {
    state.node = nodeId;
    state.selected = nodeId;
    updateUrl();
    loadGraph();
    showDetails(nodeId);
  }

  function loadGraph() {
    var request;
    setStatus("Loading lineage\u2026");
    if (state.node) {
      request = api("lineage", { node: state.node, depth: state.depth, direction: state.direction });
    } else if (state.dagId && !state.taskId) {
      request = api("dag", { dag_id: state.dagId, depth: state.depth });
    } else {
      return;
    }
    request.then(function (graph) {
      state.graph = graph;
      setStatus("");
      renderBanner(graph);
      renderGraph(graph);
    }).catch(function (error) {
      state.graph = null;
      clear($("viewport"));
      $("banner").hidden = true;
      setStatus(error.message, true);
    });
  }

  // ---------------------------------------------------------------- banner (failed upstream jobs)
  function renderBanner(graph) {
    var banner = $("banner");
    clear(banner);
    var failed = graph.failedUpstream || [];
    if (!graph.target || graph.target.type !== "DATASET" || !failed.length) { banner.hidden = true; return; }
    append(banner, document.createTextNode(
      failed.length === 1 ? "An upstream job of this dataset failed in its latest run:" :
        failed.length + " upstream jobs of this dataset failed in their latest run:"));
    var list = el("ul");
    failed.forEach(function (job) {
      var run = job.latestRun || {};
      append(list, el("li", null,
        el("button", { type: "button", "class": "linkish", text: job.name, onclick: function () { selectNode(job.id); } }),
        run.startedAt ? " \u2014 started " + fmtTime(run.startedAt) : "",
        run.errorMessage ? " \u2014 " + shorten(run.errorMessage, 160) : ""));
    });
    append(banner, list);
    banner.hidden = false;
  }

  // ---------------------------------------------------------------- layout
  function layout(graph) {
    var nodes = {}, order = [];
    function add(node) { if (node && !nodes[node.id]) { nodes[node.id] = node; order.push(node.id); } }
    add(graph.target);
    (graph.nodes || []).forEach(add);
    var edges = (graph.edges || []).filter(function (e) { return nodes[e.origin] && nodes[e.destination]; });
    var inc = {}, out = {};
    order.forEach(function (id) { inc[id] = []; out[id] = []; });
    edges.forEach(function (e) { out[e.origin].push(e.destination); inc[e.destination].push(e.origin); });

    var layer = {};
    var rootIds = graph.target && graph.target.type === "DAG" ? (graph.dagJobs || []) : [graph.target.id];
    rootIds = rootIds.filter(function (id) { return nodes[id]; });
    if (graph.target && graph.target.type === "DAG") rootIds.forEach(function (id) { layer[id] = 0; });
    else layer[graph.target.id] = 0;
    // upstream: following incoming edges; downstream: following outgoing edges
    [[inc, -1], [out, 1]].forEach(function (pair) {
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
    // anything else: place next to a placed neighbour
    var changed = true;
    while (changed) {
      changed = false;
      order.forEach(function (id) {
        if (layer[id] !== undefined) return;
        var from = inc[id].filter(function (o) { return layer[o] !== undefined; });
        var to = out[id].filter(function (d) { return layer[d] !== undefined; });
        if (from.length) { layer[id] = layer[from[0]] + 1; changed = true; }
        else if (to.length) { layer[id] = layer[to[0]] - 1; changed = true; }
      });
    }
    order.forEach(function (id) { if (layer[id] === undefined) layer[id] = 0; });
    // make every edge point rightwards where the graph allows (bounded: cycles stay as they are)
    var isRoot = {};
    rootIds.forEach(function (id) { isRoot[id] = true; });
    for (var pass = 0; pass < order.length; pass++) {
      var moved = false;
      edges.forEach(function (e) {
        if (layer[e.origin] < layer[e.destination]) return;
        if (!isRoot[e.destination] && layer[e.destination] > 0) { layer[e.destination] = layer[e.origin] + 1; moved = true; }
        else if (!isRoot[e.origin] && layer[e.origin] <= 0) { layer[e.origin] = layer[e.destination] - 1; moved = true; }
      });
      if (!moved) break;
    }

    // "N more" placeholders for what the server cut: one next to each node that lost neighbours
    var moreEdges = [];
    var cut = graph.truncated;
    if (typeof cut === "number" && cut > 0) {
      cut = {};
      cut[graph.target.id] = graph.truncated;
    }
    Object.keys(cut && typeof cut === "object" ? cut : {}).forEach(function (id) {
      var count = cut[id];
      if (!nodes[id] || typeof count !== "number" || count <= 0) return;
      var moreId = "more:" + id;
      nodes[moreId] = { id: moreId, type: "MORE", name: count + " more", of: id };
      order.push(moreId);
      inc[moreId] = []; out[moreId] = [];
      if (layer[id] < 0) {
        layer[moreId] = layer[id] - 1;
        out[moreId].push(id); inc[id].push(moreId);
        moreEdges.push({ origin: moreId, destination: id, more: true });
      } else {
        layer[moreId] = layer[id] + 1;
        inc[moreId].push(id); out[id].push(moreId);
        moreEdges.push({ origin: id, destination: moreId, more: true });
      }
    });
    edges = edges.concat(moreEdges);

    // columns and barycentre ordering
    var columns = {};
    order.forEach(function (id) { (columns[layer[id]] = columns[layer[id]] || []).push(id); });
    var keys = Object.keys(columns).map(Number).sort(function (a, b) { return a - b; });
    keys.forEach(function (k) {
      columns[k].sort(function (a, b) {
        var na = nodes[a], nb = nodes[b];
        return String(na.type).localeCompare(String(nb.type)) || String(na.name).localeCompare(String(nb.name));
      });
    });
    var position = {};
    function index() { keys.forEach(function (k) { columns[k].forEach(function (id, i) { position[id] = i; }); }); }
    index();
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
      sweep(keys.slice(1), function (id) { return inc[id].filter(function (n) { return layer[n] < layer[id]; }); });
      sweep(keys.slice(0, -1).reverse(), function (id) { return out[id].filter(function (n) { return layer[n] > layer[id]; }); });
    }

    // coordinates: columns left to right, each column centred vertically
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
    return {
      nodes: nodes, order: order, edges: edges, coords: coords,
      width: keys.length * (JOB_W + COL_GAP) - COL_GAP, height: tallest * rowH - ROW_GAP,
    };
  }
  // ---------------------------------------------------------------- drawing
  function renderGraph(graph) {
    var viewport = $("viewport");
    clear(viewport);
    if (!graph.target) return;
    var L = layout(graph);
    var failedIds = {};
    (graph.failedUpstream || []).forEach(function (n) { failedIds[n.id] = true; });

    var edgeLayer = svg("g", { "class": "edges" }), nodeLayer = svg("g", { "class": "nodes" });
    append(viewport, [edgeLayer, nodeLayer]);
    L.edges.forEach(function (e) {
      var a = L.coords[e.origin], b = L.coords[e.destination];
      var wa = nodeWidth(L.nodes[e.origin]), ha = nodeHeight(L.nodes[e.origin]), hb = nodeHeight(L.nodes[e.destination]);
      var x1 = a.x + wa, y1 = a.y + ha / 2, x2 = b.x - 2, y2 = b.y + hb / 2;
      var dx = Math.max(40, Math.abs(x2 - x1) / 2);
      append(edgeLayer, svg("path", {
        "class": e.more ? "edge more-edge" : "edge", "data-origin": e.origin, "data-destination": e.destination,
        d: "M" + x1 + "," + y1 + " C" + (x1 + dx) + "," + y1 + " " + (x2 - dx) + "," + y2 + " " + x2 + "," + y2,
        "marker-end": "url(#arrow)",
      }));
    });
    L.order.forEach(function (id) {
      append(nodeLayer, drawNode(L.nodes[id], L.coords[id], {
        target: id === graph.target.id || (graph.dagJobs || []).indexOf(id) >= 0,
        failedUpstream: !!failedIds[id],
        selected: id === state.selected,
      }));
    });
    state.bounds = { x: -40, y: -40, w: Math.max(L.width, 1) + 80, h: Math.max(L.height, 1) + 80 };
    fit();
    var drawn = L.order.filter(function (id) { return L.nodes[id].type !== "MORE"; }).length;
    $("graph").setAttribute("data-node-count", String(drawn));
  }
  function nodeWidth(node) { return node.type === "DATASET" ? DS_W : JOB_W; }
  function nodeHeight(node) { return node.type === "DATASET" ? DS_H : JOB_H; }

  function drawNode(node, at, flags) {
    var kind = node.type === "DATASET" ? "dataset" : node.type === "MORE" ? "more" : node.type === "DAG" ? "dag" : "job";
    var run = node.latestRun || null;
    var classes = ["node", kind];
    if (run) classes.push(stateClass(run.state));
    if (flags.target) classes.push("target");
    if (flags.failedUpstream) classes.push("failed-upstream");
    if (flags.selected) classes.push("selected");
    var group = svg("g", {
      "class": classes.join(" "), transform: "translate(" + at.x + "," + at.y + ")",
      "data-node-id": node.id, "data-type": node.type, "data-state": run ? run.state : null,
      tabindex: 0, role: "button",
    });
    append(group, svg("title", { text: node.type === "MORE"
      ? node.name + " nodes not drawn: lower the depth or pick one direction to see them."
      : node.id }));
    var w = nodeWidth(node), h = nodeHeight(node);
    if (kind === "dataset") {
      var ry = 7;
      append(group, svg("path", {
        "class": "shape",
        d: "M0," + ry + " A" + w / 2 + "," + ry + " 0 0 1 " + w + "," + ry + " L" + w + "," + (h - ry) +
          " A" + w / 2 + "," + ry + " 0 0 1 0," + (h - ry) + " Z",
      }));
      append(group, svg("ellipse", { "class": "shape-top", cx: w / 2, cy: ry, rx: w / 2, ry: ry }));
      append(group, svg("text", { "class": "name", x: 14, y: 33, text: shorten(node.name, 32) }));
      append(group, svg("text", { "class": "subtitle", x: 14, y: 50, text: shorten(node.namespace, 36) }));
    } else if (kind === "more") {
      append(group, svg("rect", { "class": "shape", width: w, height: h, rx: 10 }));
      append(group, svg("text", { x: w / 2, y: h / 2 + 4, "text-anchor": "middle", text: node.name }));
    } else {
      append(group, svg("rect", { "class": "shape", width: w, height: h, rx: 10 }));
      if (kind === "job") {
        append(group, svg("path", {
          "class": "accent " + stateClass(run ? run.state : null),
          d: "M10,0 H6 A6,6 0 0 0 0,6 V" + (h - 6) + " A6,6 0 0 0 6," + h + " H10 Z",
        }));
      }
      append(group, svg("text", { "class": "kind-label", x: 18, y: 17, text: kind === "dag" ? "DAG" : "JOB" }));
      append(group, svg("text", { "class": "name", x: 18, y: 36, text: shorten(node.name, 32) }));
      append(group, svg("text", { "class": "subtitle", x: 18, y: 51, text: shorten(node.namespace, 34) }));
      if (run && run.state) {
        var label = stateLabel(run.state), pw = label.length * 6.2 + 14;
        append(group, svg("rect", { "class": "pill " + stateClass(run.state), x: w - pw - 8, y: 7, width: pw, height: 16, rx: 8 }));
        append(group, svg("text", { "class": "pill-text", x: w - pw / 2 - 8, y: 18.5, "text-anchor": "middle", text: label.toUpperCase() }));
      }
    }
    if (kind === "job" || kind === "dataset") {
      group.addEventListener("click", function () { selectNode(node.id); });
      group.addEventListener("dblclick", function () { openNode(node.id); });
      group.addEventListener("keydown", function (event) { if (event.key === "Enter") selectNode(node.id); });
    } else if (kind === "more") {
      group.addEventListener("click", function () {
        setStatus(node.name + " nodes are not drawn: lower the depth or pick one direction.", false);
      });
    }
    return group;
  }

  function selectNode(nodeId) {
    state.selected = nodeId;
    var groups = document.querySelectorAll("#viewport .node");
    groups.forEach(function (g) { g.classList.toggle("selected", g.getAttribute("data-node-id") === nodeId); });
    document.querySelectorAll("#viewport .edge").forEach(function (p) {
      p.classList.toggle("highlight", p.getAttribute("data-origin") === nodeId || p.getAttribute("data-destination") === nodeId);
    });
    showDetails(nodeId);
  }

  // ---------------------------------------------------------------- pan & zoom
  function applyView() {
    var v = state.view;
    $("graph").setAttribute("viewBox", v.x + " " + v.y + " " + v.w + " " + v.h);
  }
  function fit() {
    var box = $("graph").getBoundingClientRect(), b = state.bounds;
    if (!b) return;
    var aspect = (box.width || 1000) / (box.height || 600);
    var w = Math.max(b.w, b.h * aspect, 900), h = w / aspect;
    state.view = { x: b.x + b.w / 2 - w / 2, y: b.y + b.h / 2 - h / 2, w: w, h: h };
    applyView();
  }
  function setupPanZoom() {
    var graph = $("graph"), drag = null;
    graph.addEventListener("wheel", function (event) {
      event.preventDefault();
      var box = graph.getBoundingClientRect(), v = state.view;
      var scale = event.deltaY > 0 ? 1.12 : 1 / 1.12;
      var px = v.x + (event.clientX - box.left) / box.width * v.w;
      var py = v.y + (event.clientY - box.top) / box.height * v.h;
      state.view = { x: px - (px - v.x) * scale, y: py - (py - v.y) * scale, w: v.w * scale, h: v.h * scale };
      applyView();
    }, { passive: false });
    graph.addEventListener("mousedown", function (event) {
      if (event.target.closest && event.target.closest(".node")) return;
      drag = { x: event.clientX, y: event.clientY, view: Object.assign({}, state.view) };
      graph.classList.add("panning");
    });
    window.addEventListener("mousemove", function (event) {
      if (!drag) return;
      var box = graph.getBoundingClientRect();
      state.view = {
        x: drag.view.x - (event.clientX - drag.x) * drag.view.w / box.width,
        y: drag.view.y - (event.clientY - drag.y) * drag.view.h / box.height,
        w: drag.view.w, h: drag.view.h,
      };
      applyView();
    });
    window.addEventListener("mouseup", function () { drag = null; graph.classList.remove("panning"); });
    window.addEventListener("resize", fit);
    $("fit").addEventListener("click", fit);
  }

  // ---------------------------------------------------------------- details panel
  var detailsSeq = 0;
  function showDetails(nodeId) {
    var panel = $("details"), seq = ++detailsSeq;
    clear(panel);
    append(panel, el("p", { "class": "note", text: "Loading details\u2026" }));
    api("node", { node: nodeId }).then(function (details) {
      if (seq !== detailsSeq) return;
      clear(panel);
      renderDetails(panel, details, nodeId);
    }).catch(function (error) {
      if (seq !== detailsSeq) return;
      clear(panel);
      append(panel, el("p", { "class": "error-text", text: error.message }));
    });
  }

  function section(panel, title) {
    append(panel, el("h3", { text: title }));
    var body = el("div", { "class": "section" });
    append(panel, body);
    return body;
  }
  function nodeLink(id, label) {
    return el("button", { type: "button", "class": "linkish", title: id, text: label || id, onclick: function () { openNode(id); } });
  }
  function badge(runState) {
    return el("span", { "class": "badge " + stateClass(runState), text: stateLabel(runState).toUpperCase() });
  }
  function kvList(pairs) {
    var dl = el("dl", { "class": "kv" });
    pairs.forEach(function (p) {
      if (p[1] === null || p[1] === undefined || p[1] === "") return;
      append(dl, [el("dt", { text: p[0] }), el("dd", null, typeof p[1] === "object" && p[1].nodeType ? p[1] : String(p[1]))]);
    });
    return dl;
  }
  function table(headers, rows) {
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
  function pre(text) { return el("pre", { text: typeof text === "string" ? text : JSON.stringify(text, null, 2) }); }
  function names(list) {
    return (list || []).map(function (o) { return typeof o === "string" ? o : (o && (o.name || o.id)) || JSON.stringify(o); });
  }
  function first(details, keys) {
    for (var i = 0; i < keys.length; i++) {
      if (details[keys[i]] !== undefined && details[keys[i]] !== null) return details[keys[i]];
    }
    return undefined;
  }

  var SHOWN = {};
  function renderDetails(panel, d, nodeId) {
    SHOWN = {};
    function take() {
      var keys = Array.prototype.slice.call(arguments);
      keys.forEach(function (k) { SHOWN[k] = true; });
      return first(d, keys);
    }
    take("id", "type", "name", "namespace", "depth");
    var type = d.type || (String(nodeId).indexOf("job:") === 0 ? "JOB" : "DATASET");
    append(panel, el("span", { "class": "kind kind-" + (type === "JOB" ? "JOB" : "DATASET"), text: type === "JOB" ? "Job" : "Dataset" }));
    append(panel, el("h2", { text: d.name || nodeId }));
    append(panel, el("div", { "class": "namespace", text: d.namespace || "" }));
    var actions = el("p", null, nodeLink(nodeId, "Centre the graph here"));
    append(panel, actions);

    if (type === "JOB") renderJob(panel, d, take);
    else renderDataset(panel, d, take);

    var owners = take("owners");
    if (owners && owners.length) append(section(panel, "Owners"), el("ul", null, names(owners).map(function (n) { return el("li", { text: n }); })));
    var tags = take("tags");
    if (tags && (tags.length || Object.keys(tags).length)) {
      append(section(panel, "Tags"), el("ul", null, (Array.isArray(tags) ? tags : Object.keys(tags).map(function (k) { return { key: k, value: tags[k] }; }))
        .map(function (t) { return el("li", { text: typeof t === "string" ? t : (t.key || t.name) + (t.value !== undefined ? " = " + t.value : "") }); })));
    }
    var docs = take("documentation", "description", "docs");
    if (docs) append(section(panel, "Documentation"), pre(typeof docs === "string" ? docs : docs.description || docs));

    var rest = Object.keys(d).filter(function (k) {
      var v = d[k];
      return !SHOWN[k] && v !== null && v !== undefined && !(Array.isArray(v) && !v.length) &&
        !(typeof v === "object" && !Array.isArray(v) && !Object.keys(v).length);
    });
    if (rest.length) {
      var extra = {};
      rest.forEach(function (k) { extra[k] = d[k]; });
      append(section(panel, "More"), pre(extra));
    }
  }

  // Airflow ids of the latest run: from its entry in the recent runs, else the job's own "airflow" ids.
  function latestAirflowIds(runs, latest, airflow) {
    var match = (runs || []).filter(function (r) { return r.runId && r.runId === latest.runId && r.airflow; })[0];
    if (match) return match.airflow;
    return { dag_id: airflow.dag_id, task_id: airflow.task_id, run_id: airflow.run_id, map_index: airflow.map_index };
  }

  function renderJob(panel, d, take) {
    var runs = take("recentRuns", "runs");
    var latest = take("latestRun");
    var airflow = take("airflow") || {};
    var dagId = first(d, ["dagId", "dag_id"]) || airflow.dag_id || airflow.dagId;
    var taskId = first(d, ["taskId", "task_id"]) || airflow.task_id || airflow.taskId;
    take("dagId", "dag_id", "taskId", "task_id");
    if (latest) {
      var s = section(panel, "Latest run");
      append(s, kvList([
        ["State", badge(latest.state)],
        ["Started", fmtTime(latest.startedAt)],
        ["Ended", fmtTime(latest.endedAt)],
        ["Duration", fmtDuration(latest.startedAt, latest.endedAt)],
        ["Skip reason", latest.skipReason || latest.skip_reason],
        ["Execution", latest.executionMode || latest.execution_mode],
      ]));
      if (latest.errorMessage) append(s, pre(latest.errorMessage));
      var latestIds = latestAirflowIds(runs, latest, airflow);
      var href = taskInstanceHref(latestIds.dag_id || dagId, latestIds.run_id, latestIds.task_id || taskId, latestIds.map_index);
      if (href) append(s, el("p", null, el("a", { href: href, target: "_top", text: "Open the task instance in Airflow" })));
    } else if (dagId && taskId) {
      var taskHref = taskInstanceHref(dagId, null, taskId);
      append(section(panel, "Airflow"), el("a", { href: taskHref, target: "_top", text: "Open the task in Airflow" }));
    }
    var sql = take("sql", "query");
    if (sql) append(section(panel, "SQL"), pre(typeof sql === "string" ? sql : sql.query || sql));
    var code = take("sourceCodeLocation", "sourceCode");
    if (code) {
      var cs = section(panel, "Source");
      if (typeof code === "string") append(cs, pre(code));
      else {
        var url = safeExternalUrl(code.url);
        append(cs, kvList([["Repository", code.repoUrl], ["Path", code.path], ["Version", code.version],
          ["Link", url ? el("a", { href: url, target: "_blank", rel: "noopener noreferrer", text: url }) : code.url]]));
      }
    }
    var inputs = take("inputs"), outputs = take("outputs");
    if (inputs && inputs.length) append(section(panel, "Inputs"), el("ul", null, inputs.map(datasetItem)));
    if (outputs && outputs.length) append(section(panel, "Outputs"), el("ul", null, outputs.map(datasetItem)));
    if (runs && runs.length) {
      var list = el("div", { "class": "runs" });
      runs.forEach(function (r) {
        var ids = r.airflow || {};
        var rh = ids.run_id ? taskInstanceHref(ids.dag_id || dagId, ids.run_id, ids.task_id || taskId, ids.map_index) : null;
        var reason = r.skipReason || r.skip_reason;
        append(list, el("div", { "class": "run" },
          el("div", { "class": "run-head" },
            badge(r.state),
            el("span", { text: fmtTime(r.startedAt) }),
            el("span", { "class": "note", text: fmtDuration(r.startedAt, r.endedAt) })),
          reason ? el("div", { "class": "note", text: "Skipped: " + reason }) : null,
          r.errorMessage ? el("div", { "class": "error-text", text: shorten(r.errorMessage, 300) }) : null,
          rh ? el("a", { href: rh, target: "_top", text: "Task instance in Airflow" + (ids.try_number ? " (try " + ids.try_number + ")" : "") }) : null));
      });
      append(section(panel, "Recent runs"), list);
    }
  }

  // (namespace, name) of a node id; a URI namespace keeps its own colons (postgres://host:5432).
  function splitId(id) {
    var rest = String(id).replace(/^(dataset|job):/, "");
    var uri = /^([A-Za-z][A-Za-z0-9+.\-]*:\/\/[^\/:]*(?::\d+)?):/.exec(rest);
    if (uri) return { namespace: uri[1], name: rest.slice(uri[0].length) };
    if (/^[A-Za-z][A-Za-z0-9+.\-]*:\/\//.test(rest) && rest.lastIndexOf(":") > rest.indexOf("://")) {
      var last = rest.lastIndexOf(":");  // a namespace with a path (duckdb:///path/db): name after the last colon
      return { namespace: rest.slice(0, last), name: rest.slice(last + 1) };
    }
    var at = rest.indexOf(":");
    return at < 0 ? { namespace: "", name: rest } : { namespace: rest.slice(0, at), name: rest.slice(at + 1) };
  }
  // The name to show for a node id: from the drawn graph when the node is there (exact), else parsed.
  function labelFor(id) {
    var graph = state.graph, found = null;
    if (graph) {
      [graph.target].concat(graph.nodes || []).forEach(function (n) { if (n && n.id === id) found = n; });
    }
    return found && found.name ? found.name : splitId(id).name;
  }
  function datasetItem(item) {
    var id = typeof item === "string" ? item : item.id || ("dataset:" + item.namespace + ":" + item.name);
    var label = typeof item === "string" ? labelFor(item) : item.name || id;
    return el("li", null, nodeLink(id, label));
  }

  function renderDataset(panel, d, take) {
    var fields = take("fields");
    var versions = take("schemaVersions");
    var change = take("lastSchemaChange");
    if (fields && fields.length) {
      var s = section(panel, "Schema (" + fields.length + " columns)");
      append(s, table(["Column", "Type", "Description"], fields.map(function (f) {
        return [f.name, f.type || "", f.description || ""];
      })));
    }
    if (versions && versions.length) {
      var c = section(panel, "Schema history");
      var seen = versions.length === 1 ? "One schema version seen." : versions.length + " schema versions seen.";
      if (Array.isArray(change) && change.length) {
        append(c, el("p", { "class": "note", text: seen + " Last change:" }), renderChange(change));
      } else {
        append(c, el("p", { "class": "note", text: seen + " No change recorded." }));
      }
    }
    var quality = take("quality");
    var qualityRun = take("qualityRunId");
    if (quality && Object.keys(quality).length) {
      var q = section(panel, "Quality");
      append(q, renderQuality(quality));
      if (qualityRun) append(q, el("p", { "class": "note", text: "From the run " + qualityRun + " that last wrote it." }));
    }
    var columns = take("columnLineage", "columns");
    if (columns && (Array.isArray(columns) ? columns.length : Object.keys(columns).length)) {
      append(section(panel, "Column lineage"), renderColumns(columns));
    }
    var producers = take("producers", "producingJobs", "writers");
    if (producers && producers.length) {
      append(section(panel, "Written by"), el("ul", null, producers.map(function (p) {
        var id = typeof p === "string" ? p : p.id;
        var run = typeof p === "object" ? p.latestRun : null;
        return el("li", null, nodeLink(id, typeof p === "string" ? labelFor(p) : p.name), run ? [" ", badge(run.state)] : null);
      })));
    }
    var consumers = take("consumers", "readers", "consumingJobs");
    if (consumers && consumers.length) {
      append(section(panel, "Read by"), el("ul", null, consumers.map(function (p) {
        return el("li", null, nodeLink(typeof p === "string" ? p : p.id, typeof p === "string" ? labelFor(p) : p.name));
      })));
    }
  }
  // The changes between the two newest schema versions: [{kind, column, from, to}].
  function renderChange(changes) {
    var list = el("ul");
    (Array.isArray(changes) ? changes : []).forEach(function (c) {
      var kind = String(c.kind || "").toLowerCase();
      var text = kind.indexOf("add") >= 0 ? "added " + c.column + (c.to ? " " + c.to : "")
        : kind.indexOf("remov") >= 0 ? "removed " + c.column + (c.from ? " " + c.from : "")
        : c.column + ": " + (c.from || "?") + " \u2192 " + (c.to || "?");
      append(list, el("li", { text: text }));
    });
    return list;
  }
  function renderQuality(quality) {
    var rows = [];
    function walk(prefix, value) {
      if (value === null || value === undefined) return;
      if (typeof value === "object" && !Array.isArray(value)) {
        Object.keys(value).forEach(function (k) {
          if (k.charAt(0) !== "_") walk(prefix ? prefix + "." + k : k, value[k]);
        });
      } else if (Array.isArray(value)) {
        value.forEach(function (v, i) {
          if (v && typeof v === "object" && v.assertion !== undefined) {
            rows.push([(v.column ? v.column + ": " : "") + v.assertion, v.success === false ? "failed" : "passed"]);
          } else walk(prefix + "[" + i + "]", v);
        });
      } else rows.push([prefix, String(value)]);
    }
    walk("", quality);
    return table(["Figure", "Value"], rows.slice(0, 200));
  }
  function renderColumns(columns) {
    var rows = [];
    if (Array.isArray(columns)) {
      columns.forEach(function (c) {
        var from = (c.inputFields || c.inputs || []).map(function (i) { return (i.name || i.dataset || "") + "." + (i.field || i.column || ""); });
        rows.push([c.column || c.name || c.field, from.join(", ")]);
      });
    } else {
      Object.keys(columns).forEach(function (col) {
        var value = columns[col];
        var inputs = Array.isArray(value) ? value : (value.inputFields || value.inputs || []);
        rows.push([col, inputs.map(function (i) {
          if (typeof i === "string") return i;
          var how = (i.transformations || []).map(function (t) { return t.subtype || t.type; }).filter(Boolean);
          return (i.name || "") + "." + (i.column || i.field || "") + (how.length ? " (" + how.join(", ") + ")" : "");
        }).join(", ")]);
      });
    }
    return table(["Column", "Comes from"], rows);
  }

  // ---------------------------------------------------------------- task-instance tab
  function loadTaskInstance() {
    setStatus("Loading the task's lineage\u2026");
    api("task-instance", { dag_id: state.dagId, task_id: state.taskId, run_id: state.runId }).then(function (body) {
      var panel = $("details");
      clear(panel);
      renderTaskInstance(panel, body);
      state.node = body.job.id;
      state.selected = body.job.id;
      loadGraph();
    }).catch(function (error) {
      setStatus(error.message, true);
    });
  }
  function renderTaskInstance(panel, body) {
    var job = body.job, run = body.run, tries = body.tries || [];
    append(panel, el("span", { "class": "kind kind-JOB", text: "Task run" }));
    append(panel, el("h2", { text: job.name }));
    append(panel, el("div", { "class": "namespace", text: job.namespace }));
    append(panel, el("p", null, nodeLink(job.id, "Show the job's details")));
    if (!run) {
      append(panel, el("p", { "class": "note", text: state.runId
        ? "No lineage event was recorded for this task in this DAG run."
        : "No run of this task was recorded." }));
      return;
    }
    var summary = run.run || run;
    var s = section(panel, "This run");
    append(s, kvList([
      ["State", summary.state ? badge(summary.state) : null],
      ["Try", summary.tryNumber],
      ["Run id", summary.runId],
      ["Started", fmtTime(summary.startedAt)],
      ["Ended", fmtTime(summary.endedAt)],
      ["Duration", fmtDuration(summary.startedAt, summary.endedAt)],
      ["Skip reason", summary.skipReason],
    ]));
    if (summary.errorMessage) append(s, pre(summary.errorMessage));
    if (tries.length > 1) {
      append(section(panel, "Tries of this DAG run"), table(["Try", "State", "Started"], tries.map(function (t) {
        return [String(t.tryNumber || ""), badge(t.state), fmtTime(t.startedAt)];
      })));
    }
    var inputs = run.inputs || [], outputs = run.outputs || [];
    append(section(panel, "Inputs (" + inputs.length + ")"), inputs.length ? el("ul", null, inputs.map(datasetItem)) : el("p", { "class": "note", text: "none" }));
    append(section(panel, "Outputs (" + outputs.length + ")"), outputs.length ? el("ul", null, outputs.map(datasetItem)) : el("p", { "class": "note", text: "none" }));
    var facets = run.facets || run.runFacets;
    if (facets && Object.keys(facets).length) {
      var f = section(panel, "Facets");
      Object.keys(facets).sort().forEach(function (name) {
        var d = el("details");
        append(d, el("summary", { text: name }));
        append(d, pre(facets[name]));
        append(f, d);
      });
    }
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

  function start() {
    setupControls();
    setupSearch();
    setupPanZoom();
    if (state.node) { state.selected = state.node; loadGraph(); showDetails(state.node); }
    else if (state.dagId && state.taskId) loadTaskInstance();
    else if (state.dagId) loadGraph();
    else setStatus("Search a dataset or a job to see where its data comes from and where it goes.");
    if ($("search").value) runSearch($("search").value);  // typed before the script was ready
    document.body.setAttribute("data-ready", "true");
  }
  if (document.readyState === "loading") document.addEventListener("DOMContentLoaded", start);
  else start();
})();
