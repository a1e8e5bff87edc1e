"""Validate OpenLineage events, facets included, against the official JSON Schemas.

Every schema is found by its ``$id``, the exact version an event or a ``$ref`` names: first in the
installed packages (this package's ``schemas/``, the provider's facets, openlineage-integration-common's
dbt facets) and ``tests/support/schemas``, then in ``OPENLINEAGE_SPEC_DIR``, the repository's copy
(``tests/support/spec/openlineage``), ``../shared/spec/openlineage`` and the per-user cache, which is
filled once by downloading the document from its ``$id`` URL (see ``spec_files.py``). Nothing else is
fetched from the network.

A version that is in none of those places is an error (:class:`SpecUnavailableError`, naming the ways to
get it): no other minor version stands in for it. The only exceptions are the documents listed, each with
its reason, in :data:`KNOWN_GAPS`; every use of one is counted (:func:`gaps_used`) and reported at the end
of the run. openlineage-dbt's ``dbt_model`` facet, whose producer publishes no schema, is checked against
the one this project writes (``tests/support/schemas/dbt-model-dataset-facet.json``).
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterable
from functools import cache
from pathlib import Path
from typing import Any

import jsonschema
from referencing import Registry, Resource
from referencing.jsonschema import DRAFT202012, UnknownDialect

from tests.support.assertion_count import record_check
from tests.support.spec_files import SpecPlaces, SpecUnavailableError, download, write_atomically

SPEC_URL_PREFIX = "https://openlineage.io/spec/"
PLACES = SpecPlaces.named(
    "openlineage",
    "The OpenLineage JSON Schemas",
    "OPENLINEAGE_SPEC_DIR",
    f"{SPEC_URL_PREFIX} (OpenLineage.json and facets/*.json, as in the OpenLineage repository's spec/)",
)
#: Documents that no copy of the spec reachable offline has, each answered by a named one, with the reason.
#: The tests fail on any other missing version; each use here is counted and printed at the end of the run.
KNOWN_GAPS: dict[str, tuple[str, str]] = {
    # openlineage-integration-common's dbt-version-run-facet.json references the 1-0-2 spec; its base facet
    # definitions (BaseFacet: required _producer and _schemaURL; RunFacet on it) are those of 2-0-2.
    "https://openlineage.io/spec/1-0-2/OpenLineage.json": (
        "https://openlineage.io/spec/2-0-2/OpenLineage.json",
        "the base facet definitions are unchanged since 1-0-2",
    ),
    # openlineage-python 1.54 writes DataQualityMetricsDatasetFacet 1-0-1 (it adds the optional captureDate);
    # the OpenLineage repository's spec/facets (and so ../shared) still has 1-0-0 only.
    "https://openlineage.io/spec/facets/1-0-1/DataQualityMetricsDatasetFacet.json": (
        "https://openlineage.io/spec/facets/1-0-0/DataQualityMetricsDatasetFacet.json",
        "1-0-1 adds only the optional captureDate, and is published on openlineage.io, not in the repository",
    ),
}
_gaps_used: dict[str, int] = {}
_validated: set[str] = set()  # digests of the distinct events validated in this process
#: This project's schemas of facets whose producer publishes none (openlineage-dbt's ``dbt_model``).
TEST_SCHEMAS = Path(__file__).resolve().parent / "schemas"

__all__ = [
    "KNOWN_GAPS",
    "SchemaStore",
    "SpecUnavailableError",
    "validate_event",
    "validate_events",
]


def validated_count() -> int:
    """How many distinct events were found valid in this process (``scripts/test.sh`` prints the sum)."""
    return len(_validated)


def gaps_used() -> dict[str, int]:
    """How often each :data:`KNOWN_GAPS` entry answered in this process."""
    return dict(_gaps_used)


def _package_dirs() -> list[Path]:
    import airflow.providers.openlineage as provider

    import airflow_lineage_plus

    dirs = [
        Path(airflow_lineage_plus.__file__).parent / "schemas",
        Path(provider.__file__).parent / "facets",
        TEST_SCHEMAS,
    ]
    try:  # openlineage-integration-common ships the schemas of dbt facets (dbt_node, dbt_run, dbt_version)
        import openlineage.common.schema as common_schemas
    except ImportError:
        return dirs
    return [*dirs, Path(common_schemas.__file__).parent]


class SchemaStore:
    """OpenLineage schema documents by ``$id``, from local folders, then downloaded into the cache."""

    def __init__(
        self,
        places: SpecPlaces = PLACES,
        mirror: str = SPEC_URL_PREFIX,
        package_dirs: list[Path] | None = None,
    ) -> None:
        self.places = places
        self.mirror = (
            mirror  # where ``https://openlineage.io/spec/...`` is downloaded from (tests use a local one)
        )
        self.package_dirs = package_dirs
        self.downloaded: list[str] = []
        self._docs: dict[str, dict[str, Any]] | None = None
        self._failed: dict[str, str] = {}
        self.registry: Registry[Any] = Registry(retrieve=self._resource)  # type: ignore[call-arg]
        self._registry_crawled: Registry[Any] | None = None
        self._validators: dict[str, jsonschema.protocols.Validator] = {}

    def _index(self) -> dict[str, dict[str, Any]]:
        if self._docs is None:
            docs: dict[str, dict[str, Any]] = {}
            folders = (_package_dirs() if self.package_dirs is None else self.package_dirs) + list(
                self.places.local_dirs()
            )
            for folder in folders:
                for path in sorted(folder.rglob("*.json")):
                    try:
                        doc = json.loads(path.read_text())
                    except ValueError:
                        continue
                    if isinstance(doc, dict) and isinstance(doc.get("$id"), str):
                        docs.setdefault(doc["$id"], doc)
            self._docs = docs
        return self._docs

    def document(self, uri: str) -> dict[str, Any]:
        """The schema whose ``$id`` is ``uri`` (fragment ignored); raises :class:`SpecUnavailableError`."""
        uri = uri.split("#", 1)[0]
        docs = self._index()
        found = docs.get(uri) or self._download(uri)
        if found is not None:
            docs[uri] = found
            return found
        gap = KNOWN_GAPS.get(uri)
        if gap is not None and self.package_dirs is None:  # the real store only: tests of it see no gaps
            _gaps_used[uri] = _gaps_used.get(uri, 0) + 1
            return self.document(gap[0])
        raise self.places.unavailable(uri, self._failed.get(uri, "it is not an OpenLineage spec URL"))

    def published_elsewhere(self, uri: str) -> dict[str, Any] | None:
        """A producer's own facet schema (not the spec's) by file name, when its ``_schemaURL`` names
        another copy than its ``$id`` (openlineage-dbt: a github.com ``tree`` page; the schema in
        openlineage-integration-common says raw.githubusercontent.com)."""
        if uri.startswith(SPEC_URL_PREFIX) or uri in self._index():
            return None
        name = "/" + uri.rsplit("/", 1)[-1]
        found = [doc for doc_id, doc in self._index().items() if doc_id.endswith(name)]
        return found[0] if len(found) == 1 else None

    def _download(self, uri: str) -> dict[str, Any] | None:
        if not uri.startswith(SPEC_URL_PREFIX) or uri in self._failed:
            return None
        relative = uri[len(SPEC_URL_PREFIX) :]
        url = self.mirror + relative
        try:
            data = download(url)
            doc = json.loads(data)
        except (OSError, ValueError) as exc:
            self._failed[uri] = f"downloading {url} failed: {exc}"
            return None
        if not isinstance(doc, dict) or doc.get("$id") != uri:
            self._failed[uri] = f"{url} answered a document whose $id is not {uri}"
            return None
        write_atomically(self.places.cache / relative, data)
        self.downloaded.append(uri)
        return doc

    def _resource(self, uri: str) -> Resource[Any]:
        """A schema as a resource; ``"$schema": "http://json-schema.org/schema#"`` (the legacy "latest
        draft", in dbt-run-run-facet.json) is read as the draft every other schema here uses, 2020-12."""
        doc = self.document(uri)
        try:
            return Resource.from_contents(doc)
        except UnknownDialect:
            return DRAFT202012.create_resource(doc)

    def validator(self, schema: dict[str, Any]) -> jsonschema.protocols.Validator:
        """A validator of ``schema`` over every schema found so far (one per ``$ref``, kept: validating
        thousands of events resolves each document once, not once per event)."""
        ref = schema.get("$ref") if len(schema) == 1 else None
        found = self._validators.get(ref) if isinstance(ref, str) else None
        if found is None:
            cls = jsonschema.validators.validator_for(schema)
            found = cls(schema, registry=self._crawled(), format_checker=cls.FORMAT_CHECKER)
            if isinstance(ref, str):
                self._validators[ref] = found
        return found

    def _crawled(self) -> Registry[Any]:
        """:attr:`registry` with every local document in it, crawled once (a document found later, in the
        cache or downloaded, is still retrieved through :meth:`_resource`)."""
        if self._registry_crawled is None:
            resources = [(uri, self._resource(uri)) for uri in self._index()]
            self._registry_crawled = self.registry.with_resources(resources).crawl()
        return self._registry_crawled


@cache
def default_store() -> SchemaStore:
    return SchemaStore()


def client_spec_uri() -> str:
    """The ``$id`` of the spec version the installed OpenLineage client writes events for."""
    from openlineage.client.event_v2 import RunEvent

    return str(RunEvent._get_schema()).split("#", 1)[0]


def require_spec(store: SchemaStore | None = None) -> str:
    """Find (or download) the spec the installed client writes; raises :class:`SpecUnavailableError`."""
    uri = client_spec_uri()
    (store or default_store()).document(uri)
    return uri


def _envelope(event: dict[str, Any], store: SchemaStore) -> dict[str, Any]:
    """The schema of the event itself: its kind in the spec version the event names."""
    named = str(event.get("schemaURL") or "").split("#", 1)[0]
    spec = store.document(named if named.startswith(SPEC_URL_PREFIX) else client_spec_uri())
    kind = "RunEvent"
    if "dataset" in event and "run" not in event:
        kind = "DatasetEvent"
    elif "job" in event and "run" not in event:
        kind = "JobEvent"
    defs = "$defs" if "$defs" in spec else "definitions"
    return {"$ref": f"{spec['$id']}#/{defs}/{kind}"}


def _facet_schema(schema_url: str, key: str, store: SchemaStore) -> dict[str, Any]:
    """The sub-schema a facet's ``_schemaURL`` names.

    A URL without a ``#/$defs/...`` fragment (openlineage-dbt's facets) names a document whose root
    describes the facets map (``{"dbt_node": {"$ref": "#/$defs/DbtNodeJobFacet"}}``): the facet is checked
    against the definition its key points to.
    """
    base, _, fragment = schema_url.partition("#")
    doc = store.published_elsewhere(base) or store.document(base)
    if not fragment:
        ref = ((doc.get("properties") or {}).get(key) or {}).get("$ref")
        if not isinstance(ref, str) or not ref.startswith("#"):
            return doc  # the document is the facet's own schema
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


def validate_event(event: dict[str, Any], store: SchemaStore | None = None) -> None:
    """Raise ``jsonschema.ValidationError`` unless the event and every facet in it are valid."""
    store = store or default_store()
    store.validator(_envelope(event, store)).validate(event)
    for where, key, facet in _facets(event):
        if not isinstance(facet, dict) or "_schemaURL" not in facet:
            raise AssertionError(f"{where}: facet {key!r} has no _schemaURL")
        try:
            store.validator(_facet_schema(facet["_schemaURL"], key, store)).validate(facet)
        except jsonschema.ValidationError as exc:
            raise AssertionError(f"{where}: facet {key!r} is invalid: {exc.message}") from exc
    _validated.add(hashlib.sha256(json.dumps(event, sort_keys=True).encode()).hexdigest())
    record_check()


def validate_events(events: Iterable[dict[str, Any]], store: SchemaStore | None = None) -> int:
    count = 0
    for event in events:
        validate_event(event, store)
        count += 1
    return count
