"""docker-compose.yml follows the Compose specification and has everything the docs say it has.

Containers cannot run here, so the file is checked statically: against the Compose specification's JSON
schema (the copy check-jsonschema ships), and against the services, ports, volumes, images and variables
that the compose sections of docs/demo.md and README.md name. The OpenLineage transport and the
connections are built with the real client and Airflow classes.
"""

from __future__ import annotations

import importlib.resources
import json
import re
from pathlib import Path
from typing import Any

import jsonschema
import pytest
import yaml

from tests.support.harness import REPO

COMPOSE = REPO / "docker-compose.yml"
DOCKERFILE = REPO / "docker" / "Dockerfile"
AIRFLOW_COMPONENTS = {
    "airflow-apiserver": "api-server",
    "airflow-scheduler": "scheduler",
    "airflow-dag-processor": "dag-processor",
    "airflow-triggerer": "triggerer",
}


@pytest.fixture(scope="module")
def compose() -> dict[str, Any]:
    return dict(yaml.safe_load(COMPOSE.read_text()))


def compose_sections() -> list[str]:
    """The text of every markdown section whose heading mentions compose, in docs/demo.md and README.md."""
    sections = []
    for doc in (REPO / "docs" / "demo.md", REPO / "README.md"):
        if not doc.exists():
            continue
        lines = doc.read_text().splitlines()
        for i, line in enumerate(lines):
            heading = re.match(r"^(#+)\s+(.*)", line)
            if heading and "compose" in heading.group(2).lower():
                level = len(heading.group(1))
                body = []
                for following in lines[i + 1 :]:
                    nested = re.match(r"^(#+)\s", following)
                    if nested and len(nested.group(1)) <= level:
                        break
                    body.append(following)
                sections.append("\n".join(body))
    return sections


def airflow_env(compose: dict[str, Any], service: str) -> dict[str, str]:
    return {k: str(v) for k, v in compose["services"][service]["environment"].items()}


def test_compose_file_is_valid_against_the_compose_specification(compose: dict[str, Any]) -> None:
    vendored = importlib.resources.files("check_jsonschema.builtin_schemas") / "vendor" / "compose-spec.json"
    schema = json.loads(vendored.read_text())
    errors = [
        f"{list(e.path)}: {e.message}" for e in jsonschema.Draft202012Validator(schema).iter_errors(compose)
    ]
    assert errors == []
    # The schema is strict enough to catch a typo: an unknown service key is an error.
    broken = {"services": {"x": {"image": "postgres:16", "prots": ["1:1"]}}}
    assert list(jsonschema.Draft202012Validator(schema).iter_errors(broken))


def test_airflow_components_run_this_package_built_on_the_pinned_airflow_image(
    compose: dict[str, Any],
) -> None:
    for service, command in AIRFLOW_COMPONENTS.items():
        spec = compose["services"][service]
        assert spec["command"] == command
        assert spec["build"]["dockerfile"] == "docker/Dockerfile"
        assert spec["build"]["args"]["AIRFLOW_VERSION"] == "3.3.2"
        assert spec["depends_on"]["airflow-init"]["condition"] == "service_completed_successfully"
    dockerfile = DOCKERFILE.read_text()
    assert "ARG AIRFLOW_VERSION=3.3.2" in dockerfile
    assert "FROM apache/airflow:${AIRFLOW_VERSION}" in dockerfile
    assert (
        '"/opt/airflow-lineage-plus"' in dockerfile and '"apache-airflow==${AIRFLOW_VERSION}"' in dockerfile
    )
    for service in ("postgres", "marquez", "marquez-web", "marquez-db", "s3"):
        image = compose["services"][service]["image"]
        _name, _, tag = image.partition(":")
        assert tag and tag != "latest" and re.match(r"^\d+(\.\d+)*$", tag), (
            f"{service}: {image} is not pinned"
        )


