"""Node ids in Marquez's form: ``dataset:<namespace>:<name>`` and ``job:<namespace>:<name>``."""

from __future__ import annotations

import re

DATASET = "DATASET"
JOB = "JOB"

# A namespace that is a URI keeps its own colons: scheme://authority[:port]
_URI_NAMESPACE = re.compile(r"^([A-Za-z][A-Za-z0-9+.\-]*://[^/:]*(?::\d+)?(?:/[^:]*)?):")


def dataset_id(namespace: str, name: str) -> str:
    return f"dataset:{namespace}:{name}"


def job_id(namespace: str, name: str) -> str:
    return f"job:{namespace}:{name}"


def node_type(node_id: str) -> str:
    """DATASET or JOB; ValueError for anything else."""
    if node_id.startswith("dataset:"):
        return DATASET
    if node_id.startswith("job:"):
        return JOB
    raise ValueError(f"not a node id (expected 'dataset:NS:NAME' or 'job:NS:NAME'): {node_id!r}")


def split_node_id(node_id: str) -> tuple[str, str, str]:
    """(type, namespace, name) of a node id.

    Namespaces may contain colons (``postgres://host:5432``); a URI-shaped namespace is taken as
    ``scheme://authority[:port][/path]`` (embedded databases such as ``duckdb:///data/wh.duckdb`` keep
    a path in the namespace), otherwise the namespace ends at the first colon.
    """
    kind = node_type(node_id)
    rest = node_id.split(":", 1)[1]
    match = _URI_NAMESPACE.match(rest)
    if match:
        return kind, match.group(1), rest[match.end() :]
    namespace, sep, name = rest.partition(":")
    if not sep or not name:
        raise ValueError(f"node id has no name part: {node_id!r}")
    return kind, namespace, name
