"""Hold the fake Marquez to the real contract: Marquez's openapi.yml component schemas, made strict by its
examples, plus the invariants every Marquez answer keeps.

The spec's schemas alone check little (they list properties but almost never require any), so each answer
is validated against a strict reading of them:

* every property the spec's *example* of a model shows must be there: Marquez serialises every field of
  its models, ``null`` where unknown (``lineage__node.json`` carries ``"lastModifiedAt": null``);
* ``null`` is accepted for a property (Marquez leaves unknown fields unset), never for the identity and
  state fields (:data:`NEVER_NULL`);
* where the spec contradicts its own example (``DatasetVersion.tags`` is typed a string, the example and
  Marquez send a list), the example's JSON type wins; ``Run`` is ``IncompleteRun`` *and* its extension
  (the spec's ``anyOf`` would let a run with any state through);
* enums (run states, node types, search result types) and formats (``date-time``, ``uuid``) are checked;
* and :func:`validate_response` adds what a schema cannot say: ids agree with the names in the body,
  edges touch the node that lists them and name nodes of the graph, ``durationMs`` is ``endedAt`` minus
  ``startedAt``, a version's id names its version.
"""

from __future__ import annotations

import copy
import json
import re
from datetime import datetime
from functools import cache
from typing import Any

import yaml
from jsonschema import Draft7Validator, FormatChecker, ValidationError
from referencing import Registry, Resource
from referencing.jsonschema import DRAFT7

from tests.support.marquez_spec import spec_file

_URI = "urn:marquez-openapi"
NEVER_NULL = frozenset(
    {"id", "name", "namespace", "type", "state", "createdAt", "nodeId", "version", "graph"}
)

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


#: What a lineage graph node's ``data`` carries (Marquez's DatasetData / JobData, lighter than Dataset / Job).
JOB_NODE_DATA = frozenset({"id", "type", "name", "createdAt", "updatedAt", "namespace", "inputs", "outputs"})


@cache
def _registry(strict: bool = True) -> Registry[Any]:
    document = _without_empty_types(yaml.safe_load(spec_file("openapi.yml").read_text()))
    schemas = document["components"]["schemas"]
    schemas["Run"]["allOf"] = schemas["Run"].pop("anyOf")
    for schema in schemas.values():
        _make_strict(schema, require_example=strict)
    return Registry().with_resource(_URI, Resource(document, specification=DRAFT7))  # type: ignore[call-arg]


def _without_empty_types(value: Any) -> Any:
    """openapi.yml has ``type:`` with no value (in SearchResult): drop those, they check nothing."""
    if isinstance(value, dict):
        return {k: _without_empty_types(v) for k, v in value.items() if not (k == "type" and v is None)}
    if isinstance(value, list):
        return [_without_empty_types(v) for v in value]
    return value


def _make_strict(schema: Any, require_example: bool = True) -> None:
    """Require what the schema's example shows; allow ``null`` only where Marquez leaves a field unset."""
    if not isinstance(schema, dict):
        return
    for key in ("allOf", "anyOf", "oneOf"):
        for member in schema.get(key) or []:
            _make_strict(member, require_example)
    _make_strict(schema.get("items"), require_example)
    properties = schema.get("properties")
    if not isinstance(properties, dict):
        return
    example = schema.get("example")
    required = set(schema.get("required") or [])
    example = example if isinstance(example, dict) else {}
    if require_example:
        schema["required"] = sorted(required | (set(example) & set(properties)))
    for name, sub in list(properties.items()):
        _make_strict(sub, require_example)
        shown = _json_type(example.get(name))
        if isinstance(sub, dict) and shown and isinstance(sub.get("type"), str) and sub["type"] != shown:
            sub = {**sub, "type": shown}
        if name not in NEVER_NULL:
            sub = {"anyOf": [{"type": "null"}, copy.deepcopy(sub)]}
        properties[name] = sub


def _json_type(value: Any) -> str | None:
    kinds = ((bool, "boolean"), (int, "integer"), (float, "number"), (str, "string"), (list, "array"))
    return next(
        (name for kind, name in kinds if isinstance(value, kind)),
        "object" if isinstance(value, dict) else None,
    )


#: every format jsonschema knows (uuid among them); date-time checked here, as jsonschema checks it only
#: when the optional rfc3339-validator is installed (it is not in the Python 3.10 run's venv)
_FORMATS = FormatChecker()


