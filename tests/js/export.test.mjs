// node --test: export.js, the drawn graph as a standalone SVG file (jsdom gives the DOM and the XML parser
// that read it back) and the PNG's size. state.js reads window.location at import: jsdom's window is set first.
import assert from "node:assert/strict";
import { test } from "node:test";
import { JSDOM } from "jsdom";

const dom = new JSDOM("<!DOCTYPE html><body></body>", { url: "https://airflow.example/lineage-plus/" });
globalThis.window = dom.window;
globalThis.document = dom.window.document;
const { fileName, pngSize, sanitize, serializeSvg, standaloneSvg, MAX_PNG_SIDE } = await import(
  "../../airflow_lineage_plus/ui/static/export.js"
);

const SVG_NS = "http://www.w3.org/2000/svg";
const HOSTILE = '</text><script>alert(1)</script><foreignObject><img src=x onerror=alert(2)></foreignObject>]]>&amp;"';
const doc = dom.window.document;

function node(tag, attrs, text) {
  const made = doc.createElementNS(SVG_NS, tag);
  Object.entries(attrs || {}).forEach(([k, v]) => made.setAttribute(k, v));
  if (text !== undefined) made.textContent = text;
  return made;
}

// A drawn viewport like render.js draws it: a dataset named HOSTILE, an edge, and things that must not survive.
function drawn() {
  const viewport = node("g", { id: "viewport" });
  const group = node("g", { "class": "node dataset target", "data-node-id": "dataset:ns:" + HOSTILE });
  group.appendChild(node("title", {}, "dataset:ns:" + HOSTILE));
  group.appendChild(node("path", { "class": "shape", d: "M0,7 L10,7 Z", onclick: "alert(3)" }));
  const text = node("text", { "class": "name", x: "14", y: "33" });
  text.appendChild(node("tspan", { x: "14" }, HOSTILE));
  group.appendChild(text);
  group.appendChild(node("script", {}, "alert(4)"));
  const foreign = node("foreignObject", {});
  foreign.appendChild(doc.createElement("div")).textContent = "html";
  group.appendChild(foreign);
  group.appendChild(node("a", { href: "javascript:alert(5)" }, "link"));
  group.appendChild(node("use", { href: "https://evil.example/x.svg#a" }));
  viewport.appendChild(group);
  viewport.appendChild(node("path", { "class": "edge", d: "M0,0 C1,1 2,2 3,3", "marker-end": "url(#arrow)" }));
  return viewport;
}

function defs() {
  const made = node("defs");
  const marker = node("marker", { id: "arrow" });
  marker.appendChild(node("path", { d: "M 0 0 L 10 5 L 0 10 z", "class": "arrow-head" }));
  made.appendChild(marker);
  return made;
}

const BOUNDS = { x: -40, y: -40, w: 1280.5, h: 400 };
const CSS = ":root { --text: #1d2433; }\n.node .name { fill: var(--text); }\n.a > .b { fill: red; }";

test("the SVG file parses as XML, with the graph, its marker and the page's styles, and nothing else", () => {
  const text = serializeSvg(standaloneSvg(doc, drawn(), defs(), BOUNDS, CSS), dom.window.XMLSerializer);
  assert.ok(text.startsWith('<?xml version="1.0" encoding="UTF-8"?>\n<svg '));
  const parsed = new dom.window.DOMParser().parseFromString(text, "image/svg+xml");
  assert.equal(parsed.getElementsByTagName("parsererror").length, 0);
  const root = parsed.documentElement;
  assert.equal(root.namespaceURI, SVG_NS);
  assert.deepEqual([root.getAttribute("viewBox"), root.getAttribute("width"), root.getAttribute("height")], ["-40 -40 1280.5 400", "1281", "400"]);
  assert.equal(root.querySelector("style").textContent, CSS);  // ">" escaped in the file, itself again once parsed
  assert.equal(root.querySelectorAll("marker#arrow path.arrow-head").length, 1);
  assert.equal(root.querySelectorAll("g#viewport > g.node.dataset").length, 1);
  assert.equal(root.querySelectorAll("path.edge").length, 1);
  const kinds = [...root.querySelectorAll("*")].map((e) => e.localName);
  assert.deepEqual([...new Set(kinds)].sort(), ["defs", "g", "marker", "path", "style", "text", "title", "tspan"]);
});

test("a hostile name stays text: no script, no foreignObject, no handler, no outside link", () => {
  const text = serializeSvg(standaloneSvg(doc, drawn(), defs(), BOUNDS, CSS), dom.window.XMLSerializer);
  assert.doesNotMatch(text, /<script|<foreignObject|<img|<a |<use|onclick|onerror=alert\(2\)"|javascript:/i);
  const root = new dom.window.DOMParser().parseFromString(text, "image/svg+xml").documentElement;
  assert.equal(root.querySelector("tspan").textContent, HOSTILE);  // shown exactly, as text
  assert.equal(root.querySelector("g.node").getAttribute("data-node-id"), "dataset:ns:" + HOSTILE);
  assert.equal(root.querySelector("title").textContent, "dataset:ns:" + HOSTILE);
  assert.equal(root.querySelectorAll("script, foreignObject, a, use").length, 0);
});

test("sanitize keeps links inside the file and drops HTML elements put in the SVG", () => {
  const root = node("svg");
  root.appendChild(node("path", { "marker-end": "url(#arrow)", href: "#arrow", onload: "x()" }));
  root.appendChild(doc.createElement("b"));
  sanitize(root);
  assert.equal(root.childNodes.length, 1);
  assert.deepEqual([...root.firstChild.attributes].map((a) => a.name).sort(), ["href", "marker-end"]);
});

test("the file name comes from the target node, reduced to safe characters", () => {
  assert.equal(fileName({ id: "dataset:ns:a.b", name: "analytics.marts.fct_daily_orders" }, "svg"), "lineage-analytics.marts.fct_daily_orders.svg");
  assert.equal(fileName({ name: "../../etc/pass wd?<x>" }, "png"), "lineage-etc_pass_wd_x_.png");
  assert.equal(fileName({ name: "" , id: "" }, "svg"), "lineage-graph.svg");
  assert.equal(fileName({ name: "x".repeat(500) }, "svg").length, "lineage-".length + 100 + ".svg".length);
});

test("the PNG is drawn at the device pixel ratio, smaller only where a canvas could not hold it", () => {
  assert.deepEqual(pngSize({ w: 1000, h: 300 }, 2), { width: 2000, height: 600, scale: 2 });
  assert.deepEqual(pngSize({ w: 1000, h: 300 }, 0), { width: 1000, height: 300, scale: 1 });
  const big = pngSize({ w: 20000, h: 1000 }, 2);
  assert.equal(big.width, MAX_PNG_SIDE);
  assert.ok(big.height === 410 && big.scale < 1);
});
