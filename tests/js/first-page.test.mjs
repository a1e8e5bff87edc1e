// node --test: the first page (no node in the URL) asks what needs attention; a node opened before that
// answer comes keeps the panel: the late answer is not drawn over the node's details (see page.mjs).
import assert from "node:assert/strict";
import { test } from "node:test";

import { openFromSearch, openPage, settle } from "./page.mjs";

const page = await openPage("");
const { asked, document } = page;

test("the first page asks what needs attention, and nothing else of the panel", () => {
  assert.deepEqual(page.requests.map((r) => r.path), ["time-range", "attention"]);
  assert.equal(document.getElementById("status").textContent, "Loading what needs attention\u2026");
});

test("a node opened from the search before the attention answer keeps the panel", async () => {
  await openFromSearch(page, "mart");
  assert.equal(page.window.location.search, "?node=dataset%3Ans%3Amart&depth=6");
  asked("attention").at(-1).answer({ since: "2024-01-01T00:00:00Z", failedJobs: [], stale: [], changes: [] });
  await settle();
  assert.equal(document.querySelector("#details h2").textContent, "mart");
  assert.equal(document.getElementById("status").textContent, "");
});