@_FORMATS.checks("date-time", raises=ValueError)
def _date_time(value: object) -> bool:
    # a date and a time (``_moment`` raises ValueError on anything else); non-strings are the type's business
    return not isinstance(value, str) or ("T" in value.upper() and _moment(value) is not None)


def validate(schema_name: str, body: Any, strict: bool = True) -> None:
    validator = Draft7Validator(
        {"$ref": f"{_URI}#/components/schemas/{schema_name}"},
        registry=_registry(strict),
        format_checker=_FORMATS,
    )
    errors = sorted(validator.iter_errors(body), key=lambda e: list(e.path))
    if errors:
        found = [_cause(e) for e in errors[:5]]
        raise AssertionError(
            f"{schema_name}: " + "; ".join(f"{list(e.absolute_path)}: {e.message}" for e in found)
        )


def _cause(error: ValidationError) -> ValidationError:
    """Inside an ``anyOf`` (the null allowance, ``Run``), the deepest error that is not "not null"."""
    while error.context:
        real = [c for c in error.context if not (c.validator == "type" and c.validator_value == "null")]
        error = max(real or error.context, key=lambda c: len(c.absolute_path))
    return error


def validate_response(path: str, body: Any) -> str:
    """Validate one answer of the fake against the schema of its route; returns the schema name."""
    for pattern, name in ROUTES:
        if re.fullmatch(pattern, path):
            if name == "LineageGraph":
                _validate_graph(body)
            else:
                validate(name, body)
                _check_invariants(body)
            return name
    if path == "/api/v1/column-lineage":
        _validate_column_graph(body)
        return "column-lineage"
    raise AssertionError(f"no contract known for {path}")


def _check_invariants(value: Any) -> None:
    """Ids agree with names, durations with times, version ids with versions, anywhere in an answer."""
    if isinstance(value, list):
        for item in value:
            _check_invariants(item)
        return
    if not isinstance(value, dict):
        return
    key = value.get("id")
    if isinstance(key, dict) and {"namespace", "name"} <= set(value):
        assert (key["namespace"], key["name"]) == (value["namespace"], value["name"]), value
        if "version" in key:
            assert key["version"] == value["version"], value
    if value.get("startedAt") and value.get("endedAt") and "durationMs" in value:
        took = _moment(value["endedAt"]) - _moment(value["startedAt"])
        assert value["durationMs"] == int(took.total_seconds() * 1000), value
    for item in value.values():
        _check_invariants(item)


def _moment(text: str) -> datetime:
    return datetime.fromisoformat(text.replace("Z", "+00:00"))


def _validate_graph(body: dict[str, Any]) -> None:
    # GraphNode.data is oneOf Dataset/Job, and both accept any object, so plain jsonschema oneOf can never
    # pass: check the node without data, then data against the schema its node type names.
    ids = [node["id"] for node in body["graph"]]
    assert len(ids) == len(set(ids)), f"a node listed twice: {ids}"
    dataset_data = set(json.loads(spec_file("examples/lineage__node.json").read_text())["data"])
    for node in body["graph"]:
        validate("GraphNode", {k: v for k, v in node.items() if k != "data"})
        data = node["data"]
        validate("Dataset" if node["type"] == "DATASET" else "Job", data, strict=False)
        missing = (dataset_data if node["type"] == "DATASET" else JOB_NODE_DATA) - set(data)
        assert not missing, f"{node['id']}: data lacks {sorted(missing)}"
        _check_invariants(data)
        assert node["id"] == f"{node['type'].lower()}:{data['namespace']}:{data['name']}", node["id"]
        assert all(edge["destination"] == node["id"] and edge["origin"] in ids for edge in node["inEdges"])
        assert all(edge["origin"] == node["id"] and edge["destination"] in ids for edge in node["outEdges"])
    validate("LineageGraph", {"graph": [{k: v for k, v in n.items() if k != "data"} for n in body["graph"]]})


def _validate_column_graph(body: dict[str, Any]) -> None:
    """The spec has no DATASET_FIELD node schema: hold nodes to the shape of column_lineage__node.json."""
    example = json.loads(spec_file("examples/column_lineage__node.json").read_text())
    for node in body["graph"]:
        assert set(node) == set(example), set(node) ^ set(example)
        assert node["type"] == example["type"] and node["id"].startswith("datasetField:")
        assert set(example["data"]) <= set(node["data"]), set(example["data"]) - set(node["data"])
        for item in node["data"]["inputFields"]:
            assert set(example["data"]["inputFields"][0]) <= set(item)
        for edge in node["inEdges"] + node["outEdges"]:
            assert set(edge) == {"origin", "destination"}
