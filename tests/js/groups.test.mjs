// node --test: groups.js, the runs an Airflow task ran drawn under (or collapsed into) that task.
import assert from "node:assert/strict";
import { test } from "node:test";

import { groupChildren, ownerOf } from "../../airflow_lineage_plus/ui/static/groups.js";

const TASK = { id: "job:airflow:orders.dbt_build", namespace: "airflow", name: "orders.dbt_build", runId: "r1", state: "COMPLETED" };
const DAG_RUN = { id: "job:airflow:orders", name: "orders" };
const model = (name, depth) => ({ id: "job:dbt:" + name, type: "JOB", name, depth, ranBy: [TASK, DAG_RUN].slice(0, 1) });
const MART = { id: "dataset:duckdb:mart", type: "DATASET", name: "mart", depth: 0 };
const GRAPH = {
  target: MART,
  nodes: [model("stg", -2), model("fct", -1), { id: "dataset:duckdb:raw", type: "DATASET", name: "raw", depth: -3 }],
  edges: [
    { origin: "dataset:duckdb:raw", destination: "job:dbt:stg" },
    { origin: "job:dbt:stg", destination: "job:dbt:fct" },
    { origin: "job:dbt:fct", destination: "dataset:duckdb:mart" },
  ],
  truncated: { "job:dbt:stg": 2, "job:dbt:fct": 1 },
  failedUpstream: [{ id: "job:dbt:fct", name: "fct" }],
};

test("the owner of a job is the outermost run that ran it, and datasets have none", () => {
  assert.deepEqual(ownerOf({ type: "JOB", ranBy: [{ id: "a" }, { id: "b" }] }), { id: "b" });
  assert.equal(ownerOf({ type: "DATASET", ranBy: [{ id: "a" }] }), null);
  assert.equal(ownerOf({ type: "JOB" }), null);
});

test("expanded, each job of a task keeps its place and says its task and the group's size", () => {
  const shown = groupChildren(GRAPH, {});
  assert.deepEqual(shown.nodes.map((n) => [n.id, n.owner && n.owner.id, n.groupSize]), [
    ["job:dbt:stg", TASK.id, 2],
    ["job:dbt:fct", TASK.id, 2],
    ["dataset:duckdb:raw", undefined, undefined],
  ]);
  assert.deepEqual(shown.edges, GRAPH.edges);
});

test("collapsed, a task's jobs become one node and their edges, cut counts and failures follow it", () => {
  const shown = groupChildren(GRAPH, { [TASK.id]: true });
  assert.deepEqual(shown.nodes.map((n) => n.id), ["dataset:duckdb:raw", TASK.id]);
  const task = shown.nodes[1];
  assert.deepEqual([task.depth, task.group, task.latestRun], [-1, { size: 2 }, { runId: "r1", state: "COMPLETED" }]);
  // the edge between two collapsed jobs disappears; the others are re-routed to the task, once each
  assert.deepEqual(shown.edges.map((e) => [e.origin, e.destination]), [
    ["dataset:duckdb:raw", TASK.id],
    [TASK.id, "dataset:duckdb:mart"],
  ]);
  assert.deepEqual(shown.truncated, { [TASK.id]: 3 });
  assert.deepEqual(shown.failedUpstream, [{ id: TASK.id, name: "fct" }]);
});

test("the target's own task is never collapsed", () => {
  const graph = { ...GRAPH, target: { ...model("fct", 0) }, nodes: [model("stg", -1)] };
  const shown = groupChildren(graph, { [TASK.id]: true });
  assert.deepEqual(shown.nodes.map((n) => n.id), ["job:dbt:stg"]);
});
