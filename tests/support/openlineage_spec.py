"""Validate OpenLineage events, facets included, against the official JSON Schemas on disk.

Schemas come from ``../shared/spec/openlineage/`` (the spec and its standard facets), from the
OpenLineage provider's own facet schemas, and from the schemas this package ships. ``$id`` references
are resolved from those files through a ``referencing`` registry; nothing is fetched from the network:
an unknown reference raises instead.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from functools import cache
from pathlib import Path
from typing import Any

import jsonschema
from referencing import Registry, Resource
from referencing.exceptions import NoSuchResource
from referencing.jsonschema import DRAFT202012, UnknownDialect

REPO = Path(__file__).resolve().parents[2]
SPEC_DIR = REPO.parent / "shared" / "spec" / "openlineage"


#: Older spec versions some producers' facet schemas still reference (openlineage-integration-common's
#: dbt-version-run-facet.json: 1-0-2). Their base facet definitions (``BaseFacet``: required ``_producer``
#: and ``_schemaURL``; ``RunFacet``/``JobFacet``/``DatasetFacet`` built on it) are the same as in the spec on
#: disk, which answers for them.
SPEC_ALIASES = ("https://openlineage.io/spec/1-0-2/OpenLineage.json",)
#: Facets whose producer publishes no schema at all, checked against the spec's base facet definition:
#: openlineage-dbt's ``dbt_model`` dataset facet names a dbt-model-dataset-facet.json that exists neither in
#: its package nor in the OpenLineage repository.
WITHOUT_PUBLISHED_SCHEMA = {"dbt-model-dataset-facet.json": "DatasetFacet"}


def _schema_files() -> list[Path]:
    import airflow.providers.openlineage as provider

    import airflow_lineage_plus

    dirs = [
        SPEC_DIR,
        SPEC_DIR / "facets",
        Path(provider.__file__).parent / "facets",
        Path(airflow_lineage_plus.__file__).parent / "schemas",
    ]
    files = [path for folder in dirs for path in sorted(folder.glob("*.json"))]
    try:  # openlineage-integration-common ships the schemas of dbt facets (dbt_node, dbt_run, dbt_version)
        import openlineage.common.schema as common_schemas
    except ImportError:
        return files
    return files + sorted(Path(common_schemas.__file__).parent.glob("dbt-*.json"))


@cache
def _schemas() -> tuple[dict[str, dict[str, Any]], dict[str, dict[str, Any]]]:
    """All schema documents keyed by their ``$id`` and by file name."""
    by_id: dict[str, dict[str, Any]] = {}
    by_file: dict[str, dict[str, Any]] = {}
    for path in _schema_files():
        doc = json.loads(path.read_text())
        if "$id" not in doc:
            continue
        by_id[doc["$id"]] = doc
        by_file[path.name] = doc
    return by_id, by_file


def _resource(doc: dict[str, Any]) -> Resource[Any]:
    """A schema document as a resource; ``"$schema": "http://json-schema.org/schema#"`` (the legacy "latest
    draft", in dbt-run-run-facet.json) is read as the draft every other schema here uses, 2020-12."""
    try:
        return Resource.from_contents(doc)
    except UnknownDialect:
        return DRAFT202012.create_resource(doc)


def _no_network(uri: str) -> Resource[Any]:
    raise NoSuchResource(ref=uri)


@cache
def registry() -> Registry[Any]:
    by_id, by_file = _schemas()
    resources = [(uri, _resource(doc)) for uri, doc in by_id.items()]
    spec = Resource.from_contents(by_file["OpenLineage.json"])
    resources += [(alias, spec) for alias in SPEC_ALIASES]
    return Registry(retrieve=_no_network).with_resources(resources)  # type: ignore[call-arg]


def _validator(schema: dict[str, Any]) -> jsonschema.protocols.Validator:
    cls = jsonschema.validators.validator_for(schema)
    return cls(schema, registry=registry(), format_checker=cls.FORMAT_CHECKER)


def _facet_schema(schema_url: str, key: str) -> dict[str, Any]:
    """The sub-schema a facet's ``_schemaURL`` names, found in the local files.

    A URL without a ``#/$defs/...`` fragment (openlineage-dbt's facets) names a document whose root
    describes the facets map (``{"dbt_node": {"$ref": "#/$defs/DbtNodeJobFacet"}}``): the facet is checked
    against the definition its key points to.
    """
    by_id, by_file = _schemas()
    base, _, fragment = schema_url.partition("#")
    unpublished = WITHOUT_PUBLISHED_SCHEMA.get(base.rsplit("/", 1)[-1])
    if unpublished is not None and base not in by_id:
        return {"$ref": f"{by_file['OpenLineage.json']['$id']}#/$defs/{unpublished}"}
    doc = by_id.get(base) or by_file.get(base.rsplit("/", 1)[-1])
    if doc is None:
        raise AssertionError(f"no local schema for _schemaURL {schema_url!r}")
    if not fragment:
        ref = ((doc.get("properties") or {}).get(key) or {}).get("$ref")
        if not isinstance(ref, str) or not ref.startswith("#"):
            raise AssertionError(f"_schemaURL {schema_url!r} has no fragment and its schema no {key!r}")
        fragment = ref[1:]
    return {"$ref": f"{doc['$id']}#{fragment}"}


def _facets(event: dict[str, Any]) -> Iterable[tuple[str, str, dict[str, Any]]]:
    run = event.get("run") or {}
    job = event.get("job") or {}
    for key, facet in (run.get("facets") or {}).items():
        yield "run", key, facet
    for key, facet in (job.get("facets") or {}).items():
        yield "job", key, facet
    datasets = list(event.get("inputs") or []) + list(event.get("outputs") or [])
    if "dataset" in event:
        datasets.append(event["dataset"])
    for dataset in datasets:
        where = f"dataset {dataset.get('namespace')}/{dataset.get('name')}"
        for group in ("facets", "inputFacets", "outputFacets"):
            for key, facet in (dataset.get(group) or {}).items():
                yield where, key, facet


def validate_event(event: dict[str, Any]) -> None:
    """Raise ``jsonschema.ValidationError`` unless the event and every facet in it are valid."""
    _, by_file = _schemas()
    spec = by_file["OpenLineage.json"]
    kind = "RunEvent"
    if "dataset" in event and "run" not in event:
        kind = "DatasetEvent"
    elif "job" in event and "run" not in event:
        kind = "JobEvent"
    _validator({"$ref": f"{spec['$id']}#/$defs/{kind}"}).validate(event)
    for where, key, facet in _facets(event):
        if not isinstance(facet, dict) or "_schemaURL" not in facet:
            raise AssertionError(f"{where}: facet {key!r} has no _schemaURL")
        try:
            _validator(_facet_schema(facet["_schemaURL"], key)).validate(facet)
        except jsonschema.ValidationError as exc:
            raise AssertionError(f"{where}: facet {key!r} is invalid: {exc.message}") from exc


def validate_events(events: Iterable[dict[str, Any]]) -> int:
    count = 0
    for event in events:
        validate_event(event)
        count += 1
    return count
