// The Lineage page for node --test: the real index.html in jsdom, the real ES modules of ui/static started
// by importing main.js, and a fetch that answers only when a test says so, in the order the test chooses.
// The modules keep the page's state, so a test file opens one page (node --test runs each file in its own
// process).
import { readFileSync } from "node:fs";
import { URL } from "node:url";
import { JSDOM } from "jsdom";

const STATIC = new URL("../../airflow_lineage_plus/ui/static/", import.meta.url);

function deferred() {
  let resolve, reject;
  const promise = new Promise((yes, no) => { resolve = yes; reject = no; });
  return { promise, resolve, reject };
}

// Let every settled promise run its callbacks (the loaders' then/catch chains).
export function settle() {
  return new Promise((resolve) => setTimeout(resolve, 0));
}

function response(status, body) {
  return { ok: status >= 200 && status < 300, status, json: async () => body, headers: { get: () => null } };
}

// Open the page at `search` (the URL's query string). Returns the document, every request the page made
// ({path, query, answer(body), fail(status, detail)}, in order) and helpers to find and wait.
export async function openPage(search) {
  const html = readFileSync(new URL("index.html", STATIC), "utf8");
  const dom = new JSDOM(html, { url: "https://airflow.example/lineage-plus/" + search });
  const requests = [];
  globalThis.window = dom.window;
  globalThis.document = dom.window.document;
  globalThis.Event = dom.window.Event;
  globalThis.fetch = (url) => {
    const address = new URL(url, dom.window.location.href);
    const waiting = deferred();
    requests.push({
      path: address.pathname.replace(/^.*\/api\//, ""),
      query: Object.fromEntries(address.searchParams),
      answer: (body) => waiting.resolve(response(200, body)),
      fail: (status, detail) => waiting.resolve(response(status, { detail })),
    });
    return waiting.promise;
  };
  await import(new URL("main.js", STATIC).href);
  const document = dom.window.document;
  while (document.body.getAttribute("data-ready") !== "true") await settle();
  return {
    window: dom.window,
    document,
    requests,
    // The requests to api/<path> made so far, oldest first.
    asked: (path) => requests.filter((r) => r.path === path),
    // The ids of the nodes drawn in the graph, sorted.
    drawn: () => [...document.querySelectorAll("#viewport g.node")].map((g) => g.getAttribute("data-node-id")).sort(),
    click: (selector) => {
      const target = document.querySelector(selector);
      if (!target) throw new Error("nothing on the page matches " + selector);
      target.dispatchEvent(new dom.window.MouseEvent("click", { bubbles: true }));
    },
    dblclick: (selector) => {
      document.querySelector(selector).dispatchEvent(new dom.window.MouseEvent("dblclick", { bubbles: true }));
    },
    change: (selector, value) => {
      const input = document.querySelector(selector);
      input.value = value;
      input.dispatchEvent(new dom.window.Event("change"));
    },
    // Type `text` in the search box and wait past its debounce: the page asks api/search.
    type: async (text) => {
      const search = document.getElementById("search");
      search.value = text;
      search.dispatchEvent(new dom.window.Event("input"));
      await new Promise((resolve) => setTimeout(resolve, 250));
    },
  };
}

// Open the dataset `name` as a reader does: search it, pick it; its graph and details are answered.
export async function openFromSearch(page, name) {
  const dataset = datasetNode(name);
  await page.type(name);
  page.asked("search").at(-1).answer({ results: [dataset] });
  await settle();
  page.click(`#search-results li[data-node-id="${dataset.id}"]`);
  page.asked("lineage").at(-1).answer(graphOf(dataset, []));
  page.asked("node").at(-1).answer(datasetDetails(name, []));
  await settle();
}

// API answers shaped as the routes send them (docs/ui.md, Routes).
export function jobNode(name, state) {
  return { id: "job:ns:" + name, type: "JOB", namespace: "ns", name, depth: 0, latestRun: state ? { runId: name + "-run", state } : null };
}

export function datasetNode(name, depth) {
  return { id: "dataset:ns:" + name, type: "DATASET", namespace: "ns", name, depth: depth || 0 };
}

// A graph centred on `target` with `others` around it, each wired to the target.
export function graphOf(target, others) {
  return {
    target,
    nodes: [target, ...others],
    edges: others.map((n) => ({ origin: n.id, destination: target.id })),
    truncated: {},
    exact: true,
  };
}

export function datasetDetails(name, columns) {
  return {
    id: "dataset:ns:" + name, type: "DATASET", namespace: "ns", name,
    fields: (columns || []).map((c) => ({ name: c, type: "INT", description: null })),
    schemaVersions: [], lastSchemaChange: [], quality: {}, qualityRunId: null, columnLineage: {},
    owners: [], tags: [], documentation: null, producers: [], consumers: [],
    restrictedProducers: false, restrictedConsumers: false,
  };
}

// The api/task-instance answer for a task whose job is `jobName`: one completed try.
export function taskInstance(jobName) {
  const run = { runId: "r1", state: "COMPLETED", startedAt: null, endedAt: null, errorMessage: null, skipReason: null,
    executionMode: null, job: jobNode(jobName), ranBy: [], facets: {}, inputs: [], outputs: [], airflow: null, tryNumber: 1 };
  return { job: jobNode(jobName), tries: [run], run };
}
