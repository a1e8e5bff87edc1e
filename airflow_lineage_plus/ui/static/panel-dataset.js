/* The dataset's sections of the details panel: schema and its history, quality, column lineage, and the
 * jobs that write and read it. Text only (see dom.js). */
import { append, el } from "./dom.js";
import { changeList } from "./schema.js";
import { traceColumn } from "./state.js";
import { store } from "./store.js";
import { labelFor, nodeLink, section, table } from "./widgets.js";

// take: see panel.js. The dataset's details as api/node sends them: `fields`, `schemaVersions` (newest
// first), `lastSchemaChange`, `quality` (facets by key), `qualityRunId`, `columnLineage` (column -> the
// inputs it comes from), `producers` and `consumers` (node ids), `restrictedProducers`/`restrictedConsumers`.
export function renderDataset(panel, datasetId, take) {
  renderSchema(panel, datasetId, take("fields"), take("schemaVersions"), take("lastSchemaChange"));
  var quality = take("quality");
  var qualityRun = take("qualityRunId");
  if (Object.keys(quality).length) {
    var q = section(panel, "Quality");
    append(q, renderQuality(quality));
    if (qualityRun) append(q, el("p", { "class": "note", text: "From the run " + qualityRun + " that last wrote it." }));
  }
  var columns = take("columnLineage");
  if (Object.keys(columns).length) append(section(panel, "Column lineage"), renderColumns(columns));
  renderJobs(panel, take("producers"), take("consumers"));
  var hidden = [take("restrictedProducers") ? "written" : null, take("restrictedConsumers") ? "read" : null]
    .filter(function (x) { return x; });
  if (hidden.length) {
    append(section(panel, "Restricted"), el("p", { "class": "note",
      text: "It is also " + hidden.join(" and ") + " by jobs of DAGs you may not read; they are not shown." }));
  }
}

// The schema; each column's name traces it (column mode).
function renderSchema(panel, datasetId, fields, versions, change) {
  if (fields.length) {
    var s = section(panel, "Schema (" + fields.length + " columns)");
    append(s, el("p", { "class": "note", text: "Click a column to trace it up and down the lineage." }));
    append(s, table(["Column", "Type", "Description"], fields.map(function (f) {
      return [traceButton(datasetId, f.name), f.type || "", f.description || ""];
    })));
  }
  if (versions.length) {
    var c = section(panel, "Schema history");
    var seen = versions.length === 1 ? "One schema version seen." : versions.length + " schema versions seen.";
    if (change.length) {
      append(c, el("p", { "class": "note", text: seen + " Last change:" }), changeList(change));
    } else {
      append(c, el("p", { "class": "note", text: seen + " No change recorded." }));
    }
  }
}

function traceButton(datasetId, column) {
  return el("button", { type: "button", "class": "linkish trace-column", "data-column": column, text: column,
    title: "Trace this column", onclick: function () { store.dispatch(traceColumn(datasetId, column)); } });
}

// The jobs that write the dataset and those that read it.
function renderJobs(panel, producers, consumers) {
  [["Written by", producers], ["Read by", consumers]].forEach(function (jobs) {
    if (jobs[1].length) {
      append(section(panel, jobs[0]), el("ul", null, jobs[1].map(function (id) { return el("li", null, nodeLink(id, labelFor(id))); })));
    }
  });
}

// Every figure of the quality facets (keys starting with "_" left out) and every assertion, up to 200 rows.
function renderQuality(quality) {
  var rows = [];
  function walk(prefix, value) {
    if (value === null || value === undefined) return;
    if (typeof value === "object" && !Array.isArray(value)) {
      Object.keys(value).forEach(function (k) {
        if (k.charAt(0) !== "_") walk(prefix ? prefix + "." + k : k, value[k]);
      });
    } else if (Array.isArray(value)) {
      value.forEach(function (v, i) {
        if (v && typeof v === "object" && v.assertion !== undefined) {
          rows.push([(v.column ? v.column + ": " : "") + v.assertion, v.success === false ? "failed" : "passed"]);
        } else walk(prefix + "[" + i + "]", v);
      });
    } else rows.push([prefix, String(value)]);
  }
  walk("", quality);
  return table(["Figure", "Value"], rows.slice(0, 200));
}

// Column lineage: each column and the columns it comes from, with their transformations.
function renderColumns(columns) {
  return table(["Column", "Comes from"], Object.keys(columns).map(function (column) {
    return [column, columns[column].map(function (input) {
      var how = input.transformations.map(function (t) { return t.subtype || t.type; }).filter(Boolean);
      return input.name + "." + input.column + (how.length ? " (" + how.join(", ") + ")" : "");
    }).join(", ")];
  }));
}
