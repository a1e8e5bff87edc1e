"""Static lineage: what DAG code declares, read before it runs, published and compared between versions.

* :mod:`.extract` parses a folder of DAG files (Airflow's DagBag) and turns each task's declaration
  (``@lineage``, ``LineageMixin``, or plain ``inlets``/``outlets``) into an OpenLineage JobEvent: a job
  with its inputs and outputs and no run.
* :mod:`.publish` sends those JobEvents to the configured transport (``lineage-plus publish-static``),
  so the graph, the Lineage view and Marquez show a DAG's lineage before its first run.
* :mod:`.versions` reads two versions of a DAG folder (paths or git refs), each parsed in a process of
  its own; :mod:`.compare` diffs them, :mod:`.change_impact` weighs each change over the current lineage
  graph, :mod:`.render` writes the result as text, JSON or Markdown (``lineage-plus diff``).

This stage reads declarations (author/), emits through the delivery rules (deliver/) and asks the graph
(graph/); the CLI shows it. docs/static-lineage.md has the details.
"""
