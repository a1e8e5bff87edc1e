"""The tests find the OpenLineage and Marquez specs without ``../shared`` or a network: from
``OPENLINEAGE_SPEC_DIR`` / ``MARQUEZ_SPEC_DIR``, the repository's own copy (``tests/support/spec``),
``../shared``, or a per-user cache filled once by downloading the exact files (here from a local HTTP server
standing in for openlineage.io and GitHub); with none, one message names the ways. A fresh clone offline
validates with its copy, and without the copy only the tests that validate fail, with that message."""

from __future__ import annotations

import hashlib
import json
import os
import re
import shutil
import socket
import subprocess
import sys
import threading
from collections import Counter
from collections.abc import Iterator
from functools import partial
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest

from tests.support import marquez_spec
from tests.support.openlineage_spec import (
    KNOWN_GAPS,
    SchemaStore,
    client_spec_uri,
    default_store,
    validate_event,
)
from tests.support.spec_files import REPO_SPEC as SPEC_COPY
from tests.support.spec_files import SpecPlaces, SpecUnavailableError

SPEC = "https://openlineage.io/spec/9-9-9/OpenLineage.json"
FACET = "https://openlineage.io/spec/facets/1-0-1/ThingRunFacet.json"
DOCS: dict[str, dict[str, Any]] = {
    "9-9-9/OpenLineage.json": {
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "$id": SPEC,
        "$defs": {
            "RunEvent": {
                "type": "object",
                "required": ["eventType", "run"],
                "properties": {"eventType": {"enum": ["START", "COMPLETE"]}, "run": {"type": "object"}},
            },
            "RunFacet": {"type": "object", "required": ["_producer", "_schemaURL"]},
        },
    },
    "facets/1-0-1/ThingRunFacet.json": {
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "$id": FACET,
        "$defs": {
            "ThingRunFacet": {
                "allOf": [
                    {"$ref": f"{SPEC}#/$defs/RunFacet"},
                    {"type": "object", "required": ["count"], "properties": {"count": {"type": "integer"}}},
                ]
            }
        },
    },
}


def _event(count: object = 3, facet: str = FACET) -> dict[str, Any]:
    thing = {"_producer": "p", "_schemaURL": f"{facet}#/$defs/ThingRunFacet", "count": count}
    return {"schemaURL": f"{SPEC}#/$defs/RunEvent", "eventType": "START", "run": {"facets": {"thing": thing}}}


def _write_tree(root: Path, docs: dict[str, dict[str, Any]]) -> Path:
    for relative, doc in docs.items():
        (root / relative).parent.mkdir(parents=True, exist_ok=True)
        (root / relative).write_text(json.dumps(doc))
    return root


class _Server:
    """Serves a folder over HTTP on 127.0.0.1 and records the paths asked for."""

    def __init__(self, root: Path) -> None:
        self.paths: list[str] = []
        server = self

        class Handler(SimpleHTTPRequestHandler):
            def log_message(self, format: str, *args: Any) -> None:
                server.paths.append(self.path)

        self._httpd = ThreadingHTTPServer(("127.0.0.1", 0), partial(Handler, directory=str(root)))
        threading.Thread(target=self._httpd.serve_forever, daemon=True).start()
        self.url = f"http://127.0.0.1:{self._httpd.server_address[1]}/"

    def stop(self) -> None:
        self._httpd.shutdown()
        self._httpd.server_close()


@pytest.fixture
def mirror(tmp_path: Path) -> Iterator[_Server]:
    server = _Server(_write_tree(tmp_path / "published", DOCS))
    yield server
    server.stop()


def _closed_url() -> str:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return f"http://127.0.0.1:{sock.getsockname()[1]}/"


