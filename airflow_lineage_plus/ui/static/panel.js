/* The details panel of a node (api/node): a header, the job's or the dataset's sections, then owners,
 * tags, documentation and, under "More", every field not shown above. Text only (see dom.js). */
import { api } from "./api.js";
import { $, append, clear, el } from "./dom.js";
import { renderImpact } from "./impact.js";
import { renderDataset } from "./panel-dataset.js";
import { renderWhatChanged } from "./what-changed.js";
import { renderJob } from "./panel-job.js";
import { renderSchemaChanges } from "./schema.js";
import { latest } from "./sequence.js";
import { when } from "./state.js";
import { first, nodeLink, pre, section } from "./widgets.js";

var detailsRequests = latest();

// Load and show the node's details; an answer for a node no longer asked for is dropped.
export function showDetails(nodeId) {
  var panel = $("details"), isCurrent = detailsRequests();
  clear(panel);
  append(panel, el("p", { "class": "note", text: "Loading details\u2026" }));
  api("node", { node: nodeId, asOf: when().asOf }).then(function (details) {
    if (!isCurrent()) return;
    clear(panel);
    renderDetails(panel, details, nodeId);
  }).catch(function (error) {
    if (!isCurrent()) return;
    clear(panel);
    append(panel, el("p", { "class": "error-text", text: error.message }));
  });
}

// take(key, ...) returns the first present value of the keys and marks them all as shown.
function renderDetails(panel, d, nodeId) {
  var shown = {};
  function take() {
    var keys = Array.prototype.slice.call(arguments);
    keys.forEach(function (k) { shown[k] = true; });
    return first(d, keys);
  }
  take("id", "type", "name", "namespace", "depth");
  var type = d.type || (String(nodeId).indexOf("job:") === 0 ? "JOB" : "DATASET");
  append(panel, el("span", { "class": "kind kind-" + (type === "JOB" ? "JOB" : "DATASET"), text: type === "JOB" ? "Job" : "Dataset" }));
  append(panel, el("h2", { text: d.name || nodeId }));
  append(panel, el("div", { "class": "namespace", text: d.namespace || "" }));
  var actions = el("p", null, nodeLink(nodeId, "Centre the graph here"));
  append(panel, actions);
  if (d.exact === false) append(panel, el("p", { "class": "note", text: "As of that time the source can only approximate these details." }));
  take("exact");

  if (type === "JOB") renderJob(panel, d, take);
  else {
    renderWhatChanged(panel, nodeId);
    renderImpact(panel, nodeId);
    renderDataset(panel, d, take);
    renderSchemaChanges(panel, nodeId);
  }

  renderAbout(panel, take);
  renderRest(panel, d, shown);
}

// Owners, tags and documentation.
function renderAbout(panel, take) {
  var owners = take("owners");
  if (owners && owners.length) append(section(panel, "Owners"), el("ul", null, names(owners).map(function (n) { return el("li", { text: n }); })));
  var tags = take("tags");
  if (tags && (tags.length || Object.keys(tags).length)) {
    append(section(panel, "Tags"), el("ul", null, (Array.isArray(tags) ? tags : Object.keys(tags).map(function (k) { return { key: k, value: tags[k] }; }))
      .map(function (t) { return el("li", { text: typeof t === "string" ? t : (t.key || t.name) + (t.value !== undefined ? " = " + t.value : "") }); })));
  }
  var docs = take("documentation", "description", "docs");
  if (docs) append(section(panel, "Documentation"), pre(typeof docs === "string" ? docs : docs.description || docs));
}

// Every non-empty field not shown by a section above, as JSON under "More".
function renderRest(panel, d, shown) {
  var rest = Object.keys(d).filter(function (k) {
    var v = d[k];
    return !shown[k] && v !== null && v !== undefined && !(Array.isArray(v) && !v.length) &&
      !(typeof v === "object" && !Array.isArray(v) && !Object.keys(v).length);
  });
  if (rest.length) {
    var extra = {};
    rest.forEach(function (k) { extra[k] = d[k]; });
    append(section(panel, "More"), pre(extra));
  }
}

function names(list) {
  return (list || []).map(function (o) { return typeof o === "string" ? o : (o && (o.name || o.id)) || JSON.stringify(o); });
}
