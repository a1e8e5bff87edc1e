// node --test: the real page in jsdom draws a cross-DAG edge (state "triggered", docs/graph.md) as an edge
// of its own kind, whose tooltip names the upstream DAG run whose asset event started the run.
import assert from "node:assert/strict";
import { test } from "node:test";

import { datasetDetails, datasetNode, jobNode, openPage, settle } from "./page.mjs";

const REPORT = datasetNode("report");
const page = await openPage("?node=dataset%3Ans%3Areport&depth=2");

test("a triggered edge is drawn apart, and its tooltip names the upstream DAG run and its state", async () => {
  const summarize = { ...jobNode("report_dag.summarize", "COMPLETED"), depth: 1 };
  const orders = { ...jobNode("orders_dag", "FAILED"), depth: 2 };
  const trigger = {
    runId: "orders-dag-run", state: "FAILED", taskJob: "job:ns:orders_dag.extract",
    taskRunId: "extract-run", triggeredRunId: "report-dag-run",
  };
  page.asked("lineage").at(-1).answer({
    target: REPORT,
    nodes: [summarize, orders],
    edges: [
      { origin: summarize.id, destination: REPORT.id, state: "current" },
      { origin: orders.id, destination: summarize.id, state: "triggered", triggers: [trigger] },
    ],
    truncated: {},
    exact: true,
  });
  page.asked("node").at(-1).answer(datasetDetails("report", []));
  await settle();
  const edges = [...page.document.querySelectorAll("#viewport path.edge")];
  const triggered = edges.filter((e) => e.getAttribute("data-state") === "triggered");
  assert.equal(edges.length, 2);
  assert.equal(triggered.length, 1);
  assert.equal(triggered[0].getAttribute("class"), "edge triggered-edge");
  assert.equal(triggered[0].getAttribute("data-origin"), orders.id);
  assert.equal(
    triggered[0].querySelector("title").textContent,
    "Started by the asset event of DAG run orders-dag-run (failed)",
  );
  const current = edges.find((e) => e.getAttribute("data-state") === "current");
  assert.equal(current.getAttribute("class").includes("triggered-edge"), false);
  assert.equal(current.querySelector("title"), null);
});
