// node --test: edges.js, how each kind of edge is drawn and what a triggered edge's tooltip names.
import assert from "node:assert/strict";
import { test } from "node:test";

const { EDGE_CLASSES, triggerTitle } = await import("../../airflow_lineage_plus/ui/static/edges.js");

test("a triggered edge has a class of its own", () => {
  assert.equal(EDGE_CLASSES.triggered, "edge triggered-edge");
  assert.equal(EDGE_CLASSES.current, undefined);
});

test("a triggered edge's tooltip names each upstream DAG run and its state", () => {
  const edge = {
    state: "triggered",
    triggers: [
      { runId: "run-a", state: "FAILED", taskJob: "job:ns:a.extract" },
      { runId: null, state: null, taskJob: "job:ns:b.extract" },
    ],
  };
  assert.equal(
    triggerTitle(edge),
    "Started by the asset event of DAG run run-a (failed)\nStarted by the asset event of a run of job:ns:b.extract",
  );
  assert.equal(triggerTitle({ state: "current" }), "");
});
