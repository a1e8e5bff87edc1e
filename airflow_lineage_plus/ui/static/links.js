/* Links out of the Lineage view: to Airflow's own pages (built from its base path with encodeURIComponent)
 * and to a job's source code (only http(s) URLs). */

// Base path of Airflow (everything before "lineage-plus/"), to link to Airflow's own pages.
function airflowBase() {
  var path = window.location.pathname;
  var at = path.lastIndexOf("/lineage-plus/");
  return at >= 0 ? path.slice(0, at + 1) : "/";
}

export function taskInstanceHref(dagId, runId, taskId, mapIndex) {
  if (!dagId || !taskId) return null;
  var href = airflowBase() + "dags/" + encodeURIComponent(dagId);
  if (runId) {
    href += "/runs/" + encodeURIComponent(runId) + "/tasks/" + encodeURIComponent(taskId);
    if (mapIndex !== undefined && mapIndex !== null && String(mapIndex) !== "-1") {
      href += "/mapped/" + encodeURIComponent(String(mapIndex));
    }
  } else {
    href += "/tasks/" + encodeURIComponent(taskId);
  }
  return href;
}

export function safeExternalUrl(url) {
  return typeof url === "string" && /^https?:\/\//i.test(url) ? url : null;
}
