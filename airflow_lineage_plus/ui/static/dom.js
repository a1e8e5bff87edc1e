/* Small DOM helpers and display formatting shared by every module of the Lineage view.
 *
 * Safety rule for every module of this page: data from the server (names, facet values, SQL, errors) is
 * only ever put in the page as text (textContent, SVG text nodes, attribute values set with setAttribute
 * on non-URL attributes). No HTML-parsing DOM sink is ever used. Links are built from our own base path
 * and encodeURIComponent (see links.js).
 */

const SVG_NS = "http://www.w3.org/2000/svg";
const STATES = ["COMPLETED", "FAILED", "SKIPPED", "UPSTREAM_FAILED", "RUNNING", "ABORTED", "START"];

// An HTML element: attributes (see setAttrs), then children (nodes, strings, numbers or arrays of them).
export function el(tag, attrs) {
  var node = document.createElement(tag);
  setAttrs(node, attrs);
  for (var i = 2; i < arguments.length; i++) append(node, arguments[i]);
  return node;
}

// An SVG element, built like el().
export function svg(tag, attrs) {
  var node = document.createElementNS(SVG_NS, tag);
  setAttrs(node, attrs);
  for (var i = 2; i < arguments.length; i++) append(node, arguments[i]);
  return node;
}

// "text" sets textContent, "onclick" adds a click listener; null, undefined and false are left out.
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

export function append(parent, child) {
  if (child === null || child === undefined || child === false) return;
  if (Array.isArray(child)) { child.forEach(function (c) { append(parent, c); }); return; }
  if (typeof child === "string" || typeof child === "number") parent.appendChild(document.createTextNode(String(child)));
  else parent.appendChild(child);
}

export function clear(node) { while (node.firstChild) node.removeChild(node.firstChild); }

export function $(id) { return document.getElementById(id); }

// The status line above the graph.
export function setStatus(text, isError) {
  var node = $("status");
  node.textContent = text || "";
  node.className = isError ? "status error" : "status";
}

export function stateClass(s) { return STATES.indexOf(s) >= 0 ? "state-" + s : "state-NONE"; }

// "skipped", "upstream failed", "failed"...: a state as people read it.
export function stateLabel(s) { return String(s || "").toLowerCase().replace(/_/g, " "); }

// The last max characters of text, with a leading ellipsis when cut.
export function shorten(text, max) {
  text = String(text === null || text === undefined ? "" : text);
  return text.length <= max ? text : "\u2026" + text.slice(text.length - max + 1);
}

// text in at most max characters: its start and its end, with an ellipsis in the middle when cut.
export function elideMiddle(text, max) {
  text = String(text === null || text === undefined ? "" : text);
  if (text.length <= max) return text;
  var head = Math.ceil((max - 1) / 2), tail = max - 1 - head;
  return text.slice(0, head) + "\u2026" + text.slice(text.length - tail);
}

// A name on at most two lines of perLine characters, broken after a ".", "_", "/" or "-" where one
// is near the end of the first line; a longer rest is elided in its middle, so the name's start (the
// DAG) and its end (the task) both stay readable.
export function nameLines(text, perLine) {
  text = String(text === null || text === undefined ? "" : text);
  if (text.length <= perLine) return [text];
  var cut = perLine;
  for (var i = perLine - 1; i >= Math.floor(perLine / 3); i--) {
    if (".:_/-".indexOf(text.charAt(i)) >= 0) { cut = i + 1; break; }
  }
  return [text.slice(0, cut), elideMiddle(text.slice(cut), perLine)];
}

export function fmtTime(value, short) {
  if (!value) return "";
  var d = new Date(value);
  if (isNaN(d.getTime())) return String(value);
  var text = d.toISOString().replace("T", " ").replace(/\.\d+Z$/, "Z").replace(/Z$/, short ? "" : " UTC");
  return short ? text.slice(5) : text;
}

export function fmtDuration(start, end) {
  if (!start || !end) return "";
  var ms = new Date(end) - new Date(start);
  if (!(ms >= 0)) return "";
  if (ms < 1000) return ms + " ms";
  var s = ms / 1000;
  if (s < 120) return s.toFixed(1) + " s";
  return Math.round(s / 60) + " min";
}
