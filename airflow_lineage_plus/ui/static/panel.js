/* The side panel: what the state's `panel` names (state.js). A node's details (api/node): a header, the
 * job's or the dataset's sections, then owners, tags, documentation and, under "More", every field not
 * shown above; a task instance (task-instance.js); or what needs attention (attention.js). Text only (see
 * dom.js).
 */
import { api } from "./api.js";
import { renderAttention } from "./attention.js";
import { $, append, clear, el } from "./dom.js";
import { renderImpact } from "./impact.js";
import { renderDataset } from "./panel-dataset.js";
import { renderWhatChanged } from "./what-changed.js";
import { renderJob } from "./panel-job.js";
import { renderSchemaChanges } from "./schema.js";
import { panelRequests } from "./sequence.js";
import { loadTaskInstance } from "./task-instance.js";
import { nodeLink, pre, section } from "./widgets.js";

// Load and show what the state's panel names; the placeholder of the page stays for none.
export function showPanel(state) {
  if (state.panel === "details") showDetails(state.selected, state.asOf);
  else if (state.panel === "task-instance") loadTaskInstance($("details"), state.dagId, state.taskId, state.runId);
  else if (state.panel === "attention") renderAttention($("details"));
}

// Load and show the node's details as of `asOf` (null for now); an answer no longer asked for is dropped.
function showDetails(nodeId, asOf) {
  var panel = $("details"), isCurrent = panelRequests();
  clear(panel);
  append(panel, el("p", { "class": "note", text: "Loading details\u2026" }));
  api("node", { node: nodeId, asOf: asOf }).then(function (details) {
    if (!isCurrent()) return;
    clear(panel);
    renderDetails(panel, details, nodeId, asOf);
  }).catch(function (error) {
    if (!isCurrent()) return;
    clear(panel);
    append(panel, el("p", { "class": "error-text", text: error.message }));
  });
}

// take(key) returns the field's value and marks it as shown (renderRest shows the others).
function renderDetails(panel, d, nodeId, asOf) {
  var shown = {};
  function take(key) {
    shown[key] = true;
    return d[key];
  }
  var type = take("type");
  take("id");
  append(panel, el("span", { "class": "kind kind-" + type, text: type === "JOB" ? "Job" : "Dataset" }));
  append(panel, el("h2", { text: take("name") }));
  append(panel, el("div", { "class": "namespace", text: take("namespace") }));
  var actions = el("p", null, nodeLink(nodeId, "Centre the graph here"));
  append(panel, actions);
  if (take("exact") === false) append(panel, el("p", { "class": "note", text: "As of that time the source can only approximate these details." }));

  if (type === "JOB") renderJob(panel, take);
  else {
    renderWhatChanged(panel, nodeId, asOf);
    renderImpact(panel, nodeId, asOf);
    renderDataset(panel, nodeId, take);
    renderSchemaChanges(panel, nodeId, asOf);
  }

  renderAbout(panel, take);
  renderRest(panel, d, shown);
}

// Owners, tags (lists of names) and documentation (text).
function renderAbout(panel, take) {
  [["Owners", take("owners")], ["Tags", take("tags")]].forEach(function (list) {
    if (list[1] && list[1].length) append(section(panel, list[0]), el("ul", null, list[1].map(function (n) { return el("li", { text: n }); })));
  });
  var docs = take("documentation");
  if (docs) append(section(panel, "Documentation"), pre(docs));
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