def _places(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> SpecPlaces:
    monkeypatch.delenv("TEST_SPEC_DIR", raising=False)
    return SpecPlaces(
        "The test schemas", "TEST_SPEC_DIR", tmp_path / "no-shared", tmp_path / "cache", "the web"
    )


def test_schemas_missing_locally_are_downloaded_once_by_their_id_and_then_read_from_the_cache(
    tmp_path: Path, mirror: _Server, monkeypatch: pytest.MonkeyPatch
) -> None:
    places = _places(tmp_path, monkeypatch)
    first = SchemaStore(places, mirror=mirror.url, package_dirs=[])
    validate_event(_event(), first)
    assert sorted(first.downloaded) == [SPEC, FACET]
    assert sorted(mirror.paths) == ["/9-9-9/OpenLineage.json", "/facets/1-0-1/ThingRunFacet.json"]
    assert json.loads((places.cache / "facets/1-0-1/ThingRunFacet.json").read_text())["$id"] == FACET
    mirror.stop()
    offline = SchemaStore(places, mirror=_closed_url(), package_dirs=[])
    validate_event(_event(), offline)
    assert offline.downloaded == []
    with pytest.raises(AssertionError, match="facet 'thing' is invalid"):
        validate_event(_event(count="three"), offline)


def test_the_configured_folder_is_used_first_and_nothing_is_downloaded(
    tmp_path: Path, mirror: _Server, monkeypatch: pytest.MonkeyPatch
) -> None:
    places = _places(tmp_path, monkeypatch)
    monkeypatch.setenv("TEST_SPEC_DIR", str(_write_tree(tmp_path / "configured", DOCS)))
    store = SchemaStore(places, mirror=mirror.url, package_dirs=[])
    validate_event(_event(), store)
    assert store.downloaded == [] and mirror.paths == []


def test_with_no_source_one_message_names_the_ways(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    places = _places(tmp_path, monkeypatch)
    store = SchemaStore(places, mirror=_closed_url(), package_dirs=[])
    with pytest.raises(SpecUnavailableError) as raised:
        validate_event(_event(), store)
    message = str(raised.value)
    assert message.startswith(
        f"The test schemas are needed by the tests, and {SPEC} is in none of the places"
    )
    for way in ("(1) set TEST_SPEC_DIR", f"(2) place them at {places.shared}", f"into {places.cache}"):
        assert way in message
    assert "Connection refused" in message


def test_a_download_whose_id_is_not_the_url_asked_for_is_refused(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    wrong = {**DOCS, "9-9-9/OpenLineage.json": {**DOCS["9-9-9/OpenLineage.json"], "$id": "urn:other"}}
    server = _Server(_write_tree(tmp_path / "wrong", wrong))
    try:
        store = SchemaStore(_places(tmp_path, monkeypatch), mirror=server.url, package_dirs=[])
        with pytest.raises(SpecUnavailableError, match=r"answered a document whose \$id is not"):
            validate_event(_event(), store)
    finally:
        server.stop()
    assert not (tmp_path / "cache" / "9-9-9" / "OpenLineage.json").exists()


def test_an_unavailable_facet_version_is_an_error_even_with_another_minor_version_local(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    older = {**DOCS["facets/1-0-1/ThingRunFacet.json"], "$id": FACET.replace("1-0-1", "1-0-0")}
    local = {
        "9-9-9/OpenLineage.json": DOCS["9-9-9/OpenLineage.json"],
        "facets/1-0-0/ThingRunFacet.json": older,
    }
    monkeypatch.setenv("TEST_SPEC_DIR", str(_write_tree(tmp_path / "old", local)))
    places = SpecPlaces("The test schemas", "TEST_SPEC_DIR", tmp_path / "no", tmp_path / "cache", "the web")
    store = SchemaStore(places, mirror=_closed_url(), package_dirs=[])
    missing = r"facets/1-0-1/ThingRunFacet\.json is in none of the places"
    with pytest.raises(SpecUnavailableError, match=missing):
        validate_event(_event(), store)
    validate_event(_event(facet=FACET.replace("1-0-1", "1-0-0")), store)  # the exact version local: valid


def test_each_known_gap_names_a_substitute_the_spec_copies_here_have() -> None:
    store = default_store()
    assert set(KNOWN_GAPS) == {
        "https://openlineage.io/spec/1-0-2/OpenLineage.json",
        "https://openlineage.io/spec/facets/1-0-1/DataQualityMetricsDatasetFacet.json",
    }
    for gap, (substitute, reason) in KNOWN_GAPS.items():
        assert store.document(substitute)["$id"] == substitute and reason
        assert gap.rsplit("/", 1)[-1] == substitute.rsplit("/", 1)[-1]


def test_the_dbt_model_facet_is_checked_against_the_schema_this_project_ships() -> None:
    facet = {
        "_producer": "https://github.com/OpenLineage/OpenLineage/tree/1.54.0/integration/dbt",
        "_schemaURL": "https://github.com/OpenLineage/OpenLineage/tree/main/integration/common/openlineage/"
        "schema/dbt-model-dataset-facet.json",
        "config": {"materialized": "table", "incremental": {"strategy": "merge", "unique_key": ["id"]}},
    }
    event = _dbt_event(facet)
    validate_event(event)
    for broken in ({"materialized": 3}, {"materialised": "table"}, {}, {"incremental": {"lookback": -1}}):
        with pytest.raises(AssertionError, match="facet 'dbt_model' is invalid"):
            validate_event(_dbt_event({**facet, "config": broken}))


def _dbt_event(facet: dict[str, Any]) -> dict[str, Any]:
    return {
        "eventType": "COMPLETE",
        "eventTime": "2024-06-01T00:00:00Z",
        "producer": "https://github.com/OpenLineage/OpenLineage/tree/1.54.0/integration/dbt",
        "schemaURL": client_spec_uri() + "#/$defs/RunEvent",
        "run": {"runId": "0190a1b2-0000-7000-8000-000000000001", "facets": {}},
        "job": {"namespace": "dbt", "name": "model.shop.orders", "facets": {}},
        "outputs": [{"namespace": "duckdb", "name": "shop.main.orders", "facets": {"dbt_model": facet}}],
    }


def test_marquez_files_are_downloaded_once_and_must_have_the_pinned_digest(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    body = b'{"graph": []}\n'
    served = tmp_path / "raw" / "api" / "src" / "test" / "resources" / "demo"
    served.mkdir(parents=True)
    (served / "node.json").write_bytes(body)
    server = _Server(tmp_path / "raw")
    places = _places(tmp_path, monkeypatch)
    try:
        monkeypatch.setitem(marquez_spec.SHA256, "examples/demo__node.json", hashlib.sha256(body).hexdigest())
        path = marquez_spec.spec_file("examples/demo__node.json", server.url.rstrip("/"), places)
        assert path == places.cache / "examples" / "demo__node.json" and path.read_bytes() == body
        assert server.paths == ["/api/src/test/resources/demo/node.json"]
        monkeypatch.setitem(marquez_spec.SHA256, "examples/demo__other.json", "0" * 64)
        (served / "other.json").write_bytes(body)
        with pytest.raises(SpecUnavailableError, match="did not have the pinned SHA-256"):
            marquez_spec.spec_file("examples/demo__other.json", server.url.rstrip("/"), places)
    finally:
        server.stop()
    assert not (places.cache / "examples" / "demo__other.json").exists()


def test_every_spec_file_the_repository_copies_is_the_published_one() -> None:
    copy = SPEC_COPY / "openlineage"
    documents = sorted(copy.rglob("*.json"))
    assert len(documents) == 39  # OpenLineage.json and the 38 standard facets of the pinned commit
    for path in documents:  # found by its $id: https://openlineage.io/spec/[facets/]<version>/<file name>
        folder = "facets/" if path.parent.name == "facets" else ""
        assert re.fullmatch(
            rf"https://openlineage\.io/spec/{folder}\d+-\d+-\d+/{re.escape(path.name)}",
            json.loads(path.read_text())["$id"],
        ), path
    marquez = SPEC_COPY / "marquez"
    copied = {str(path.relative_to(marquez)) for path in marquez.rglob("*") if path.is_file()}
    assert copied == set(marquez_spec.SHA256)
    for name, digest in marquez_spec.SHA256.items():
        assert hashlib.sha256((marquez / name).read_bytes()).hexdigest() == digest, name


def _fresh_clone(root: Path) -> Path:
    repo = Path(__file__).resolve().parents[1]
    clone = root / "clone"
    tracked = subprocess.run(
        ["git", "ls-files", "--cached", "--others", "--exclude-standard"],
        cwd=repo,
        capture_output=True,
        text=True,
        check=True,
        timeout=60,
    ).stdout.split()
    for name in tracked:
        if (repo / name).is_file():
            (clone / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(repo / name, clone / name)
    return clone


def _pytest_offline(clone: Path, cache: Path, *args: str) -> subprocess.CompletedProcess[str]:
    """pytest in ``clone`` with no ``*_SPEC_DIR``, an empty cache and every download refused (the clone
    has no ``../shared`` beside it)."""
    blocked = _closed_url().rstrip("/")
    env = {
        **{k: v for k, v in os.environ.items() if not k.endswith("_SPEC_DIR") and "PROXY" not in k.upper()},
        "PYTHONPATH": str(clone),
        "XDG_CACHE_HOME": str(cache),
        "https_proxy": blocked,
        "HTTPS_PROXY": blocked,
    }
    return subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-rA", "-p", "no:xdist", *args],
        cwd=clone,
        env=env,
        capture_output=True,
        text=True,
        timeout=240,
    )


def test_a_fresh_clone_offline_validates_with_its_copy_and_without_it_fails_only_the_tests_that_validate(
    tmp_path: Path,
) -> None:
    clone = _fresh_clone(tmp_path)
    assert not (clone.parent / "shared").exists()
    proc = _pytest_offline(clone, tmp_path / "cache", "tests/test_trivial_dag.py", "tests/test_timestamps.py")
    out = proc.stdout + proc.stderr
    assert proc.returncode == pytest.ExitCode.OK, out[-3000:]
    outcomes = Counter(line.split(" ", 1)[0] for line in out.splitlines() if " tests/" in line)
    pure = sum(1 for line in out.splitlines() if line.startswith("PASSED tests/test_timestamps.py::"))
    # the trivial DAG's one test validates its run's events; every test ran and passed
    assert pure > 0 and outcomes == {"PASSED": pure + 1}, out[-3000:]
    assert out.count("PASSED tests/test_trivial_dag.py::") == 1, out[-3000:]
    assert not (tmp_path / "cache").exists()  # nothing was downloaded

    # without the copy: a test that validates fails with the message, the pure unit tests still pass
    shutil.rmtree(clone / "tests" / "support" / "spec" / "openlineage")
    dbt_test = test_the_dbt_model_facet_is_checked_against_the_schema_this_project_ships.__name__
    validating = f"tests/test_reference_specs.py::{dbt_test}"
    proc = _pytest_offline(clone, tmp_path / "cache", "tests/test_timestamps.py", validating)
    out = proc.stdout + proc.stderr
    assert proc.returncode == pytest.ExitCode.TESTS_FAILED, out[-3000:]
    assert out.count("The OpenLineage JSON Schemas are needed by the tests") >= 1
    assert "OPENLINEAGE_SPEC_DIR" in out and "KeyError" not in out
    outcomes = Counter(line.split(" ", 1)[0] for line in out.splitlines() if " tests/" in line)
    assert outcomes == {"FAILED": 1, "PASSED": pure}, out[-3000:]
