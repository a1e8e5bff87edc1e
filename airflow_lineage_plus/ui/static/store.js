/* The view's one store of state. Modules change the state only by dispatching an action (state.js makes
 * them and reduces them); every subscriber then hears (next, previous). The page's URL follows the state:
 * it is written when the URL a state names (urlOf) changes, never by hand.
 */
import { initialState, reduce, urlOf } from "./state.js";

// A store over `reduceWith(state, action)`. An action dispatched while subscribers run (a subscriber that
// dispatches) is applied after them, in order.
export function createStore(reduceWith, initial) {
  var current = initial, listeners = [], queue = [], busy = false;
  function dispatch(action) {
    queue.push(action);
    if (busy) return;
    busy = true;
    try {
      while (queue.length) {
        var previous = current;
        current = reduceWith(current, queue.shift());
        if (current !== previous) listeners.slice().forEach(function (listener) { listener(current, previous); });
      }
    } finally {
      busy = false;
      queue.length = 0;  // what a failing subscriber left is not applied later, out of its turn
    }
  }
  return {
    getState: function () { return current; },
    dispatch: dispatch,
    subscribe: function (listener) { listeners.push(listener); },
  };
}

// Write the page's URL when the state names another one (replaceState: no history entry per change).
export function followUrl(store, history) {
  store.subscribe(function (next, previous) {
    var url = urlOf(next);
    if (url !== urlOf(previous)) history.replaceState(null, "", url);
  });
}

// The page's store: the state the URL names, and the URL following it.
export const store = createStore(reduce, initialState(window.location.search));
followUrl(store, window.history);
