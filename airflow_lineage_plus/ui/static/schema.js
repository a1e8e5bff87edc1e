/* The schema-change panel of a dataset (api/schema-diff): its last two schema versions side by side
 * with what changed, and the changes a proposed schema (pasted as JSON) would make. Text only. */
import { api } from "./api.js";
import { append, clear, el } from "./dom.js";
import { latest } from "./sequence.js";
import { section, table } from "./widgets.js";

const MAX_PROPOSED = 8000;  // characters: the proposal travels in the URL
const versionRequests = latest(), proposalRequests = latest();

// asOf: the time looked at (null for now).
export function renderSchemaChanges(panel, datasetId, asOf) {
  var body = section(panel, "Schema changes");
  body.classList.add("schema-changes");
  var versions = el("div", { "class": "schema-versions" }, el("p", { "class": "note", text: "Loading\u2026" }));
  append(body, versions);
  var isCurrent = versionRequests();
  api("schema-diff", { node: datasetId, asOf: asOf }).then(function (answer) {
    if (!isCurrent()) return;  // another dataset's schema was asked for since
    clear(versions);
    showVersions(versions, answer);
  }).catch(function (error) {
    if (!isCurrent()) return;
    clear(versions);
    append(versions, el("p", { "class": "error-text", text: error.message }));
  });
  renderProposal(body, datasetId, asOf);
}

function showVersions(box, answer) {
  var versions = answer.versions;
  if (versions.length < 2) {
    append(box, el("p", { "class": "note", text: versions.length ? "One schema version seen: no change yet." : "No schema recorded." }));
    return;
  }
  var before = {}, after = {};
  versions[1].forEach(function (f) { before[f.name] = f.type; });
  versions[0].forEach(function (f) { after[f.name] = f.type; });
  var names = Object.keys(before).concat(Object.keys(after).filter(function (n) { return !(n in before); }));
  append(box, table(["Column", "Previous", "Latest"], names.map(function (name) {
    var status = !(name in after) ? "removed" : !(name in before) ? "added" : before[name] !== after[name] ? "retyped" : "";
    var row = [name, name in before ? before[name] || "" : "\u2014", name in after ? after[name] || "" : "\u2014"];
    return status ? [el("span", { "class": "change change-" + status, text: row[0] + " (" + status + ")" }), row[1], row[2]] : row;
  })));
  append(box, changeList(answer.changes, "No change between them."));
}

function renderProposal(body, datasetId, asOf) {
  var input = el("textarea", { id: "proposed-schema", rows: 4, maxlength: MAX_PROPOSED, spellcheck: "false",
    placeholder: '{"order_id": "BIGINT", "amount": "DECIMAL(12,2)"}', "aria-label": "Proposed schema (JSON)" });
  var result = el("div", { "class": "proposal-result" });
  var button = el("button", { type: "button", "class": "button", text: "Compare with the latest schema" });
  button.addEventListener("click", function () {
    clear(result);
    var isCurrent = proposalRequests();
    api("schema-diff", { node: datasetId, proposed: input.value, asOf: asOf }).then(function (answer) {
      if (isCurrent()) append(result, changeList(answer.changes, "The proposed schema changes nothing."));
    }).catch(function (error) {
      if (isCurrent()) append(result, el("p", { "class": "error-text", text: error.message }));
    });
  });
  append(body, [
    el("h4", { text: "A proposed schema" }),
    el("p", { "class": "note", text: "Paste columns as JSON: [{\"name\", \"type\"}], {\"fields\": [...]} or {\"column\": \"TYPE\"}." }),
    input, button, result,
  ]);
}

// Schema changes [{kind, column, from, to}] (COLUMN_ADDED, COLUMN_REMOVED, TYPE_CHANGED) as a list, or the
// note `none` when there is none.
export function changeList(changes, none) {
  if (!changes.length) return el("p", { "class": "note", text: none });
  return el("ul", { "class": "changes" }, changes.map(function (c) {
    var text = c.kind === "COLUMN_ADDED" ? "added " + c.column + (c.to ? " " + c.to : "")
      : c.kind === "COLUMN_REMOVED" ? "removed " + c.column + (c.from ? " " + c.from : "")
      : c.column + ": " + (c.from || "?") + " \u2192 " + (c.to || "?");
    return el("li", { "class": "change change-" + c.kind, text: text });
  }));
}
