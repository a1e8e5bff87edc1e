// node --test: the real loaders of the Lineage view (main.js's graph and column loader, the details panel,
// what-changed, impact, search) on the real page in jsdom, with answers arriving in the order a slow
// network gives them: an old answer arriving after a newer request is never drawn. One page, used by the
// cases in turn (see page.mjs).
import assert from "node:assert/strict";
import { test } from "node:test";

import { datasetDetails, datasetNode, graphOf, jobNode, openPage, settle } from "./page.mjs";

const MART = datasetNode("mart");
const page = await openPage("?node=dataset%3Ans%3Amart&depth=2");
const { asked, document, drawn } = page;

function lastAsked(path) { return asked(path).at(-1); }

test("at start the page asks for the URL's graph and the node's details, and writes no URL", async () => {
  assert.deepEqual(page.requests.map((r) => r.path), ["time-range", "lineage", "node"]);
  assert.deepEqual(lastAsked("lineage").query, { node: MART.id, depth: "2", direction: "both" });
  lastAsked("lineage").answer(graphOf(MART, [jobNode("build", "COMPLETED")]));
  lastAsked("node").answer(datasetDetails("mart", ["total_usd", "day"]));
  await settle();
  assert.deepEqual(drawn(), [MART.id, "job:ns:build"]);
  assert.equal(page.window.location.search, "?node=dataset%3Ans%3Amart&depth=2");
});

test("a quick depth change: the first answer, arriving last, is not drawn", async () => {
  page.change("#depth", "3");
  page.change("#depth", "4");
  const [three, four] = asked("lineage").slice(-2);
  assert.deepEqual([three.query.depth, four.query.depth], ["3", "4"]);
  four.answer(graphOf(MART, [jobNode("depth4", "COMPLETED")]));
  await settle();
  three.answer(graphOf(MART, [jobNode("depth3", "FAILED")]));  // the slow, old answer
  await settle();
  assert.deepEqual(drawn(), [MART.id, "job:ns:depth4"]);
  assert.equal(page.window.location.search, "?node=dataset%3Ans%3Amart&depth=4");
  assert.equal(asked("freshness").length, 2, "freshness is asked for the drawn answer only (and the first)");
});

test("an old request's error does not replace the newer answer either", async () => {
  page.change("#direction", "upstream");
  page.change("#direction", "downstream");
  const [up, down] = asked("lineage").slice(-2);
  down.answer(graphOf(MART, [jobNode("down", "COMPLETED")]));
  await settle();
  up.fail(500, "the old request timed out");
  await settle();
  assert.deepEqual(drawn(), [MART.id, "job:ns:down"]);
  assert.equal(document.getElementById("status").textContent, "");
});

test("a column traced twice: only the second column's path is drawn", async () => {
  page.click('#details button.trace-column[data-column="total_usd"]');
  page.click('#details button.trace-column[data-column="day"]');
  const [total, day] = asked("columns").slice(-2);
  assert.deepEqual([total.query.column, day.query.column], ["total_usd", "day"]);
  day.answer({ target: MART, column: "day", upstream: [{ namespace: "ns", name: "raw", column: "day", depth: 1 }], downstream: [], paths: [] });
  await settle();
  total.answer({ target: MART, column: "total_usd", upstream: [{ namespace: "ns", name: "raw", column: "amount", depth: 1 }], downstream: [], paths: [] });
  await settle();
  assert.deepEqual(drawn(), ['["dataset:ns:mart","day"]', '["dataset:ns:raw","day"]']);
  assert.match(document.getElementById("mode-bar").textContent, /where day comes from/);
  assert.match(page.window.location.search, /&column=day$/);
});

test("leaving column mode before the column's answer: the late column path is not drawn", async () => {
  page.click('#details button.trace-column[data-column="total_usd"]');
  const column = lastAsked("columns");
  page.click("#leave-columns");
  lastAsked("lineage").answer(graphOf(MART, [jobNode("back", "COMPLETED")]));
  await settle();
  column.answer({ target: MART, column: "total_usd", upstream: [{ namespace: "ns", name: "raw", column: "amount", depth: 1 }], downstream: [], paths: [] });
  await settle();
  assert.deepEqual(drawn(), [MART.id, "job:ns:back"]);
  assert.equal(document.getElementById("mode-bar").hidden, true);
});

