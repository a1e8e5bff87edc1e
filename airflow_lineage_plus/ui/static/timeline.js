/* The time slider (see the graph as of an earlier time) and the retired-edges switch.
 *
 * The slider spans the first to the last event time the source knows (api/time-range); its right end is
 * "now" (no asOf). Moving it only updates the label; letting go reloads the view as of that time.
 */
import { api } from "./api.js";
import { $, fmtTime } from "./dom.js";
import { state, updateUrl } from "./state.js";

const STEPS = 1000;
var range = null;

// onChange() reloads what the view shows.
export function setupTimeline(onChange) {
  var slider = $("as-of"), retired = $("retired");
  retired.checked = state.includeRetired;
  retired.addEventListener("change", function () {
    state.includeRetired = retired.checked;
    updateUrl();
    onChange();
  });
  slider.addEventListener("input", function () { showLabel(pickedTime(slider)); });
  slider.addEventListener("change", function () {
    state.asOf = pickedTime(slider);
    updateUrl();
    showLabel(state.asOf);
    onChange();
  });
  $("as-of-now").addEventListener("click", function () {
    slider.value = String(STEPS);
    slider.dispatchEvent(new Event("change"));
  });
  api("time-range", {}).then(function (body) { configure(slider, body); }).catch(function () { disable(slider); });
}

function configure(slider, body) {
  var from = Date.parse(body.from), to = Date.parse(body.to);
  if (isNaN(from) || isNaN(to) || to <= from) { disable(slider); return; }
  range = { from: from, to: to };
  slider.disabled = false;
  var at = state.asOf ? Date.parse(state.asOf) : to;
  slider.value = String(Math.round(STEPS * Math.max(0, Math.min(1, (at - from) / (to - from)))));
  showLabel(state.asOf);
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
