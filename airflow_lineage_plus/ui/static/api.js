/* The client of the Lineage JSON API (api/<path>?<query>, relative to the page). */
import { setStatus } from "./dom.js";

// A 503 "Still loading" means the server is opening a large event log: wait and ask again.
export function api(path, query, attempt) {
  attempt = attempt || 0;
  return apiOnce(path, query).catch(function (error) {
    if (error.status === 503 && /^Still loading/.test(error.message) && attempt < 200) {
      setStatus(error.message, false);
      return new Promise(function (resolve) { setTimeout(resolve, 3000); }).then(function () {
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
  return error;
}
