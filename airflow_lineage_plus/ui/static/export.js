/* Export the drawn graph as an SVG or a PNG file (the toolbar's "SVG" and "PNG" buttons).
 *
 * The SVG is the drawn #viewport (with the arrow marker it uses) in an <svg> of its own whose viewBox is
 * the whole graph, with the page's stylesheet inlined in a <style>, so the file renders the same on its
 * own. Names in it come from events: they are only ever text nodes and attribute values, which
 * XMLSerializer escapes; and before serializing, anything but the drawing elements is dropped (no
 * <script>, no <foreignObject>, no <a>, no <image>), as are event-handler attributes and links that do not
 * point inside the file. The PNG is that SVG drawn on a canvas at the device pixel ratio (less for a graph
 * too big for a canvas). File names come from the target node.
 */
import { $, setStatus } from "./dom.js";
import { drawnBounds } from "./panzoom.js";
import { store } from "./store.js";

const SVG_NS = "http://www.w3.org/2000/svg";
// the elements the drawing uses; everything else is left out of the file
const DRAWING = ["svg", "g", "defs", "marker", "path", "rect", "ellipse", "circle", "line", "polyline", "polygon",
  "text", "tspan", "title", "style"];
// the largest side of the PNG in pixels (browsers refuse bigger canvases)
export const MAX_PNG_SIDE = 8192;

// A file name for the graph of `target` (a node of the answer): "lineage-<its name>.<ext>", only letters,
// digits and "._-" kept, at most 100 characters of the name.
export function fileName(target, ext) {
  var name = String((target && (target.name || target.id)) || "graph");
  name = name.replace(/[^A-Za-z0-9._-]+/g, "_").replace(/^[._]+/, "").slice(0, 100) || "graph";
  return "lineage-" + name + "." + ext;
}

// Drop what is not a drawing element, event-handler attributes and links outside the file, in place.
export function sanitize(root) {
  Array.prototype.slice.call(root.querySelectorAll("*")).forEach(function (node) {
    if (DRAWING.indexOf(node.localName) < 0 || node.namespaceURI !== SVG_NS) {
      if (node.parentNode) node.parentNode.removeChild(node);
    }
  });
  [root].concat(Array.prototype.slice.call(root.querySelectorAll("*"))).forEach(function (node) {
    Array.prototype.slice.call(node.attributes).forEach(function (attr) {
      var name = attr.name.toLowerCase(), value = String(attr.value).trim();
      var link = name === "href" || name === "xlink:href" || name === "src";
      if (name.indexOf("on") === 0 || (link && value.charAt(0) !== "#") || /^\s*javascript:/i.test(value)) {
        node.removeAttribute(attr.name);
      }
    });
  });
  return root;
}

// A standalone <svg> of the drawn graph: `viewport` (the drawn <g>) and `defs` cloned, in `bounds`
// ({x, y, w, h}), with `css` (the page's stylesheet text) in a <style>.
export function standaloneSvg(doc, viewport, defs, bounds, css) {
  var root = doc.createElementNS(SVG_NS, "svg");
  root.setAttribute("class", "lineage-export");
  root.setAttribute("viewBox", [bounds.x, bounds.y, bounds.w, bounds.h].join(" "));
  root.setAttribute("width", String(Math.ceil(bounds.w)));
  root.setAttribute("height", String(Math.ceil(bounds.h)));
  var style = doc.createElementNS(SVG_NS, "style");
  style.textContent = String(css || "");
  root.appendChild(style);
  if (defs) root.appendChild(defs.cloneNode(true));
  root.appendChild(viewport.cloneNode(true));
  return sanitize(root);
}

// The SVG file's text.
export function serializeSvg(root, Serializer) {
  var serializer = new (Serializer || window.XMLSerializer)();
  return '<?xml version="1.0" encoding="UTF-8"?>\n' + serializer.serializeToString(root) + "\n";
}

// {width, height, scale} of the PNG of `bounds` at `ratio` device pixels per unit, at most MAX_PNG_SIDE.
export function pngSize(bounds, ratio) {
  var scale = Math.min(ratio > 0 ? ratio : 1, MAX_PNG_SIDE / Math.max(bounds.w, 1), MAX_PNG_SIDE / Math.max(bounds.h, 1));
  return { width: Math.max(1, Math.round(bounds.w * scale)), height: Math.max(1, Math.round(bounds.h * scale)), scale: scale };
}

// The page's own stylesheet rules as text (every rule the drawing's classes may need).
function pageCss() {
  var rules = [];
  Array.prototype.slice.call(document.styleSheets).forEach(function (sheet) {
    try {
      Array.prototype.slice.call(sheet.cssRules).forEach(function (rule) { rules.push(rule.cssText); });
    } catch (error) { /* a sheet of another origin: not ours to copy */ }
  });
  return rules.join("\n");
}

// The drawn graph as a standalone <svg>, its extent and its target; null when nothing is drawn.
function currentSvg() {
  var graph = store.getState().graph, bounds = drawnBounds();
  if (!graph || !graph.target || !bounds || !$("viewport").firstChild) return null;
  return { root: standaloneSvg(document, $("viewport"), document.querySelector("#graph defs"), bounds, pageCss()), bounds: bounds, target: graph.target };
}

function download(blob, name) {
  var url = window.URL.createObjectURL(blob);
  var link = document.createElement("a");
  link.href = url;
  link.download = name;
  link.hidden = true;
  document.body.appendChild(link);
  link.click();
  document.body.removeChild(link);
  setTimeout(function () { window.URL.revokeObjectURL(url); }, 10000);
}

function exportSvg() {
  var drawn = currentSvg();
  if (!drawn) { setStatus("Nothing drawn to export yet.", false); return; }
  download(new window.Blob([serializeSvg(drawn.root)], { type: "image/svg+xml" }), fileName(drawn.target, "svg"));
}

function exportPng() {
  var drawn = currentSvg();
  if (!drawn) { setStatus("Nothing drawn to export yet.", false); return; }
  var size = pngSize(drawn.bounds, window.devicePixelRatio || 1), name = fileName(drawn.target, "png");
  var image = new window.Image();
  image.onload = function () {
    var canvas = document.createElement("canvas");
    canvas.width = size.width;
    canvas.height = size.height;
    var context = canvas.getContext("2d");
    context.fillStyle = "#ffffff";
    context.fillRect(0, 0, size.width, size.height);
    context.scale(size.scale, size.scale);
    context.drawImage(image, 0, 0, drawn.bounds.w, drawn.bounds.h);
    canvas.toBlob(function (blob) {
      if (blob) download(blob, name);
      else setStatus("The browser could not draw the PNG.", true);
    }, "image/png");
  };
  image.onerror = function () { setStatus("The browser could not draw the PNG.", true); };
  image.src = "data:image/svg+xml;charset=utf-8," + encodeURIComponent(serializeSvg(drawn.root));
}

export function setupExport() {
  $("export-svg").addEventListener("click", exportSvg);
  $("export-png").addEventListener("click", exportPng);
}
