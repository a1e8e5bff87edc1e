// node --test: sequence.js, and a loader written as main.js's loadGraph is: an old answer arriving after
// a newer request's answer is not drawn.
import assert from "node:assert/strict";
import { test } from "node:test";

import { latest } from "../../airflow_lineage_plus/ui/static/sequence.js";

function deferred() {
  let resolve, reject;
  const promise = new Promise((yes, no) => { resolve = yes; reject = no; });
  return { promise, resolve, reject };
}

// A loader as the view's are: begin a request, draw its answer (or its error) only while it is current.
function loader(requests, drawn) {
  const answers = [];
  return {
    answers,
    load(depth) {
      const answer = deferred();
      answers.push(answer);
      const isCurrent = requests();
      return answer.promise.then(
        (graph) => { if (isCurrent()) drawn.push(["graph", depth, graph]); },
        (error) => { if (isCurrent()) drawn.push(["error", depth, error.message]); },
      );
    },
  };
}

test("a quick depth change: the first answer, arriving last, is not drawn", async () => {
  const drawn = [];
  const view = loader(latest(), drawn);
  const first = view.load(2), second = view.load(3);
  view.answers[1].resolve("depth-3 graph");
  await second;
  view.answers[0].resolve("depth-2 graph");  // the slow, old answer
  await first;
  assert.deepEqual(drawn, [["graph", 3, "depth-3 graph"]]);
});

test("an old request's error does not replace the newer answer either", async () => {
  const drawn = [];
  const view = loader(latest(), drawn);
  const first = view.load(2), second = view.load(3);
  view.answers[1].resolve("depth-3 graph");
  view.answers[0].reject(new Error("timed out"));
  await Promise.all([first, second]);
  assert.deepEqual(drawn, [["graph", 3, "depth-3 graph"]]);
});

test("answers in order are each drawn, and each kind of request has its own sequence", async () => {
  const drawn = [];
  const graphs = loader(latest(), drawn), details = loader(latest(), drawn);
  const a = graphs.load(1);
  graphs.answers[0].resolve("g1");
  await a;
  const b = graphs.load(2), c = details.load(9);
  details.answers[0].resolve("d9");
  graphs.answers[1].resolve("g2");
  await Promise.all([b, c]);
  assert.deepEqual(drawn, [["graph", 1, "g1"], ["graph", 9, "d9"], ["graph", 2, "g2"]]);
});

test("without the guard the old answer would be drawn last (what the guard prevents)", async () => {
  const drawn = [];
  const always = () => () => true;  // a loader with no sequence guard, as loadGraph was
  const view = loader(always, drawn);
  const first = view.load(2), second = view.load(3);
  view.answers[1].resolve("depth-3 graph");
  await second;
  view.answers[0].resolve("depth-2 graph");
  await first;
  assert.deepEqual(drawn.at(-1), ["graph", 2, "depth-2 graph"]);
});
