// node --test: a task instance's Lineage tab (dag_id, task_id, run_id in the URL, as Airflow fills them):
// the task-instance answer centres the graph on the task's job and keeps the tab's URL (see page.mjs;
// task-instance-late.test.mjs: an answer arriving late).
import assert from "node:assert/strict";
import { test } from "node:test";

import { datasetNode, graphOf, jobNode, openPage, settle, taskInstance } from "./page.mjs";

const TAB = "?dag_id=orders&task_id=load&run_id=manual__2024-01-01T00:00:00+00:00";
const page = await openPage(TAB);
const { asked, document } = page;

test("the tab asks for the task instance with Airflow's ids, the run id's plus kept", () => {
  assert.deepEqual(page.requests.map((r) => r.path), ["time-range", "task-instance"]);
  assert.deepEqual(asked("task-instance")[0].query,
    { dag_id: "orders", task_id: "load", run_id: "manual__2024-01-01T00:00:00+00:00" });
});

test("its answer centres the graph on the task's job and the URL stays the tab's", async () => {
  asked("task-instance")[0].answer(taskInstance("orders.load"));
  await settle();
  assert.match(document.getElementById("details").textContent, /This run/);
  assert.deepEqual(asked("lineage").map((r) => r.query.node), ["job:ns:orders.load"]);
  asked("lineage")[0].answer(graphOf(jobNode("orders.load", "COMPLETED"), [datasetNode("stg")]));
  await settle();
  assert.equal(document.querySelector("#viewport g.node.selected").getAttribute("data-node-id"), "job:ns:orders.load");
  page.change("#depth", "3");
  assert.equal(page.window.location.search, "?dag_id=orders&task_id=load&run_id=manual__2024-01-01T00%3A00%3A00%2B00%3A00&depth=3");
});
