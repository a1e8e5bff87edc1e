/* Request-sequence guards: an answer is drawn only when no newer request of its kind was made since, so
 * a slow answer to an old question (a depth changed twice quickly) never replaces the newer one.
 * Pure: no DOM, no state. */

// A guard for one kind of request: begin() before each request returns isCurrent(), true until the next
// begin(); a loader checks it before drawing its answer or its error.
export function latest() {
  var issued = 0;
  return function begin() {
    var mine = ++issued;
    return function isCurrent() { return mine === issued; };
  };
}

// Everything drawn in the graph's viewport (api/lineage, api/dag, api/columns).
export const viewportRequests = latest();

// Everything drawn in the side panel as a whole (api/node, api/task-instance, api/attention).
export const panelRequests = latest();
