/* The search box: results as the user types (debounced; only the newest answer is shown), arrow keys,
 * Enter and Escape; picking a result opens that node. */
import { api } from "./api.js";
import { $, append, clear, el } from "./dom.js";
import { latest } from "./sequence.js";
import { openNode } from "./state.js";
import { store } from "./store.js";

var searchTimer = null, searchRequests = latest(), activeResult = -1;

export function setupSearch() {
  var input = $("search"), list = $("search-results");
  input.addEventListener("input", function () {
    clearTimeout(searchTimer);
    searchTimer = setTimeout(function () { runSearch(input.value); }, 180);
  });
  input.addEventListener("keydown", function (event) { onKey(event, list); });
  document.addEventListener("click", function (event) {
    if (!list.contains(event.target) && event.target !== input) list.hidden = true;
  });
}

function onKey(event, list) {
  var items = list.querySelectorAll("li[data-index]");
  if (event.key === "ArrowDown" || event.key === "ArrowUp") {
    if (!items.length) return;
    event.preventDefault();
    activeResult = (activeResult + (event.key === "ArrowDown" ? 1 : -1) + items.length) % items.length;
    items.forEach(function (item, i) { item.classList.toggle("active", i === activeResult); });
  } else if (event.key === "Enter") {
    event.preventDefault();
    var pick = items[activeResult >= 0 ? activeResult : 0];
    if (pick) pick.click();
  } else if (event.key === "Escape") {
    list.hidden = true;
  }
}

export function runSearch(text) {
  var list = $("search-results"), isCurrent = searchRequests();
  if (!text.trim()) { list.hidden = true; return; }
  api("search", { q: text, limit: 25 }).then(function (body) {
    if (!isCurrent()) return;
    clear(list);
    activeResult = -1;
    var results = body.results;
    if (!results.length) append(list, el("li", { "class": "empty", text: "No dataset or job matches." }));
    results.forEach(function (node, i) { append(list, resultItem(list, node, i)); });
    list.hidden = false;
  }).catch(function (error) {
    if (!isCurrent()) return;
    clear(list);
    append(list, el("li", { "class": "empty", text: error.message }));
    list.hidden = false;
  });
}

function resultItem(list, node, i) {
  return el("li", {
    role: "option", "data-index": i, "data-node-id": node.id, title: node.id,
    onclick: function () { list.hidden = true; $("search").value = node.name; store.dispatch(openNode(node.id)); },
  },
    el("span", { "class": "kind kind-" + (node.type === "JOB" ? "JOB" : "DATASET"), text: node.type === "JOB" ? "Job" : "Dataset" }),
    el("span", { "class": "result-name", text: node.name }),
    el("span", { "class": "result-ns", text: node.namespace }));
}
