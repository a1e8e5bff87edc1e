/* The job's sections of the details panel: latest run, SQL, source, inputs and outputs, recent runs,
 * with links to the task instances in Airflow. Text only (see dom.js). */
import { append, el, fmtDuration, fmtTime, shorten } from "./dom.js";
import { safeExternalUrl, taskInstanceHref } from "./links.js";
import { badge, datasetItem, first, kvList, pre, section } from "./widgets.js";

// take: see panel.js.
export function renderJob(panel, d, take) {
  var runs = take("recentRuns", "runs");
  var latest = take("latestRun");
  var airflow = take("airflow") || {};
  var dagId = first(d, ["dagId", "dag_id"]) || airflow.dag_id || airflow.dagId;
  var taskId = first(d, ["taskId", "task_id"]) || airflow.task_id || airflow.taskId;
  take("dagId", "dag_id", "taskId", "task_id");
  if (take("declared") && !latest) {
    append(section(panel, "Declared lineage"), el("p", { text: "Declared in DAG code: this task has not run " +
      "yet. Its inputs and outputs (dotted edges) are what it declares; its first run's lineage replaces them." }));
  }
  if (latest) {
    renderLatestRun(panel, latest, runs, airflow, dagId, taskId);
  } else if (dagId && taskId) {
    var taskHref = taskInstanceHref(dagId, null, taskId);
    append(section(panel, "Airflow"), el("a", { href: taskHref, target: "_top", text: "Open the task in Airflow" }));
  }
  var sql = take("sql", "query");
  if (sql) append(section(panel, "SQL"), pre(typeof sql === "string" ? sql : sql.query || sql));
  var code = take("sourceCodeLocation", "sourceCode");
  if (code) renderSource(panel, code);
  var inputs = take("inputs"), outputs = take("outputs");
  if (inputs && inputs.length) append(section(panel, "Inputs"), el("ul", null, inputs.map(datasetItem)));
  if (outputs && outputs.length) append(section(panel, "Outputs"), el("ul", null, outputs.map(datasetItem)));
  if (runs && runs.length) append(section(panel, "Recent runs"), runList(runs, dagId, taskId));
}

function renderLatestRun(panel, latest, runs, airflow, dagId, taskId) {
  var s = section(panel, "Latest run");
  append(s, kvList([
    ["State", badge(latest.state)],
    ["Started", fmtTime(latest.startedAt)],
    ["Ended", fmtTime(latest.endedAt)],
    ["Duration", fmtDuration(latest.startedAt, latest.endedAt)],
    ["Skip reason", latest.skipReason || latest.skip_reason],
    ["Execution", latest.executionMode || latest.execution_mode],
  ]));
  if (latest.errorMessage) append(s, pre(latest.errorMessage));
  var latestIds = latestAirflowIds(runs, latest, airflow);
  var href = taskInstanceHref(latestIds.dag_id || dagId, latestIds.run_id, latestIds.task_id || taskId, latestIds.map_index);
  if (href) append(s, el("p", null, el("a", { href: href, target: "_top", text: "Open the task instance in Airflow" })));
}

// Airflow ids of the latest run: from its entry in the recent runs, else the job's own "airflow" ids.
function latestAirflowIds(runs, latest, airflow) {
  var match = (runs || []).filter(function (r) { return r.runId && r.runId === latest.runId && r.airflow; })[0];
  if (match) return match.airflow;
  return { dag_id: airflow.dag_id, task_id: airflow.task_id, run_id: airflow.run_id, map_index: airflow.map_index };
}

// The source code: as text, or its repository, path, version and (http(s) only) link.
function renderSource(panel, code) {
  var cs = section(panel, "Source");
  if (typeof code === "string") append(cs, pre(code));
  else {
    var url = safeExternalUrl(code.url);
    append(cs, kvList([["Repository", code.repoUrl], ["Path", code.path], ["Version", code.version],
      ["Link", url ? el("a", { href: url, target: "_blank", rel: "noopener noreferrer", text: url }) : code.url]]));
  }
}

function runList(runs, dagId, taskId) {
  var list = el("div", { "class": "runs" });
  runs.forEach(function (r) {
    var ids = r.airflow || {};
    var rh = ids.run_id ? taskInstanceHref(ids.dag_id || dagId, ids.run_id, ids.task_id || taskId, ids.map_index) : null;
    var reason = r.skipReason || r.skip_reason;
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
