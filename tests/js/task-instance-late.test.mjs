// node --test: a task instance's Lineage tab whose answer arrives after the reader opened another node
// from the search: it is not drawn, and the graph is not moved to the task's job (see page.mjs).
import assert from "node:assert/strict";
import { test } from "node:test";

import { openFromSearch, openPage, settle, taskInstance } from "./page.mjs";

const page = await openPage("?dag_id=orders&task_id=load&run_id=r1");
const { asked, document, drawn } = page;

test("the late task-instance answer leaves the opened node's details and graph", async () => {
  const tab = asked("task-instance")[0];
  await openFromSearch(page, "stg");
  tab.answer(taskInstance("orders.load"));
  await settle();
  assert.equal(document.querySelector("#details h2").textContent, "stg");
  assert.doesNotMatch(document.getElementById("details").textContent, /This run/);
  assert.deepEqual(asked("lineage").map((r) => r.query.node), ["dataset:ns:stg"]);
  assert.deepEqual(drawn(), ["dataset:ns:stg"]);
  assert.equal(page.window.location.search, "?node=dataset%3Ans%3Astg&depth=6");
});
