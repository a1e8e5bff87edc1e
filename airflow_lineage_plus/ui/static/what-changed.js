/* The "What changed" panel of a dataset (api/what-changed): what changed upstream of it, the dataset
 * included, against each node's recent runs, the likely cause first; and what it cannot tell.
 * Text only (see dom.js). */
import { api } from "./api.js";
import { append, clear, el } from "./dom.js";
import { latest } from "./sequence.js";
import { labelFor, nodeLink, section } from "./widgets.js";

const whatChangedRequests = latest();

// The section of the dataset's panel; asOf: the time looked at (null for now). An answer for a dataset
// no longer shown (another was asked for since) is dropped.
export function renderWhatChanged(panel, datasetId, asOf) {
  var body = section(panel, "What changed");
  body.classList.add("what-changed");
  append(body, el("p", { "class": "note", text: "Comparing each node upstream with its recent runs\u2026" }));
  var isCurrent = whatChangedRequests();
  api("what-changed", { node: datasetId, asOf: asOf }).then(function (answer) {
    if (!isCurrent()) return;
    clear(body);
    showChanges(body, answer);
  }).catch(function (error) {
    if (!isCurrent()) return;
    clear(body);
    append(body, el("p", { "class": "error-text", text: error.message }));
  });
}

// One change in words: "rowCount 1000 -> 700 (-30 %)".
export function changeText(c) {
  var what = c.kind + (c.column ? " of " + c.column : "");
  var size = typeof c.change === "number" ? " (" + (c.change > 0 ? "+" : "") + Math.round(c.change * 100) + " %)"
    : (c.change !== null && c.change !== undefined ? " (" + c.change + ")" : "");
  return what + ": " + fmt(c.from) + " \u2192 " + fmt(c.to) + size;
}

function fmt(value) { return value === null || value === undefined ? "none" : String(value); }

function showChanges(body, answer) {
  var changes = answer.changes || [];
  var runs = (answer.baseline || {}).runs;
  if (!changes.length) {
    append(body, el("p", { "class": "note", text: (answer.cannotTell || []).length
      ? "No change found in what was recorded; some datasets cannot tell (below)."
      : "Nothing changed upstream beyond the usual run-to-run spread of the last " + runs + " runs." }));
  } else {
    var top = changes[0];
    append(body, el("p", { "class": "top-cause" }, "Most likely cause: ", nodeLink(top.node, labelFor(top.node)),
      " " + changeText(top) + (top.depth ? ", " + top.depth + " hop(s) upstream" : "") + "."));
    append(body, el("ol", { "class": "changes" }, changes.map(function (c) {
      return el("li", { "data-kind": c.kind }, nodeLink(c.node, labelFor(c.node)), " " + changeText(c),
        el("span", { "class": "note", text: " depth " + c.depth }));
    })));
    append(body, el("p", { "class": "note", text: "Against each node's last " + runs + " completed runs, as of " + answer.asOf + "." }));
  }
  (answer.cannotTell || []).forEach(function (item) {
    append(body, el("p", { "class": "note cannot-tell" }, "Cannot tell ", nodeLink(item.node, labelFor(item.node)), ": " + item.reason + "."));
  });
}
