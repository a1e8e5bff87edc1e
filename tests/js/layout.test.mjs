// node --test: layout.js, where each node of a lineage graph goes.
import assert from "node:assert/strict";
import { test } from "node:test";

import { layout, nodeHeight, nodeWidth } from "../../airflow_lineage_plus/ui/static/layout.js";

const ds = (name) => ({ id: "dataset:ns:" + name, type: "DATASET", name });
const job = (name) => ({ id: "job:ns:" + name, type: "JOB", name });
const edge = (origin, destination) => ({ origin: origin.id, destination: destination.id });

test("a chain is laid out left to right, one column per hop, on one row", () => {
  const [raw, load, stg, build, mart] = [ds("raw"), job("load"), ds("stg"), job("build"), ds("mart")];
  const placed = layout({ target: mart, nodes: [raw, load, stg, build], edges: [edge(raw, load), edge(load, stg), edge(stg, build), edge(build, mart)] });
  const xs = [raw, load, stg, build, mart].map((n) => placed.coords[n.id].x);
  const ys = new Set([raw, load, stg, build, mart].map((n) => placed.coords[n.id].y + nodeHeight(n) / 2));
  assert.deepEqual([...xs].sort((a, b) => a - b), xs);  // strictly left to right along the edges
  assert.equal(new Set(xs).size, 5);
  assert.ok(ys.size <= 2);  // datasets and jobs differ in height only: one row
  assert.equal(placed.order[0], mart.id);  // the target first, then the server's order
  assert.ok(placed.width >= xs[4] + nodeWidth(mart) && placed.height > 0);
});

test("two inputs of one job share the column before it, one above the other", () => {
  const [a, b, j, out] = [ds("a"), ds("b"), job("j"), ds("out")];
  const placed = layout({ target: out, nodes: [a, b, j], edges: [edge(a, j), edge(b, j), edge(j, out)] });
  const [ca, cb, cj] = [placed.coords[a.id], placed.coords[b.id], placed.coords[j.id]];
  assert.equal(ca.x, cb.x);
  assert.ok(ca.x < cj.x && cj.x < placed.coords[out.id].x);
  assert.notEqual(ca.y, cb.y);
  assert.ok(Math.abs(ca.y - cb.y) >= nodeHeight(a));  // no overlap
});

test("what the server cut is drawn as a placeholder with an edge marked more", () => {
  const [up, target] = [job("up"), ds("t")];
  const placed = layout({ target, nodes: [up], edges: [edge(up, target)], truncated: { [up.id]: 4 } });
  const more = placed.edges.filter((e) => e.more);
  assert.equal(more.length, 1);
  const placeholder = placed.nodes[more[0].origin] || placed.nodes[more[0].destination];
  assert.equal(placeholder.type, "MORE");
  assert.ok(placed.coords[placeholder.id]);
});

test("nodes are sized by kind", () => {
  assert.equal(nodeWidth(ds("x")), nodeWidth(job("x")));
  assert.notEqual(nodeHeight(ds("x")), nodeHeight(job("x")));
});
