// Reads a JSON list of Mermaid texts on stdin; prints a JSON list of {ok, type} or {ok: false, error}.
// Mermaid's parser wants a DOM: jsdom gives it one.
import { readFileSync } from "node:fs";
import { JSDOM } from "jsdom";

const dom = new JSDOM("<!DOCTYPE html><body></body>");
globalThis.window = dom.window;
globalThis.document = dom.window.document;
globalThis.DOMParser = dom.window.DOMParser;
const { default: mermaid } = await import("mermaid");
mermaid.initialize({ startOnLoad: false, securityLevel: "strict" });

const results = [];
for (const text of JSON.parse(readFileSync(0, "utf8"))) {
  try {
    const parsed = await mermaid.parse(text);
    results.push({ ok: true, type: parsed.diagramType });
  } catch (error) {
    results.push({ ok: false, error: String(error?.message ?? error).slice(0, 1000) });
  }
}
console.log(JSON.stringify(results));
