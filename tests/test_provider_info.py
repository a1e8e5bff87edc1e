"""The provider registration Airflow reads: provider info, config section, plugin."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import jsonschema
import pytest

from airflow_lineage_plus import conf
from airflow_lineage_plus.provider_info import OPTIONS, get_provider_info


def _airflow(*args: str) -> str:
    airflow = str(Path(sys.executable).parent / "airflow")
    proc = subprocess.run(
        [airflow, *args], capture_output=True, text=True, env=os.environ.copy(), timeout=300
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    return proc.stdout


def test_provider_info_is_valid_against_airflows_provider_info_schema() -> None:
    import airflow

    schema_path = Path(airflow.__file__).parent / "provider_info.schema.json"
    schema = json.loads(schema_path.read_text())
    info = get_provider_info()
    jsonschema.validate(info, schema)  # raises, naming the field, when it does not fit
    assert info["package-name"] == "airflow-lineage-plus" and "lineage_plus" in info["config"]


def test_every_config_option_has_description_type_default_and_example() -> None:
    options = get_provider_info()["config"]["lineage_plus"]["options"]
    assert set(options) == set(OPTIONS)
    for name, spec in options.items():
        for key in ("description", "type", "example"):
            assert spec.get(key), f"[lineage_plus] {name} lacks a {key}"
        assert isinstance(spec.get("default"), str), f"[lineage_plus] {name} lacks a default"


def _as_declared(name: str, kind: str, example: str) -> Any:
    """What a reader returns for the option set to ``example``: the value parsed by its declared type."""
    special: dict[str, Any] = {
        "event_log_path": Path,
        "event_log_file_mode": lambda v: int(v, 8),
        "event_log_dir_mode": lambda v: int(v, 8),
        "alert_recipients": lambda v: {team: [address] for team, address in json.loads(v).items()},
        "alert_users": json.loads,
    }
    parse: dict[str, Any] = {"boolean": lambda v: v.lower() == "true", "integer": int, "float": float}
    return special.get(name, parse.get(kind, str))(example)


def test_every_config_option_is_read_by_its_conf_reader_as_its_declared_type(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    options = get_provider_info()["config"]["lineage_plus"]["options"]
    for name, spec in options.items():
        reader = getattr(conf, "is_disabled" if name == "disabled" else name, None)
        assert reader is not None, f"conf has no reader for [lineage_plus] {name}"
        monkeypatch.setenv(f"AIRFLOW__LINEAGE_PLUS__{name.upper()}", spec["example"])
        expected = _as_declared(name, spec["type"], spec["example"])
        assert reader() == expected, f"[lineage_plus] {name} = {spec['example']!r}"
        assert type(reader()) is type(expected)


def test_event_log_path_defaults_under_airflow_home(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("AIRFLOW__LINEAGE_PLUS__EVENT_LOG_PATH", raising=False)
    assert conf.event_log_path() == conf.airflow_home() / "lineage_plus" / "events.jsonl"


def test_config_options_read_from_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("AIRFLOW__LINEAGE_PLUS__SQL_MAX_LENGTH", "123")
    monkeypatch.setenv("AIRFLOW__LINEAGE_PLUS__GRAPH_SOURCE", "marquez")
    assert conf.sql_max_length() == 123
    assert conf.graph_source() == "marquez"


def test_unknown_graph_source_is_rejected_with_the_option_name(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("AIRFLOW__LINEAGE_PLUS__GRAPH_SOURCE", "neo4j")
    with pytest.raises(ValueError, match=r"\[lineage_plus\] graph_source"):
        conf.graph_source()


@pytest.mark.airflow
def test_airflow_providers_list_shows_the_package(airflow_db: Path) -> None:
    assert "airflow-lineage-plus" in _airflow("providers", "list")


@pytest.mark.airflow
def test_airflow_config_list_shows_the_lineage_plus_section(airflow_db: Path) -> None:
    out = _airflow("config", "list", "--section", "lineage_plus", "--include-descriptions")
    assert "[lineage_plus]" in out
    for name in OPTIONS:
        assert name in out


@pytest.mark.airflow
def test_airflow_plugins_lists_the_plugin(airflow_db: Path) -> None:
    out = _airflow("plugins", "--output", "json")
    plugins = {p["name"]: p for p in json.loads(out)}
    assert "lineage_plus" in plugins
    assert any(
        "airflow_lineage_plus.emit.skip_listener" in str(x) for x in plugins["lineage_plus"]["listeners"]
    )


def test_plugin_manager_loads_the_plugin_with_its_listener() -> None:
    from airflow import plugins_manager

    plugins = {p["name"]: p for p in plugins_manager.get_plugin_info()}
    assert "lineage_plus" in plugins, sorted(plugins)
    assert any(
        "airflow_lineage_plus.emit.skip_listener" in str(x) for x in plugins["lineage_plus"]["listeners"]
    )
    errors = (
        plugins_manager.get_import_errors()
        if hasattr(plugins_manager, "get_import_errors")
        else plugins_manager.import_errors  # Airflow 3.1
    )
    assert errors == {}