test("two nodes selected quickly: the panel shows the second, whatever order the details come in", async () => {
  page.click('#viewport g.node[data-node-id="dataset:ns:mart"]');  // the centre, selected: no new request
  page.click('#viewport g.node[data-node-id="job:ns:back"]');
  page.click('#viewport g.node[data-node-id="dataset:ns:mart"]');
  const [job, mart] = asked("node").slice(-2);
  assert.deepEqual([job.query.node, mart.query.node], ["job:ns:back", MART.id]);
  mart.answer(datasetDetails("mart", ["total_usd"]));
  await settle();
  job.answer({ id: "job:ns:back", type: "JOB", namespace: "ns", name: "back", latestRun: null, runs: [], inputs: [],
    outputs: [], declared: false, sql: null, owners: [], documentation: null, sourceCodeLocation: null, airflow: {} });
  await settle();
  assert.equal(document.querySelector("#details h2").textContent, "mart");
});

test("what changed: the answer for a dataset no longer shown is not drawn, even into its old section", async () => {
  const first = document.querySelector("#details .what-changed");
  const forMart = lastAsked("what-changed");
  page.click('#viewport g.node[data-node-id="job:ns:back"]');
  page.click('#viewport g.node[data-node-id="dataset:ns:mart"]');
  lastAsked("node").answer(datasetDetails("mart", ["total_usd"]));
  await settle();
  const again = lastAsked("what-changed");
  assert.notEqual(again, forMart);
  asked("node").at(-2).answer({ id: "job:ns:back", type: "JOB", namespace: "ns", name: "back", latestRun: null,
    runs: [], inputs: [], outputs: [], declared: false, sql: null, owners: [], documentation: null,
    sourceCodeLocation: null, airflow: {} });
  const change = (node, kind) => ({ node, kind, column: null, from: 10, to: 5, change: -0.5, depth: 1, at: null, path: [] });
  again.answer({ target: MART, asOf: "2024-01-02T00:00:00Z", baseline: { runs: 7 }, changes: [change("dataset:ns:raw", "rowCount")], cannotTell: [] });
  await settle();
  forMart.answer({ target: MART, asOf: "2024-01-01T00:00:00Z", baseline: { runs: 7 }, changes: [change("job:ns:old", "sql")], cannotTell: [] });
  await settle();
  const shown = document.querySelector("#details .what-changed");
  assert.deepEqual([...shown.querySelectorAll("li")].map((li) => li.getAttribute("data-kind")), ["rowCount"]);
  assert.equal(first.textContent, "Comparing each node upstream with its recent runs\u2026");
});

test("impact: the answer for a panel no longer shown is not drawn, even into its old section", async () => {
  page.click("#details button[data-action=impact]");
  const impact = (level, owners) => ({ target: MART, nodes: [], edges: [], level, owners, exact: true });
  const first = lastAsked("impact"), old = document.querySelector("#details .impact");
  // the panel drawn again for the same dataset, and asked again
  page.click('#viewport g.node[data-node-id="job:ns:back"]');
  page.click('#viewport g.node[data-node-id="dataset:ns:mart"]');
  lastAsked("node").answer(datasetDetails("mart", ["total_usd"]));
  await settle();
  page.click("#details button[data-action=impact]");
  lastAsked("impact").answer(impact("LOW", ["team:new"]));
  await settle();
  first.answer(impact("HIGH", ["team:old"]));
  await settle();
  assert.equal(document.querySelector("#details .impact .level").getAttribute("data-level"), "LOW");
  assert.equal(old.textContent, "Walking downstream\u2026");
});

test("schema versions: the answer for a panel no longer shown is not drawn, even into its old box", async () => {
  const first = asked("schema-diff").at(-1), old = document.querySelector("#details .schema-versions");
  page.click('#viewport g.node[data-node-id="job:ns:back"]');
  page.click('#viewport g.node[data-node-id="dataset:ns:mart"]');
  lastAsked("node").answer(datasetDetails("mart", ["total_usd"]));
  await settle();
  const versions = (type) => ({ target: MART, versions: [[{ name: "a", type }], [{ name: "a", type: "INT" }]],
    changes: [{ kind: "TYPE_CHANGED", column: "a", from: "INT", to: type }] });
  asked("schema-diff").at(-1).answer(versions("BIGINT"));
  await settle();
  first.answer(versions("TEXT"));
  await settle();
  assert.deepEqual([...document.querySelectorAll("#details .schema-versions li")].map((li) => li.textContent), ["a: INT \u2192 BIGINT"]);
  assert.equal(old.textContent, "Loading\u2026");
});

