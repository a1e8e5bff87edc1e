"""Hold the fake Marquez to the real contract: Marquez's openapi.yml component schemas and its examples."""

from __future__ import annotations

import json
import re
from functools import cache
from pathlib import Path
from typing import Any

import yaml
from jsonschema import Draft7Validator
from referencing import Registry, Resource
from referencing.jsonschema import DRAFT7

SPEC = Path(__file__).resolve().parents[2].parent / "shared" / "spec" / "marquez"
_URI = "urn:marquez-openapi"

# response schema of each GET route (the openapi paths, with {params} as regexes)
ROUTES = [
    (r"/api/v1/lineage", "LineageGraph"),
    (r"/api/v1/namespaces", "NamespaceList"),
    (r"/api/v1/namespaces/[^/]+/datasets", "DatasetList"),
    (r"/api/v1/namespaces/[^/]+/datasets/[^/]+", "Dataset"),
    (r"/api/v1/namespaces/[^/]+/datasets/[^/]+/versions", "DatasetVersionList"),
    (r"/api/v1/namespaces/[^/]+/jobs", "JobList"),
    (r"/api/v1/namespaces/[^/]+/jobs/[^/]+", "Job"),
    (r"/api/v1/namespaces/[^/]+/jobs/[^/]+/runs", "RunList"),
    (r"/api/v1/namespaces/[^/]+/jobs/[^/]+/versions", "JobVersionList"),
    (r"/api/v1/jobs/runs/[^/]+", "Run"),
    (r"/api/v1/search", "SearchResultList"),
]


@cache
def _registry() -> tuple[Registry, dict[str, Any]]:
    document = _without_empty_types(yaml.safe_load((SPEC / "openapi.yml").read_text()))
    return Registry().with_resource(_URI, Resource(document, specification=DRAFT7)), document


def _without_empty_types(value: Any) -> Any:
    """openapi.yml has ``type:`` with no value (in SearchResult): drop those, they check nothing."""
    if isinstance(value, dict):
        return {k: _without_empty_types(v) for k, v in value.items() if not (k == "type" and v is None)}
    if isinstance(value, list):
        return [_without_empty_types(v) for v in value]
    return value


def validate(schema_name: str, body: Any) -> None:
    registry, _ = _registry()
    validator = Draft7Validator({"$ref": f"{_URI}#/components/schemas/{schema_name}"}, registry=registry)
    errors = sorted(validator.iter_errors(body), key=lambda e: list(e.path))
    if errors:
        raise AssertionError(
            f"{schema_name}: " + "; ".join(f"{list(e.path)}: {e.message}" for e in errors[:5])
        )


def validate_response(path: str, body: Any) -> str:
    """Validate one answer of the fake against the schema of its route; returns the schema name."""
    for pattern, name in ROUTES:
        if re.fullmatch(pattern, path):
            if name == "LineageGraph":
                _validate_graph(body)
            else:
                validate(name, body)
            return name
    if path == "/api/v1/column-lineage":
        _validate_column_graph(body)
        return "column-lineage"
    raise AssertionError(f"no contract known for {path}")


def _validate_graph(body: dict[str, Any]) -> None:
    # GraphNode.data is oneOf Dataset/Job, and both accept any object, so plain jsonschema oneOf can never
    # pass: check the node without data, then data against the schema its node type names.
    for node in body["graph"]:
        validate("GraphNode", {k: v for k, v in node.items() if k != "data"})
        validate("Dataset" if node["type"] == "DATASET" else "Job", node["data"])
        assert node["data"]["id"] == {"namespace": node["data"]["namespace"], "name": node["data"]["name"]}
    validate("LineageGraph", {"graph": [{k: v for k, v in n.items() if k != "data"} for n in body["graph"]]})


def _validate_column_graph(body: dict[str, Any]) -> None:
    """The spec has no DATASET_FIELD node schema: hold nodes to the shape of column_lineage__node.json."""
    example = json.loads((SPEC / "examples" / "column_lineage__node.json").read_text())
    for node in body["graph"]:
        assert set(node) == set(example), set(node) ^ set(example)
        assert node["type"] == example["type"] and node["id"].startswith("datasetField:")
        assert set(example["data"]) <= set(node["data"]), set(example["data"]) - set(node["data"])
        for item in node["data"]["inputFields"]:
            assert set(example["data"]["inputFields"][0]) <= set(item)
        for edge in node["inEdges"] + node["outEdges"]:
            assert set(edge) == {"origin", "destination"}
