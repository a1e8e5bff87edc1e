/* The client of the Lineage JSON API (api/<path>?<query>, relative to the page). */
import { setStatus } from "./dom.js";

// A 503 "Still loading" means the server is opening a large event log: wait and ask again, for a while.
// Any other 503 (a slow or failing source, a busy view) is asked again twice, after its Retry-After.
export function api(path, query, attempt) {
  attempt = attempt || 0;
  return apiOnce(path, query).catch(function (error) {
    var loading = /^Still loading/.test(error.message);
    if (error.status === 503 && attempt < (loading ? 200 : 2)) {
      setStatus(loading ? error.message : error.message + " Asking again\u2026", false);
      return new Promise(function (resolve) { setTimeout(resolve, error.retryAfter * 1000); }).then(function () {
        return api(path, query, attempt + 1);
      });
    }
    throw error;
  });
}

// One request: the JSON body, or an Error with the server's message (or ours for 401/403) and .status.
function apiOnce(path, query) {
  return fetch("api/" + path + "?" + queryString(query), {
    credentials: "same-origin",
    headers: { Accept: "application/json" },
  }).then(function (response) {
    return response.json().catch(function () { return {}; }).then(function (body) {
      if (response.ok) return body;
      throw httpError(response, body);
    });
  });
}

// The query string of the non-empty parameters.
function queryString(query) {
  var qs = new URLSearchParams();
  Object.keys(query || {}).forEach(function (k) {
    if (query[k] !== null && query[k] !== undefined && query[k] !== "") qs.set(k, query[k]);
  });
  return qs.toString();
}

function httpError(response, body) {
  var message = (body && typeof body.detail === "string") ? body.detail : "HTTP " + response.status;
  if (response.status === 401) message = "Your Airflow session has expired or is missing: log in to Airflow again.";
  if (response.status === 403) message = "Your Airflow user may not read DAGs and assets, so lineage is not shown.";
  var error = new Error(message);
  error.status = response.status;
  var retryAfter = parseInt(response.headers.get("Retry-After") || "", 10);
  error.retryAfter = retryAfter >= 1 && retryAfter <= 60 ? retryAfter : 3;
  return error;
}
