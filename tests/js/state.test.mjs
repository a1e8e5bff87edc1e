// node --test: state.js, what the view shows read from the URL and written back to it. It reads
// window.location at import, so each case imports a fresh copy with its own URL.
import assert from "node:assert/strict";
import { test } from "node:test";

let copy = 0;
async function stateAt(search) {
  const written = [];
  globalThis.window = {
    location: { search },
    history: { replaceState: (_state, _title, url) => written.push(url) },
  };
  const module = await import("../../airflow_lineage_plus/ui/static/state.js?copy=" + copy++);
  return { ...module, written };
}

test("depth is clamped to 1..12 and a value that is no number falls back", async () => {
  const { clampDepth } = await stateAt("");
  assert.deepEqual([clampDepth("0", 3), clampDepth("7", 3), clampDepth("99", 3), clampDepth("x", 3)], [1, 7, 12, 3]);
});

test("the URL's node, depth, direction, time and retired switch become the state", async () => {
  const { state, when } = await stateAt("?node=dataset%3Ans%3At&depth=4&direction=upstream&asOf=2024-01-02T00%3A00%3A00Z&retired=1");
  assert.deepEqual([state.node, state.depth, state.direction, state.asOf, state.includeRetired], ["dataset:ns:t", 4, "upstream", "2024-01-02T00:00:00Z", true]);
  assert.deepEqual(when(), { asOf: "2024-01-02T00:00:00Z", includeRetired: "true" });
});

test("Airflow's ids keep their plus (a run id's +00:00) and a bare percent sign", async () => {
  const { state } = await stateAt("?dag_id=orders&task_id=load&run_id=manual__2024-01-01T00:00:00+00:00%");
  assert.deepEqual([state.dagId, state.taskId, state.runId], ["orders", "load", "manual__2024-01-01T00:00:00+00:00%"]);
  assert.equal(state.depth, 6);  // a task's tab: the default depth of a node
  const dag = await stateAt("?dag_id=orders");
  assert.equal(dag.state.depth, 2);  // a DAG's tab: two hops
});

test("the URL written back names what the state shows, spaces as %20", async () => {
  const { state, updateUrl, written } = await stateAt("?dag_id=my%20dag");
  updateUrl();
  state.node = "job:ns:a b";
  state.column = "amount";
  state.direction = "downstream";
  updateUrl();
  assert.deepEqual(written, ["?dag_id=my%20dag&depth=2", "?node=job%3Ans%3Aa%20b&depth=2&direction=downstream&column=amount"]);
});
