/* The impact panel of a dataset (api/impact): how bad a change or an outage of it would be, the
 * downstream jobs (with their latest run) and the owners to tell. Text only (see dom.js). */
import { api } from "./api.js";
import { append, clear, el } from "./dom.js";
import { latest } from "./sequence.js";
import { badge, nodeLink, section } from "./widgets.js";

const impactRequests = latest();
const LEVELS = {
  HIGH: "more than 5 downstream jobs",
  MEDIUM: "2 to 5 downstream jobs",
  LOW: "at most one downstream job",
};

// asOf: the time looked at (null for now).
export function renderImpact(panel, datasetId, asOf) {
  var body = section(panel, "Impact");
  body.classList.add("impact");
  var button = el("button", { type: "button", "class": "button", "data-action": "impact", text: "Show what depends on it" });
  append(body, button);
  button.addEventListener("click", function () { loadImpact(body, datasetId, asOf); });
}

function loadImpact(body, datasetId, asOf) {
  clear(body);
  append(body, el("p", { "class": "note", text: "Walking downstream\u2026" }));
  var isCurrent = impactRequests();
  api("impact", { node: datasetId, depth: 10, asOf: asOf }).then(function (answer) {
    if (!isCurrent()) return;  // another dataset's impact was asked for since
    clear(body);
    showImpact(body, answer);
  }).catch(function (error) {
    if (!isCurrent()) return;
    clear(body);
    append(body, el("p", { "class": "error-text", text: error.message }));
  });
}

function showImpact(body, answer) {
  var jobs = answer.nodes.filter(function (n) { return n.type === "JOB"; });
  var datasets = answer.nodes.filter(function (n) { return n.type === "DATASET"; });
  var level = answer.level;
  append(body, el("p", { "class": "impact-level" },
    el("span", { "class": "level level-" + level, "data-level": level, text: level }),
    " " + (LEVELS[level] || ""), ": " + jobs.length + " jobs and " + datasets.length + " datasets downstream."));
  if (answer.exact === false) append(body, el("p", { "class": "note", text: "Approximate: the source cannot say exactly." }));
  if (jobs.length) {
    append(body, el("h4", { text: "Downstream jobs" }));
    append(body, el("ul", { "class": "impact-jobs" }, jobs.map(function (job) {
      var run = job.latestRun;
      return el("li", null, nodeLink(job.id, job.name), " ", run ? badge(run.state) : el("span", { "class": "note", text: "no runs" }),
        el("span", { "class": "note", text: " depth " + job.depth }));
    })));
  }
  append(body, el("h4", { text: "Owners to tell" }));
  var owners = answer.owners;
  append(body, owners.length ? el("ul", { "class": "impact-owners" }, owners.map(function (o) { return el("li", { text: o }); }))
    : el("p", { "class": "note", text: "No owner recorded downstream." }));
}
