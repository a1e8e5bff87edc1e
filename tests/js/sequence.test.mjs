// node --test: sequence.js, the request-sequence guard. The loaders that use it are tested on the real
// page in loaders.test.mjs, first-page.test.mjs and task-instance-late.test.mjs.
import assert from "node:assert/strict";
import { test } from "node:test";

import { latest } from "../../airflow_lineage_plus/ui/static/sequence.js";

test("a request is current until the next one of its kind begins", () => {
  const begin = latest();
  const first = begin();
  assert.equal(first(), true);
  const second = begin();
  assert.deepEqual([first(), second()], [false, true]);
});

test("each kind of request has its own sequence", () => {
  const graphs = latest(), details = latest();
  const graph = graphs();
  details();
  details();
  assert.equal(graph(), true);
});
