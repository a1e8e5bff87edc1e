/* The dataset's sections of the details panel: schema and its history, quality, column lineage, and the
 * jobs that write and read it. Text only (see dom.js). */
import { append, el } from "./dom.js";
import { badge, labelFor, nodeLink, section, table } from "./widgets.js";

// take: see panel.js.
export function renderDataset(panel, d, take) {
  renderSchema(panel, d.id, take("fields"), take("schemaVersions"), take("lastSchemaChange"));
  var quality = take("quality");
  var qualityRun = take("qualityRunId");
  if (quality && Object.keys(quality).length) {
    var q = section(panel, "Quality");
    append(q, renderQuality(quality));
    if (qualityRun) append(q, el("p", { "class": "note", text: "From the run " + qualityRun + " that last wrote it." }));
  }
  var columns = take("columnLineage", "columns");
  if (columns && (Array.isArray(columns) ? columns.length : Object.keys(columns).length)) {
    append(section(panel, "Column lineage"), renderColumns(columns));
  }
  renderJobs(panel, take("producers", "producingJobs", "writers"), take("consumers", "readers", "consumingJobs"));
  var hidden = [take("restrictedProducers") ? "written" : null, take("restrictedConsumers") ? "read" : null]
    .filter(function (x) { return x; });
  if (hidden.length) {
    append(section(panel, "Restricted"), el("p", { "class": "note",
      text: "It is also " + hidden.join(" and ") + " by jobs of DAGs you may not read; they are not shown." }));
  }
}

// The schema; each column's name traces it (column mode).
function renderSchema(panel, datasetId, fields, versions, change) {
  if (fields && fields.length) {
    var s = section(panel, "Schema (" + fields.length + " columns)");
    append(s, el("p", { "class": "note", text: "Click a column to trace it up and down the lineage." }));
    append(s, table(["Column", "Type", "Description"], fields.map(function (f) {
      return [traceButton(datasetId, f.name), f.type || "", f.description || ""];
    })));
  }
  if (versions && versions.length) {
    var c = section(panel, "Schema history");
    var seen = versions.length === 1 ? "One schema version seen." : versions.length + " schema versions seen.";
    if (Array.isArray(change) && change.length) {
      append(c, el("p", { "class": "note", text: seen + " Last change:" }), renderChange(change));
    } else {
      append(c, el("p", { "class": "note", text: seen + " No change recorded." }));
    }
  }
}

function traceButton(datasetId, column) {
  return el("button", { type: "button", "class": "linkish trace-column", "data-column": column, text: column,
    title: "Trace this column", onclick: function () {
      document.dispatchEvent(new CustomEvent("lineage:trace-column", { detail: { dataset: datasetId, column: column } }));
    } });
}

// The jobs that write the dataset (with their latest run's state) and those that read it.
function renderJobs(panel, producers, consumers) {
  if (producers && producers.length) {
    append(section(panel, "Written by"), el("ul", null, producers.map(function (p) {
      var id = typeof p === "string" ? p : p.id;
      var run = typeof p === "object" ? p.latestRun : null;
      return el("li", null, nodeLink(id, typeof p === "string" ? labelFor(p) : p.name), run ? [" ", badge(run.state)] : null);
    })));
  }
  if (consumers && consumers.length) {
    append(section(panel, "Read by"), el("ul", null, consumers.map(function (p) {
      return el("li", null, nodeLink(typeof p === "string" ? p : p.id, typeof p === "string" ? labelFor(p) : p.name));
    })));
  }
}

// The changes between the two newest schema versions: [{kind, column, from, to}].
function renderChange(changes) {
  var list = el("ul");
  (Array.isArray(changes) ? changes : []).forEach(function (c) {
    var kind = String(c.kind || "").toLowerCase();
    var text = kind.indexOf("add") >= 0 ? "added " + c.column + (c.to ? " " + c.to : "")
      : kind.indexOf("remov") >= 0 ? "removed " + c.column + (c.from ? " " + c.from : "")
      : c.column + ": " + (c.from || "?") + " \u2192 " + (c.to || "?");
    append(list, el("li", { text: text }));
  });
  return list;
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

// Column lineage, as a list of {column, inputFields} or as {column: inputs}.
function renderColumns(columns) {
  var rows = [];
  if (Array.isArray(columns)) {
    columns.forEach(function (c) {
      var from = (c.inputFields || c.inputs || []).map(function (i) { return (i.name || i.dataset || "") + "." + (i.field || i.column || ""); });
      rows.push([c.column || c.name || c.field, from.join(", ")]);
    });
  } else {
    Object.keys(columns).forEach(function (col) {
      var value = columns[col];
      var inputs = Array.isArray(value) ? value : (value.inputFields || value.inputs || []);
      rows.push([col, inputs.map(function (i) {
        if (typeof i === "string") return i;
        var how = (i.transformations || []).map(function (t) { return t.subtype || t.type; }).filter(Boolean);
        return (i.name || "") + "." + (i.column || i.field || "") + (how.length ? " (" + how.join(", ") + ")" : "");
      }).join(", ")]);
    });
  }
  return table(["Column", "Comes from"], rows);
}