test("a proposed schema compared twice: the first answer, arriving last, is not drawn", async () => {
  const compare = [...document.querySelectorAll("#details .schema-changes button")].find((b) => b.textContent.startsWith("Compare"));
  document.getElementById("proposed-schema").value = '{"a": "TEXT"}';
  compare.click();
  document.getElementById("proposed-schema").value = '{"a": "BIGINT"}';
  compare.click();
  const [first, second] = asked("schema-diff").slice(-2);
  assert.deepEqual([first.query.proposed, second.query.proposed], ['{"a": "TEXT"}', '{"a": "BIGINT"}']);
  const change = (to) => ({ target: MART, versions: [], changes: [{ kind: "TYPE_CHANGED", column: "a", from: "INT", to }] });
  second.answer(change("BIGINT"));
  await settle();
  first.answer(change("TEXT"));
  await settle();
  assert.deepEqual([...document.querySelectorAll("#details .proposal-result li")].map((li) => li.textContent), ["a: INT \u2192 BIGINT"]);
});

test("search typed on: an older answer arriving last does not replace the results", async () => {
  await page.type("ma");
  await page.type("mar");
  const [ma, mar] = asked("search").slice(-2);
  assert.deepEqual([ma.query.q, mar.query.q], ["ma", "mar"]);
  mar.answer({ results: [MART] });
  await settle();
  ma.answer({ results: [datasetNode("max"), datasetNode("mars")] });
  await settle();
  const listed = [...document.querySelectorAll("#search-results li")].map((li) => li.getAttribute("data-node-id"));
  assert.deepEqual(listed, [MART.id]);
});

test("a job's panel reads the keys api/node sends: the latest run's skip reason is its recent run's", async () => {
  page.click('#viewport g.node[data-node-id="job:ns:back"]');
  const airflow = { dag_id: "orders", task_id: "back", run_id: "manual__1", try_number: 1, map_index: -1 };
  lastAsked("node").answer({
    id: "job:ns:back", type: "JOB", namespace: "ns", name: "back",
    latestRun: { runId: "r2", state: "SKIPPED", startedAt: null, endedAt: null, errorMessage: null },
    runs: [
      { runId: "r2", state: "SKIPPED", startedAt: null, endedAt: null, errorMessage: null, skipReason: "upstream failed", executionMode: "NO_OP", airflow },
      { runId: "r1", state: "COMPLETED", startedAt: null, endedAt: null, errorMessage: null, skipReason: null, executionMode: null, airflow: null },
    ],
    inputs: ["dataset:ns:raw"], outputs: [], declared: false, sql: "select 1", owners: ["team:a"], documentation: null,
    sourceCodeLocation: null, airflow: { dag_id: "orders", task_id: "back", run_id: "manual__1" },
  });
  await settle();
  const details = document.getElementById("details");
  const latest = [...details.querySelectorAll("dl.kv")][0];
  const pairs = [...latest.querySelectorAll("dt")].map((dt) => [dt.textContent, dt.nextElementSibling.textContent]);
  assert.deepEqual(pairs, [["State", "SKIPPED"], ["Skip reason", "upstream failed"], ["Execution", "NO_OP"]]);
  assert.deepEqual([...details.querySelectorAll(".run .note")].map((n) => n.textContent).filter(Boolean), ["Skipped: upstream failed"]);
  const link = [...details.querySelectorAll("a")].find((a) => a.textContent === "Open the task instance in Airflow");
  assert.equal(link.getAttribute("href"), "/dags/orders/runs/manual__1/tasks/back");
  assert.deepEqual([...details.querySelectorAll("h3")].map((h) => h.textContent), ["Latest run", "SQL", "Inputs", "Recent runs", "Owners"], "every key sent in its section, none under More");
});
