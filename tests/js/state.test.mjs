// node --test: state.js, the view's state read from the URL, its actions (the reducer), and what follows
// from a state: the URL that names it, the graph's request and the panel. Pure: no DOM.
import assert from "node:assert/strict";
import { test } from "node:test";

import {
  clampDepth, graphFailed, graphLoaded, initialState, leaveColumns, openNode, panelKey, reduce, selectNode, setAsOf,
  setDepth, setDirection, setRetired, staleLoaded, taskJobFound, toggleGroup, traceColumn, urlOf, viewportQuery,
} from "../../airflow_lineage_plus/ui/static/state.js";

function run(search, ...actions) {
  return actions.reduce(reduce, initialState(search));
}

test("depth is clamped to 1..12 and a value that is no number falls back", () => {
  assert.deepEqual([clampDepth("0", 3), clampDepth("7", 3), clampDepth("99", 3), clampDepth("x", 3)], [1, 7, 12, 3]);
});

test("the URL's node, depth, direction, column, time and retired switch become the state", () => {
  const state = initialState("?node=dataset%3Ans%3At&depth=4&direction=upstream&column=c&asOf=2024-01-02T00%3A00%3A00Z&retired=1");
  assert.deepEqual(
    [state.node, state.depth, state.direction, state.column, state.asOf, state.includeRetired, state.selected, state.panel],
    ["dataset:ns:t", 4, "upstream", "c", "2024-01-02T00:00:00Z", true, "dataset:ns:t", "details"],
  );
  assert.equal(initialState("?node=n&direction=sideways").direction, "both");
  assert.equal(initialState("?column=c").column, null, "a column without its dataset traces nothing");
});

test("Airflow's ids keep their plus (a run id's +00:00) and a bare percent sign; each tab has its panel", () => {
  const tab = initialState("?dag_id=orders&task_id=load&run_id=manual__2024-01-01T00:00:00+00:00%");
  assert.deepEqual([tab.dagId, tab.taskId, tab.runId], ["orders", "load", "manual__2024-01-01T00:00:00+00:00%"]);
  assert.deepEqual([tab.depth, tab.panel], [6, "task-instance"]);  // a task's tab: the default depth of a node
  assert.deepEqual([initialState("?dag_id=orders").depth, initialState("?dag_id=orders").panel], [2, null]);
  assert.equal(initialState("").panel, "attention");
});

test("a state is frozen: it is changed only through the reducer", () => {
  const state = initialState("?node=n");
  assert.throws(() => { state.node = "other"; }, TypeError);
  assert.throws(() => { reduce(state, openNode("m")).node = "other"; }, TypeError);
  assert.throws(() => { reduce(state, toggleGroup("job:t")).collapsed["job:u"] = true; }, TypeError);
  assert.equal(state.node, "n");
});

test("an action that changes nothing gives back the same state; an unknown action is an error", () => {
  const state = initialState("?node=n&depth=4");
  for (const action of [setDepth("4"), setDirection("both"), selectNode("n"), setAsOf(null), setRetired(false), leaveColumns()]) {
    assert.equal(reduce(state, action), state, action.type);
  }
  assert.throws(() => reduce(state, { type: "lineage:column" }), /Unknown action: lineage:column/);
});

test("opening a node centres it, leaves column mode and shows its details; selecting only shows them", () => {
  const traced = run("?node=d", traceColumn("d", "amount"));
  assert.deepEqual([traced.node, traced.column, traced.selected, traced.panel], ["d", "amount", "d", "details"]);
  const opened = reduce(traced, openNode("j"));
  assert.deepEqual([opened.node, opened.column, opened.selected, opened.panel], ["j", null, "j", "details"]);
  const selected = reduce(opened, selectNode("k"));
  assert.deepEqual([selected.node, selected.selected], ["j", "k"]);
  assert.equal(reduce(traced, leaveColumns()).column, null);
});

test("loaders' answers: a graph replaces the freshness of the last; a failure draws none", () => {
  const graph = { target: { id: "d" } };
  const loaded = run("?node=d", staleLoaded({ breaches: [] }), graphLoaded(graph));
  assert.deepEqual([loaded.graph, loaded.stale], [graph, null]);
  const stale = reduce(loaded, staleLoaded({ breaches: [1] }));
  assert.deepEqual(stale.stale, { breaches: [1] });
  assert.deepEqual([reduce(stale, graphFailed()).graph, reduce(stale, graphFailed()).stale], [null, null]);
  const collapsed = run("?node=d", toggleGroup("job:t"), toggleGroup("job:u"), toggleGroup("job:t"));
  assert.deepEqual(collapsed.collapsed, { "job:t": false, "job:u": true });
});

test("the URL names the state: a node's view, else the Airflow tab's ids; spaces as %20", () => {
  assert.equal(urlOf(initialState("?dag_id=my%20dag")), "?dag_id=my%20dag&depth=2");
  const state = run("?dag_id=my%20dag", openNode("job:ns:a b"), traceColumn("job:ns:a b", "amount"), setDirection("downstream"),
    setAsOf("2024-01-02T00:00:00Z"), setRetired(true));
  assert.equal(urlOf(state), "?node=job%3Ans%3Aa%20b&depth=2&direction=downstream&column=amount&asOf=2024-01-02T00%3A00%3A00Z&retired=1");
  const tab = run("?dag_id=d&task_id=t&run_id=r+1", taskJobFound("job:ns:d.t"), setDepth(3));
  assert.equal(urlOf(tab), "?dag_id=d&task_id=t&run_id=r%2B1&depth=3", "the task's job centres the graph, not the URL");
});

test("what the graph asks for: a column's path, a node's neighbourhood, the task's job, a DAG, or nothing", () => {
  const at = setAsOf("2024-01-02T00:00:00Z");
  assert.deepEqual(viewportQuery(run("?node=d&depth=3", traceColumn("d", "c"), at)),
    { path: "columns", query: { node: "d", column: "c", depth: 3, asOf: "2024-01-02T00:00:00Z" } });
  assert.deepEqual(viewportQuery(run("?node=d&depth=3", setRetired(true), setDirection("upstream"))),
    { path: "lineage", query: { node: "d", depth: 3, direction: "upstream", asOf: null, includeRetired: "true" } });
  const tab = initialState("?dag_id=o&task_id=t");
  assert.equal(viewportQuery(tab), null, "a task's tab draws once its job is known");
  assert.equal(viewportQuery(reduce(tab, taskJobFound("job:ns:o.t"))).query.node, "job:ns:o.t");
  assert.deepEqual(viewportQuery(initialState("?dag_id=o")),
    { path: "dag", query: { dag_id: "o", depth: 2, asOf: null, includeRetired: null } });
  assert.equal(viewportQuery(initialState("")), null);
});

test("the panel is loaded again for another node or another time, not for the same node", () => {
  const state = initialState("?node=d");
  assert.equal(panelKey(reduce(state, selectNode("d"))), panelKey(state));
  assert.notEqual(panelKey(reduce(state, selectNode("e"))), panelKey(state));
  assert.notEqual(panelKey(reduce(state, setAsOf("2024-01-02T00:00:00Z"))), panelKey(state));
  const tab = initialState("?dag_id=o&task_id=t");
  assert.equal(panelKey(reduce(tab, taskJobFound("job:ns:o.t"))), "task-instance", "the job highlighted, the tab's panel kept");
});
