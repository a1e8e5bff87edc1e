"""What one ``dbt`` invocation left in its target folder: the run results and the manifest, read once.

``dbt-ol`` (openlineage-dbt) builds its events from the same two files after dbt exits; the
:class:`~airflow_lineage_plus.dbt.dbt_events.DbtLineageTransport` reads them again, in the same process, for
what ``dbt-ol`` leaves out: the error dbt reported for a failed model, which tests and models dbt skipped
and why, and the table a source's logical name stands for. Files older than the transport (a previous
run's, or not yet written when ``dbt-ol --consume-structured-logs`` emits live) are ignored.
"""

from __future__ import annotations

import json
import os
import sys
from collections.abc import Iterator, Mapping
from typing import Any

import attr

#: Node statuses of dbt's run_results.json that mean the node did not do its work.
FAILED = frozenset({"error", "fail", "runtime error"})
SKIPPED = "skipped"
DEFAULT_TARGET = "target"


def target_path_of_command_line(argv: list[str] | None = None) -> str:
    """The target folder ``dbt-ol`` reads, from its own command line, as ``dbt-ol`` finds it.

    ``--target-path``, else ``DBT_TARGET_PATH``, else ``target-path`` of ``dbt_project.yml``, else
    ``target``; relative to ``--project-dir`` (default: the working directory).
    """
    args = list(sys.argv[1:] if argv is None else argv)
    project_dir = _option(args, "--project-dir") or os.environ.get("DBT_PROJECT_DIR") or "."
    target = (
        _option(args, "--target-path") or os.environ.get("DBT_TARGET_PATH") or _project_target(project_dir)
    )
    return os.path.join(os.path.abspath(project_dir), target or DEFAULT_TARGET)


def _option(args: list[str], name: str) -> str | None:
    for i, arg in enumerate(args):
        if arg == name and i + 1 < len(args):
            return args[i + 1]
        if arg.startswith(name + "="):
            return arg.split("=", 1)[1]
    return None


def _project_target(project_dir: str) -> str | None:
    try:
        import yaml

        with open(os.path.join(project_dir, "dbt_project.yml")) as handle:
            project = yaml.safe_load(handle) or {}
    except (OSError, ValueError, ImportError):
        return None
    value = project.get("target-path") if isinstance(project, dict) else None
    return str(value) if isinstance(value, str) and "{{" not in value else None


def _load(path: str, not_before: float) -> dict[str, Any] | None:
    try:
        if os.stat(path).st_mtime < not_before:
            return None
        with open(path, encoding="utf-8") as handle:
            data = json.load(handle)
    except (OSError, ValueError):
        return None
    return data if isinstance(data, dict) else None


@attr.frozen
class NodeResult:
    """One node's line in run_results.json."""

    unique_id: str
    status: str
    message: str | None


@attr.frozen
class DbtArtifacts:
    """The run results and the manifest of one dbt invocation."""

    command: str
    invocation_id: str
    results: Mapping[str, NodeResult]
    nodes: Mapping[str, Mapping[str, Any]]
    sources: Mapping[str, Mapping[str, Any]]
    parent_map: Mapping[str, list[str]]

    @classmethod
    def read(cls, target_path: str, not_before: float = 0.0) -> DbtArtifacts | None:
        """The artifacts in ``target_path``, or None when run_results.json is missing or older than
        ``not_before`` (a UNIX time)."""
        run_results = _load(os.path.join(target_path, "run_results.json"), not_before)
        manifest = _load(os.path.join(target_path, "manifest.json"), not_before)
        if run_results is None or manifest is None:
            return None
        results = {}
        for entry in run_results.get("results") or ():
            if isinstance(entry, dict) and isinstance(entry.get("unique_id"), str):
                message = entry.get("message")
                results[entry["unique_id"]] = NodeResult(
                    entry["unique_id"],
                    str(entry.get("status")),
                    message if isinstance(message, str) else None,
                )
        metadata = run_results.get("metadata") or {}
        return cls(
            command=str((run_results.get("args") or {}).get("which") or "build"),
            invocation_id=str(metadata.get("invocation_id") or ""),
            results=results,
            nodes=manifest.get("nodes") or {},
            sources=manifest.get("sources") or {},
            parent_map=manifest.get("parent_map") or {},
        )

    # -- what failed, what was skipped, and why ----------------------------------------------------------

    def status(self, unique_id: str) -> str | None:
        result = self.results.get(unique_id)
        return result.status if result is not None else None

    def failed(self) -> list[NodeResult]:
        return [result for result in self.results.values() if result.status in FAILED]

    def skipped_models(self) -> Iterator[Mapping[str, Any]]:
        """Manifest nodes of the models and snapshots dbt skipped (``dbt-ol`` emits nothing for them)."""
        for unique_id, result in self.results.items():
            node = self.nodes.get(unique_id)
            if result.status == SKIPPED and node and node.get("resource_type") in {"model", "snapshot"}:
                yield node

    def failed_ancestor(self, unique_id: str) -> str | None:
        """The nearest upstream node that failed in this invocation, or the failed test of an upstream
        node (``dbt build`` skips what depends on a node whose test failed): why dbt skipped ``unique_id``."""
        failed_tests: dict[str, str] = {}
        for test_id, result in sorted(self.results.items()):
            if test_id.startswith("test.") and result.status in FAILED:
                for parent in self.parent_map.get(test_id) or ():
                    failed_tests.setdefault(parent, test_id)
        seen = {unique_id}
        frontier = [unique_id]
        while frontier:
            following = []
            for node in frontier:
                for parent in sorted(self.parent_map.get(node) or ()):
                    if parent in seen:
                        continue
                    if self.status(parent) in FAILED:
                        return parent
                    if parent in failed_tests:
                        return failed_tests[parent]
                    seen.add(parent)
                    following.append(parent)
            frontier = following
        return None

    def tests_of(self, unique_id: str) -> dict[str, NodeResult]:
        """The tests attached to a model or source that ran in this invocation, by test name."""
        found = {}
        for test_id, result in self.results.items():
            node = self.nodes.get(test_id) or {}
            if node.get("resource_type") == "test" and _attached(node, self.parent_map) == unique_id:
                found[str(node.get("name"))] = result
        return found

    # -- names ------------------------------------------------------------------------------------------

    def source_tables(self) -> dict[str, str]:
        """``database.schema.name`` -> ``database.schema.identifier`` (lower-case) for every source whose
        table is not named like the source (``identifier:``): dbt-ol names such inputs by the logical name."""
        renames = {}
        for source in self.sources.values():
            name, identifier = source.get("name"), source.get("identifier")
            if not name or not identifier or name == identifier:
                continue
            prefix = ".".join(str(p) for p in (source.get("database"), source.get("schema")) if p)
            logical = f"{prefix}.{name}" if prefix else str(name)
            renames[logical.lower()] = f"{prefix}.{identifier}" if prefix else str(identifier)
        return renames


def _attached(test: Mapping[str, Any], parent_map: Mapping[str, list[str]]) -> str | None:
    """The model, seed or source whose aggregated test event carries a test's assertion: its last such
    parent, the rule dbt-ol groups assertions by."""
    found = None
    for parent in parent_map.get(str(test.get("unique_id"))) or ():
        if parent.startswith(("model.", "source.", "seed.")):
            found = parent
    return found
