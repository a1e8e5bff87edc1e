/* How the view draws each kind of edge (docs/graph.md, "JSON contract": an edge's state).
 *
 * Edges in DAG code of a job that has not run are dotted; edges a job no longer reports are dashed; an
 * upstream DAG run whose asset event started a DAG run (cross-DAG lineage, state "triggered") is a violet
 * dash-dot edge whose tooltip names that DAG run. Pure functions of the API's edge JSON.
 */
import { stateLabel } from "./dom.js";

export const EDGE_CLASSES = {
  declared: "edge declared-edge",
  retired: "edge retired-edge",
  triggered: "edge triggered-edge",
};

// The tooltip of a triggered edge: each upstream DAG run (and its state) whose asset event started the
// destination's DAG run, one a line.
export function triggerTitle(edge) {
  return (edge.triggers || [])
    .map(function (t) {
      var run = t.runId ? "DAG run " + t.runId : "a run of " + t.taskJob;
      return "Started by the asset event of " + run + (t.state ? " (" + stateLabel(t.state) + ")" : "");
    })
    .join("\n");
}
