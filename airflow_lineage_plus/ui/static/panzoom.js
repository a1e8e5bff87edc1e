/* Pan (drag the background), zoom (wheel, around the pointer) and fit the graph, through the SVG viewBox.
 *
 * The camera is this module's own: the part of the drawing shown (the viewBox) and the extent of what is
 * drawn (render.js frames each drawing; export.js reads its extent). It is no part of the view's state.
 */
import { $ } from "./dom.js";

var view = { x: 0, y: 0, w: 1000, h: 600 }, bounds = null;

function applyView() {
  $("graph").setAttribute("viewBox", view.x + " " + view.y + " " + view.w + " " + view.h);
}

// The extent ({x, y, w, h}) of the graph drawn last, or null before the first drawing.
export function drawnBounds() { return bounds; }

// A new drawing of extent `extent`: show all of it.
export function frame(extent) {
  bounds = extent;
  fit();
}

// Show the whole drawn graph, at least 900 units wide, centred.
function fit() {
  var box = $("graph").getBoundingClientRect(), b = bounds;
  if (!b) return;
  var aspect = (box.width || 1000) / (box.height || 600);
  var w = Math.max(b.w, b.h * aspect, 900), h = w / aspect;
  view = { x: b.x + b.w / 2 - w / 2, y: b.y + b.h / 2 - h / 2, w: w, h: h };
  applyView();
}

export function setupPanZoom() {
  var graph = $("graph");
  graph.addEventListener("wheel", function (event) {
    event.preventDefault();
    var box = graph.getBoundingClientRect(), v = view;
    var scale = event.deltaY > 0 ? 1.12 : 1 / 1.12;
    var px = v.x + (event.clientX - box.left) / box.width * v.w;
    var py = v.y + (event.clientY - box.top) / box.height * v.h;
    view = { x: px - (px - v.x) * scale, y: py - (py - v.y) * scale, w: v.w * scale, h: v.h * scale };
    applyView();
  }, { passive: false });
  setupDrag(graph);
  window.addEventListener("resize", fit);
  $("fit").addEventListener("click", fit);
}

// Dragging the background (not a node) pans.
function setupDrag(graph) {
  var drag = null;
  graph.addEventListener("mousedown", function (event) {
    if (event.target.closest && event.target.closest(".node")) return;
    drag = { x: event.clientX, y: event.clientY, view: Object.assign({}, view) };
    graph.classList.add("panning");
  });
  window.addEventListener("mousemove", function (event) {
    if (!drag) return;
    var box = graph.getBoundingClientRect();
    view = {
      x: drag.view.x - (event.clientX - drag.x) * drag.view.w / box.width,
      y: drag.view.y - (event.clientY - drag.y) * drag.view.h / box.height,
      w: drag.view.w, h: drag.view.h,
    };
    applyView();
  });
  window.addEventListener("mouseup", function () { drag = null; graph.classList.remove("panning"); });
}
