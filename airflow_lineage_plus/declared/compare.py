"""What changes in the declared lineage between two versions of a DAG folder, and how bad each change is.

Both versions are lists of JobEvents (:mod:`.extract`), compared job by job (``namespace`` + ``name``,
so ``<dag_id>.<task_id>``):

=========================  ==========  ==========================================================
change                     severity    when
=========================  ==========  ==========================================================
``JOB_ADDED``              compatible  a task that declares lineage appears
``JOB_REMOVED``            breaking    a task disappears and it wrote datasets (compatible if it
                                       only read): what it wrote is no longer refreshed by it
``INPUT_ADDED/REMOVED``    compatible  a task reads a dataset more or no more
``OUTPUT_ADDED``           compatible  a task writes a dataset more
``OUTPUT_REMOVED``         breaking    a task no longer writes a dataset
``COLUMN_REMOVED``         breaking    a declared output loses a column
``TYPE_CHANGED``           breaking    a column of a declared output changes type
``COLUMN_ADDED``           compatible  a declared output gains a column
``COLUMN_LINEAGE_CHANGED`` compatible  a column of an output (in both versions) comes from other
                                       input columns (or transformations) than before
=========================  ==========  ==========================================================

Schema changes come from :func:`airflow_lineage_plus.graph.schema_diff.diff_fields` (the same rules as
``lineage-plus schema-diff``), on outputs of tasks present in both versions that declare a schema in both.
Besides the changes, the answer lists the datasets and edges that appear or disappear overall.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

import attr

from airflow_lineage_plus.deliver.serialize import plain
from airflow_lineage_plus.graph.schema_diff import BREAKING_KINDS, diff_fields
from airflow_lineage_plus.node_ids import dataset_id, job_id

BREAKING, COMPATIBLE = "breaking", "compatible"
Change = dict[str, Any]


@attr.frozen
class DeclaredJob:
    """One job's declaration, indexed: its inputs and outputs by dataset id (the dataset dicts)."""

    id: str
    inputs: dict[str, dict[str, Any]]
    outputs: dict[str, dict[str, Any]]

    def edges(self) -> set[tuple[str, str]]:
        return {(d, self.id) for d in self.inputs} | {(self.id, d) for d in self.outputs}


def index(events: Iterable[Any]) -> dict[str, DeclaredJob]:
    """Job id -> its declaration, from JobEvents (objects or JSON dicts)."""
    jobs: dict[str, DeclaredJob] = {}
    for event in map(plain, events):
        job = event["job"]
        key = job_id(job["namespace"], job["name"])
        jobs[key] = DeclaredJob(
            key,
            {dataset_id(d["namespace"], d["name"]): d for d in event.get("inputs") or ()},
            {dataset_id(d["namespace"], d["name"]): d for d in event.get("outputs") or ()},
        )
    return jobs


def compare(base: Iterable[Any], head: Iterable[Any]) -> dict[str, Any]:
    """The changes from ``base`` to ``head`` (JobEvents), in the JSON shape docs/static-lineage.md gives."""
    old, new = index(base), index(head)
    changes: list[Change] = []
    for key in sorted(new.keys() - old.keys()):
        job = new[key]
        changes.append(_job_change("JOB_ADDED", COMPATIBLE, job))
    for key in sorted(old.keys() - new.keys()):
        job = old[key]
        changes.append(_job_change("JOB_REMOVED", BREAKING if job.outputs else COMPATIBLE, job))
    for key in sorted(old.keys() & new.keys()):
        changes += _job_changes(old[key], new[key])
    old_edges = set().union(*(j.edges() for j in old.values()))
    new_edges = set().union(*(j.edges() for j in new.values()))
    old_sets, new_sets = _datasets(old_edges), _datasets(new_edges)
    return {
        "changes": changes,
        "summary": {
            BREAKING: sum(1 for c in changes if c["severity"] == BREAKING),
            COMPATIBLE: sum(1 for c in changes if c["severity"] == COMPATIBLE),
        },
        "datasets": {"added": sorted(new_sets - old_sets), "removed": sorted(old_sets - new_sets)},
        "edges": {"added": _edge_list(new_edges - old_edges), "removed": _edge_list(old_edges - new_edges)},
        "jobs": {"base": len(old), "head": len(new)},
    }


