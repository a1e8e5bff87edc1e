/* What clicking a node (in the graph, the banner, the search results or the panel) does. main.js provides
 * the two actions at start; the views call them from here, so no module imports main.js. */

var handlers = { open: null, select: null };

export function provideActions(open, select) {
  handlers.open = open;
  handlers.select = select;
}

// Make the node the graph's centre (and show its details).
export function openNode(nodeId) { handlers.open(nodeId); }

// Highlight the node in the drawn graph and show its details.
export function selectNode(nodeId) { handlers.select(nodeId); }
