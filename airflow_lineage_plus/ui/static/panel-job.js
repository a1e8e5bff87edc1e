/* The job's sections of the details panel: latest run, SQL, source, inputs and outputs, recent runs,
 * with links to the task instances in Airflow. Text only (see dom.js). */
import { append, el, fmtDuration, fmtTime, shorten } from "./dom.js";
import { safeExternalUrl, taskInstanceHref } from "./links.js";
import { badge, datasetItem, kvList, pre, section } from "./widgets.js";

// take: see panel.js. The job's details as api/node sends them: `latestRun` (a run summary), `runs` (the
// recent runs, newest first, each with its `skipReason`, `executionMode` and task instance's `airflow`
// ids), `airflow` (the ids of the latest run's task), `sql` (text), `sourceCodeLocation` (the facet).
export function renderJob(panel, take) {
  var runs = take("runs");
  var latest = take("latestRun");
  var airflow = take("airflow");
  if (take("declared") && !latest) {
    append(section(panel, "Declared lineage"), el("p", { text: "Declared in DAG code: this task has not run " +
      "yet. Its inputs and outputs (dotted edges) are what it declares; its first run's lineage replaces them." }));
  }
  if (latest) {
    renderLatestRun(panel, latest, runs, airflow);
  } else if (airflow.dag_id && airflow.task_id) {
    var taskHref = taskInstanceHref(airflow.dag_id, null, airflow.task_id);
    append(section(panel, "Airflow"), el("a", { href: taskHref, target: "_top", text: "Open the task in Airflow" }));
  }
  var sql = take("sql");
  if (sql) append(section(panel, "SQL"), pre(sql));
  var code = take("sourceCodeLocation");
  if (code) renderSource(panel, code);
  var inputs = take("inputs"), outputs = take("outputs");
  if (inputs.length) append(section(panel, "Inputs"), el("ul", null, inputs.map(datasetItem)));
  if (outputs.length) append(section(panel, "Outputs"), el("ul", null, outputs.map(datasetItem)));
  if (runs.length) append(section(panel, "Recent runs"), runList(runs, airflow));
}

// The latest run; its skip reason and execution mode are those of its entry in the recent runs.
function renderLatestRun(panel, latest, runs, airflow) {
  var s = section(panel, "Latest run");
  var recent = runs.filter(function (r) { return r.runId === latest.runId; })[0] || {};
  append(s, kvList([
    ["State", badge(latest.state)],
    ["Started", fmtTime(latest.startedAt)],
    ["Ended", fmtTime(latest.endedAt)],
    ["Duration", fmtDuration(latest.startedAt, latest.endedAt)],
    ["Skip reason", recent.skipReason],
    ["Execution", recent.executionMode],
  ]));
  if (latest.errorMessage) append(s, pre(latest.errorMessage));
  var ids = recent.airflow || airflow;  // a run's own task instance, else the job's task (no try, no map index)
  var href = taskInstanceHref(ids.dag_id || airflow.dag_id, ids.run_id, ids.task_id || airflow.task_id, ids.map_index);
  if (href) append(s, el("p", null, el("a", { href: href, target: "_top", text: "Open the task instance in Airflow" })));
}

// The source code location facet: its repository, path, version and (http(s) only) link.
function renderSource(panel, code) {
  var url = safeExternalUrl(code.url);
  append(section(panel, "Source"), kvList([["Repository", code.repoUrl], ["Path", code.path], ["Version", code.version],
    ["Link", url ? el("a", { href: url, target: "_blank", rel: "noopener noreferrer", text: url }) : code.url]]));
}

function runList(runs, airflow) {
  var list = el("div", { "class": "runs" });
  runs.forEach(function (r) {
    var ids = r.airflow || {}, reason = r.skipReason;
    var rh = ids.run_id ? taskInstanceHref(ids.dag_id || airflow.dag_id, ids.run_id, ids.task_id || airflow.task_id, ids.map_index) : null;
    append(list, el("div", { "class": "run" },
      el("div", { "class": "run-head" },
        badge(r.state),
        el("span", { text: fmtTime(r.startedAt) }),
        el("span", { "class": "note", text: fmtDuration(r.startedAt, r.endedAt) })),
      reason ? el("div", { "class": "note", text: "Skipped: " + reason }) : null,
      r.errorMessage ? el("div", { "class": "error-text", text: shorten(r.errorMessage, 300) }) : null,
      rh ? el("a", { href: rh, target: "_top", text: "Task instance in Airflow" + (ids.try_number ? " (try " + ids.try_number + ")" : "") }) : null));
  });
  return list;
}
