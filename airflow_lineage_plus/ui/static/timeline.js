/* The time slider (see the graph as of an earlier time) and the retired-edges switch.
 *
 * The slider spans the first to the last event time the source knows (api/time-range, asked once at
 * start); its right end is "now" (no asOf). Moving it only updates the label; letting go dispatches the
 * time, and the view reloads as of it (main.js).
 */
import { api } from "./api.js";
import { $, fmtTime } from "./dom.js";
import { setAsOf, setRetired } from "./state.js";
import { store } from "./store.js";

const STEPS = 1000;
var range = null;

export function setupTimeline() {
  var slider = $("as-of"), retired = $("retired");
  retired.addEventListener("change", function () { store.dispatch(setRetired(retired.checked)); });
  slider.addEventListener("input", function () { showLabel(pickedTime(slider)); });
  slider.addEventListener("change", function () { store.dispatch(setAsOf(pickedTime(slider))); });
  $("as-of-now").addEventListener("click", function () {
    slider.value = String(STEPS);
    slider.dispatchEvent(new Event("change"));
  });
  api("time-range", {}).then(function (body) { configure(slider, body); }).catch(function () { disable(slider); });
}

// Show the state's time (null for now) and retired switch.
export function showTimeline(asOf, includeRetired) {
  $("retired").checked = includeRetired;
  showLabel(asOf);
}

function configure(slider, body) {
  var from = Date.parse(body.from), to = Date.parse(body.to);
  if (isNaN(from) || isNaN(to) || to <= from) { disable(slider); return; }
  range = { from: from, to: to };
  slider.disabled = false;
  var asOf = store.getState().asOf, at = asOf ? Date.parse(asOf) : to;
  slider.value = String(Math.round(STEPS * Math.max(0, Math.min(1, (at - from) / (to - from)))));
  showLabel(asOf);
}

function disable(slider) {
  slider.disabled = true;
  $("as-of-label").textContent = "now";
}

// The ISO time the slider points at; null at its right end (now).
function pickedTime(slider) {
  var step = parseInt(slider.value, 10);
  if (!range || step >= STEPS) return null;
  return new Date(range.from + (range.to - range.from) * step / STEPS).toISOString();
}

function showLabel(iso) {
  $("as-of-label").textContent = iso ? "as of " + fmtTime(iso) : "now";
  $("as-of").setAttribute("aria-valuetext", iso ? "as of " + iso : "now");
  document.body.classList.toggle("time-travel", !!iso);
}
