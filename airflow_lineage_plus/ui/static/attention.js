/* The first page of the Lineage view (api/attention): what needs attention now. Jobs whose latest run
 * failed, stale datasets and the largest changes of the last day, each a click away from its graph.
 * Text only (see dom.js). */
import { api } from "./api.js";
import { append, clear, el, setStatus } from "./dom.js";
import { panelRequests } from "./sequence.js";
import { badge, labelFor, nodeLink, section } from "./widgets.js";
import { changeText } from "./what-changed.js";

// Load and show it in the panel; dropped when something else was asked of the panel since (a node opened
// before the answer came).
export function renderAttention(panel) {
  setStatus("Loading what needs attention\u2026");
  var isCurrent = panelRequests();
  api("attention", {}).then(function (answer) {
    if (!isCurrent()) return;
    setStatus("What needs attention is on the right; search a dataset or a job to see its lineage.");
    clear(panel);
    showAttention(panel, answer);
  }).catch(function (error) {
    if (!isCurrent()) return;
    setStatus("Search a dataset or a job to see where its data comes from and where it goes.");
    clear(panel);
    append(panel, el("p", { "class": "error-text", text: error.message }));
  });
}

function showAttention(panel, answer) {
  panel.classList.add("attention");
  append(panel, el("h2", { text: "Needs attention" }));
  var failed = answer.failedJobs, stale = answer.stale, changes = answer.changes;
  var jobs = section(panel, "Failed jobs (" + failed.length + ")");
  append(jobs, failed.length ? el("ul", { "class": "attention-failed" }, failed.map(function (job) {
    return el("li", null, nodeLink(job.id, job.name), " ", badge(job.latestRun.state));
  })) : el("p", { "class": "note", text: "No job's latest run failed." }));
  var late = section(panel, "Stale datasets (" + stale.length + ")");
  append(late, stale.length ? el("ul", { "class": "attention-stale" }, stale.map(function (b) {
    return el("li", null, nodeLink(b.dataset.id, b.dataset.name), el("span", { "class": "note", text: " " + b.cause }));
  })) : el("p", { "class": "note", text: "Every dataset with a freshness target is within it." }));
  var recent = section(panel, "Largest changes since " + answer.since);
  append(recent, changes.length ? el("ul", { "class": "attention-changes" }, changes.map(function (c) {
    return el("li", { "data-kind": c.kind }, nodeLink(c.node, labelFor(c.node)), " " + changeText(c));
  })) : el("p", { "class": "note", text: "No dataset written in the last day changed beyond its usual spread." }));
}
