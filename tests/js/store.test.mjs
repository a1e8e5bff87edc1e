// node --test: store.js, the one store: actions dispatched through the reducer, subscribers told of each
// change, and the page's URL written when, and only when, the URL the state names changes.
import assert from "node:assert/strict";
import { test } from "node:test";

const written = [];
globalThis.window = {
  location: { search: "?node=dataset%3Ans%3At&depth=4" },
  history: { replaceState: (_state, _title, url) => written.push(url) },
};
const { createStore, store } = await import("../../airflow_lineage_plus/ui/static/store.js");
const { graphLoaded, openNode, selectNode, setDepth } = await import("../../airflow_lineage_plus/ui/static/state.js");

test("subscribers hear each change with the state before it; an action that changes nothing is not heard", () => {
  const counter = createStore((n, action) => (action.type === "add" ? n + action.by : n), 0);
  const heard = [];
  counter.subscribe((next, previous) => heard.push([previous, next]));
  counter.dispatch({ type: "add", by: 2 });
  counter.dispatch({ type: "add", by: 0 });
  counter.dispatch({ type: "add", by: 3 });
  assert.deepEqual(heard, [[0, 2], [2, 5]]);
  assert.equal(counter.getState(), 5);
});

test("an action dispatched by a subscriber is applied after every subscriber heard the one before", () => {
  const counter = createStore((n, action) => n + action.by, 0);
  const heard = [];
  counter.subscribe((next) => { heard.push(["first", next]); if (next === 1) counter.dispatch({ by: 10 }); });
  counter.subscribe((next) => heard.push(["second", next]));
  counter.dispatch({ by: 1 });
  assert.deepEqual(heard, [["first", 1], ["second", 1], ["first", 11], ["second", 11]]);
});

test("a failing subscriber does not leave its dispatch half applied later", () => {
  const counter = createStore((n, action) => n + action.by, 0);
  counter.subscribe((next) => { if (next === 1) { counter.dispatch({ by: 100 }); throw new Error("drawing failed"); } });
  assert.throws(() => counter.dispatch({ by: 1 }), /drawing failed/);
  counter.dispatch({ by: 2 });
  assert.equal(counter.getState(), 3);
});

test("the page's store starts from the URL and writes the URL only when what it names changes", () => {
  assert.equal(store.getState().node, "dataset:ns:t");
  assert.deepEqual(written, [], "nothing written at start");
  store.dispatch(selectNode("job:ns:j"));  // the URL does not name the selection
  store.dispatch(graphLoaded({ target: null }));
  assert.deepEqual(written, []);
  store.dispatch(setDepth(5));
  store.dispatch(openNode("job:ns:j"));
  assert.deepEqual(written, ["?node=dataset%3Ans%3At&depth=5", "?node=job%3Ans%3Aj&depth=5"]);
});
