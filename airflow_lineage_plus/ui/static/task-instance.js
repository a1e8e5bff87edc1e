/* The details panel for an Airflow task instance (the "Lineage" tab of a task): that try's state, its
 * inputs and outputs and its facets. Text only (see dom.js). */
import { api } from "./api.js";
import { append, clear, el, fmtDuration, fmtTime, setStatus } from "./dom.js";
import { panelRequests } from "./sequence.js";
import { taskJobFound } from "./state.js";
import { store } from "./store.js";
import { badge, datasetItem, kvList, nodeLink, pre, section, table } from "./widgets.js";

// Load and show the task instance (the task's latest run without a run id), then centre the graph on its
// job; dropped when something else was asked of the panel since.
export function loadTaskInstance(panel, dagId, taskId, runId) {
  setStatus("Loading the task's lineage\u2026");
  var isCurrent = panelRequests();
  api("task-instance", { dag_id: dagId, task_id: taskId, run_id: runId }).then(function (body) {
    if (!isCurrent()) return;
    clear(panel);
    renderTaskInstance(panel, body, runId);
    store.dispatch(taskJobFound(body.job.id));
  }).catch(function (error) {
    if (isCurrent()) setStatus(error.message, true);
  });
}

// body: the api/task-instance answer ({job, tries, run}).
function renderTaskInstance(panel, body, runId) {
  var job = body.job, run = body.run, tries = body.tries;
  append(panel, el("span", { "class": "kind kind-JOB", text: "Task run" }));
  append(panel, el("h2", { text: job.name }));
  append(panel, el("div", { "class": "namespace", text: job.namespace }));
  append(panel, el("p", null, nodeLink(job.id, "Show the job's details")));
  if (!run) {
    append(panel, el("p", { "class": "note", text: runId
      ? "No lineage event was recorded for this task in this DAG run."
      : "No run of this task was recorded." }));
    return;
  }
  renderThisRun(panel, run);
  if (tries.length > 1) {
    append(section(panel, "Tries of this DAG run"), table(["Try", "State", "Started"], tries.map(function (t) {
      return [String(t.tryNumber || ""), badge(t.state), fmtTime(t.startedAt)];
    })));
  }
  var inputs = run.inputs, outputs = run.outputs;
  append(section(panel, "Inputs (" + inputs.length + ")"), inputs.length ? el("ul", null, inputs.map(datasetItem)) : el("p", { "class": "note", text: "none" }));
  append(section(panel, "Outputs (" + outputs.length + ")"), outputs.length ? el("ul", null, outputs.map(datasetItem)) : el("p", { "class": "note", text: "none" }));
  renderFacets(panel, run.facets);
}

function renderThisRun(panel, summary) {
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
}

// Each run facet, folded, as JSON.
function renderFacets(panel, facets) {
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