def test_every_service_port_volume_image_and_variable_the_docs_mention_is_there(
    compose: dict[str, Any],
) -> None:
    sections = compose_sections()
    assert sections, "docs/demo.md has no compose section"
    text = "\n".join(sections)
    services = compose["services"]
    published = {
        int(port.split(":")[-2])
        for spec in services.values()
        for port in spec.get("ports", [])
        if ":" in port
    }
    env = airflow_env(compose, "airflow-apiserver")
    images = {spec["image"] for spec in services.values() if "image" in spec and "build" not in spec}

    mentioned_services = set(re.findall(r"^\|\s*`([a-z0-9-]+)`\s*\|", text, flags=re.M))
    mentioned_ports = {int(p) for p in re.findall(r"localhost:(\d+)", text)}
    mentioned_vars = set(re.findall(r"`(AIRFLOW(?:__[A-Z_]+|_CONN_[A-Z_]+))`", text))
    tagged = set(re.findall(r"`((?:[a-z0-9-]+/)?[a-z0-9-]+:\d[\w.]*)`", text))
    mentioned_images = {t for t in tagged if not t.startswith("localhost:")} - {"apache/airflow:3.3.2"}
    volumes_line = next(line for line in text.splitlines() if line.startswith("Volumes:"))
    mentioned_volumes = set(re.findall(r"`([a-z0-9-]+)`", volumes_line))

    assert mentioned_services and mentioned_services <= set(services)
    assert set(services) <= mentioned_services, "a compose service is missing from the docs"
    assert {8080, 3000, 5000} <= mentioned_ports <= published
    assert mentioned_vars and mentioned_vars <= set(env)
    assert mentioned_images and mentioned_images <= images
    assert mentioned_volumes == set(compose["volumes"])


def test_openlineage_goes_through_the_event_log_transport_which_forwards_to_marquez(
    compose: dict[str, Any],
) -> None:
    """The recommended transport (docs/deployment.md): limits and redaction, the event log on the shared
    volume, and a live forward to Marquez, the one place the Lineage view reads."""
    from openlineage.client.transport import get_default_factory
    from openlineage.client.transport.http import HttpTransport

    from airflow_lineage_plus.transport import EventLogTransport

    for service in AIRFLOW_COMPONENTS:
        env = airflow_env(compose, service)
        transport = get_default_factory().create(json.loads(env["AIRFLOW__OPENLINEAGE__TRANSPORT"]))
        assert isinstance(transport, EventLogTransport)
        assert transport.config.budget is True  # size limits and redaction before anything leaves
        assert isinstance(transport.forward, HttpTransport)
        assert transport.forward.url == "http://marquez:5000"
        assert transport.config.forward_timeout <= 5
        log_path = transport.config.log_file_path
        assert log_path == env["AIRFLOW__LINEAGE_PLUS__EVENT_LOG_PATH"]
        mounts = dict(v.split(":")[1::-1] for v in compose["services"][service]["volumes"])
        assert mounts[str(Path(log_path).parent)] == "lineage-events"
        assert env["AIRFLOW__LINEAGE_PLUS__GRAPH_SOURCE"] == "marquez"
        assert env["AIRFLOW__LINEAGE_PLUS__MARQUEZ_URL"] == "http://marquez:5000"
    assert "5000:5000" in compose["services"]["marquez"]["ports"]
    assert compose["services"]["marquez-web"]["environment"]["MARQUEZ_HOST"] == "marquez"
    assert compose["services"]["marquez"]["environment"]["POSTGRES_HOST"] == "marquez-db"


def test_marquez_has_a_health_check_that_airflow_and_the_web_ui_wait_for(compose: dict[str, Any]) -> None:
    services = compose["services"]
    check = services["marquez"]["healthcheck"]
    command = " ".join(check["test"])
    assert check["test"][0] == "CMD"
    admin_port = services["marquez"]["environment"]["MARQUEZ_ADMIN_PORT"]
    assert f"/dev/tcp/127.0.0.1/{admin_port}" in command and "GET /healthcheck" in command
    assert "200" in command
    for service in [*AIRFLOW_COMPONENTS, "marquez-web"]:
        assert services[service]["depends_on"]["marquez"] == {"condition": "service_healthy"}, service


def test_the_compose_connections_name_the_same_datasets_in_other_places(compose: dict[str, Any]) -> None:
    """Swapping connections moves the data and the lineage names follow, with no change to the DAGs."""
    from airflow.models.connection import Connection

    from airflow_lineage_plus import datasets as ds

    env = airflow_env(compose, "airflow-scheduler")
    warehouse = Connection(conn_id="warehouse", uri=env["AIRFLOW_CONN_WAREHOUSE"])
    table = ds.sql_table("warehouse", "analytics.staging.stg_orders").resolve(warehouse)
    assert (table.namespace, table.name) == ("postgres://postgres:5432", "analytics.staging.stg_orders")
    aws = Connection.from_json(env["AIRFLOW_CONN_AWS_DEFAULT"], conn_id="aws_default")
    assert aws.conn_type == "aws" and aws.extra_dejson["endpoint_url"] == "http://s3:5000"
    assert set(compose["services"]["postgres"]["volumes"]) >= {
        "./docker/postgres-init:/docker-entrypoint-initdb.d:ro"
    }
    assert (
        "CREATE DATABASE analytics"
        in (REPO / "docker/postgres-init/10-create-analytics-database.sql").read_text()
    )