def _job_change(kind: str, severity: str, job: DeclaredJob) -> Change:
    return {
        "kind": kind,
        "severity": severity,
        "job": job.id,
        "inputs": sorted(job.inputs),
        "outputs": sorted(job.outputs),
    }


def _job_changes(old: DeclaredJob, new: DeclaredJob) -> list[Change]:
    changes: list[Change] = []
    for kind, severity, before, after in (
        ("INPUT", COMPATIBLE, old.inputs, new.inputs),
        ("OUTPUT", BREAKING, old.outputs, new.outputs),
    ):
        changes += [
            {"kind": f"{kind}_ADDED", "severity": COMPATIBLE, "job": new.id, "dataset": d}
            for d in sorted(after.keys() - before.keys())
        ]
        changes += [
            {"kind": f"{kind}_REMOVED", "severity": severity, "job": new.id, "dataset": d}
            for d in sorted(before.keys() - after.keys())
        ]
    for dataset in sorted(old.outputs.keys() & new.outputs.keys()):
        changes += _output_changes(new.id, dataset, old.outputs[dataset], new.outputs[dataset])
    return changes


def _output_changes(job: str, dataset: str, old: dict[str, Any], new: dict[str, Any]) -> list[Change]:
    """Schema and column-lineage changes of one output declared in both versions."""
    changes: list[Change] = []
    before, after = _schema(old), _schema(new)
    if before is not None and after is not None:
        for change in diff_fields(before, after):
            severity = BREAKING if change["kind"] in BREAKING_KINDS else COMPATIBLE
            changes.append({**change, "severity": severity, "job": job, "dataset": dataset})
    old_lineage, new_lineage = _column_lineage(old), _column_lineage(new)
    both = set(dict(before or ())) & set(dict(after or ())) if before and after else set()
    for column in sorted((old_lineage.keys() | new_lineage.keys()) & both):
        was, now = old_lineage.get(column, set()), new_lineage.get(column, set())
        if was != now:
            changes.append(
                {
                    "kind": "COLUMN_LINEAGE_CHANGED",
                    "severity": COMPATIBLE,
                    "job": job,
                    "dataset": dataset,
                    "column": column,
                    "added": sorted(now - was),
                    "removed": sorted(was - now),
                }
            )
    return changes


def _facet(dataset: dict[str, Any], key: str) -> dict[str, Any] | None:
    facet = (dataset.get("facets") or {}).get(key)
    return facet if isinstance(facet, dict) else None


def _schema(dataset: dict[str, Any]) -> list[tuple[str, str | None]] | None:
    facet = _facet(dataset, "schema")
    if facet is None or not isinstance(facet.get("fields"), list):
        return None
    return [(str(f["name"]), f.get("type")) for f in facet["fields"] if isinstance(f, dict) and "name" in f]


def _column_lineage(dataset: dict[str, Any]) -> dict[str, set[str]]:
    """Output column -> its sources, each ``namespace/name.field [TYPE/SUBTYPE]``."""
    facet = _facet(dataset, "columnLineage") or {}
    columns: dict[str, set[str]] = {}
    for column, spec in (facet.get("fields") or {}).items():
        sources = set()
        for item in (spec or {}).get("inputFields") or ():
            kinds = ",".join(
                "/".join(str(t.get(k)) for k in ("type", "subtype") if t.get(k))
                for t in item.get("transformations") or ()
            )
            source = f"{item.get('namespace')}/{item.get('name')}.{item.get('field')}"
            sources.add(f"{source} [{kinds}]" if kinds else source)
        columns[str(column)] = sources
    return columns


def _datasets(edges: set[tuple[str, str]]) -> set[str]:
    return {node for edge in edges for node in edge if node.startswith("dataset:")}


def _edge_list(edges: set[tuple[str, str]]) -> list[dict[str, str]]:
    return [{"origin": o, "destination": d} for o, d in sorted(edges)]
