"""The plugin's Lineage view inside a test process, over the event log a test module recorded.

Airflow's ``create_app`` mounts the plugin's one ``LineageApp`` (made when the plugin is imported, once per
process), and its view keeps the reader that opened the configured log at its first request. Two test
modules on one pytest worker that each serve their own log through ``create_app`` would otherwise see
whichever log was asked first; each gives the view a reader of its own for as long as it runs.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest


def serve_in_view(patch: pytest.MonkeyPatch, log: Path) -> None:
    """Configure ``log`` as the event log and give the plugin's view a fresh reader of it, until
    ``patch`` is undone (then the view has its earlier reader back)."""
    from airflow_lineage_plus.plugin import LineagePlusPlugin
    from airflow_lineage_plus.ui.view_source import LineageReader

    patch.setenv("AIRFLOW__LINEAGE_PLUS__EVENT_LOG_PATH", str(log))
    view = LineagePlusPlugin.fastapi_apps[0]["app"].build()
    # Starlette's State keeps its attributes in its ``_state`` dict, and pytest 9's setattr restores only
    # an instance's ``__dict__`` entries (pytest#10644): its undo would delete the reader, not restore it.
    assert "lineage_reader" in view.state._state
    patch.setitem(view.state._state, "lineage_reader", LineageReader())


@contextmanager
def simple_auth_airflow(
    patch: pytest.MonkeyPatch, log: Path, roles: str, passwords: dict[str, str], folder: Path
) -> Iterator[Any]:
    """Airflow's own app (``create_app``, plugins from the installed entry point) serving ``log`` in the
    plugin's view (:func:`serve_in_view`), as a ``TestClient``, with the Simple auth manager: ``roles`` is
    its ``users`` setting (``name:role,...``), ``passwords`` are written to ``folder``, no one is admin."""
    from airflow.api_fastapi.app import create_app
    from fastapi.testclient import TestClient

    (folder / "passwords.json").write_text(json.dumps(passwords))
    serve_in_view(patch, log)
    manager = "airflow.api_fastapi.auth.managers.simple.simple_auth_manager.SimpleAuthManager"
    patch.setenv("AIRFLOW__CORE__AUTH_MANAGER", manager)
    patch.setenv("AIRFLOW__CORE__SIMPLE_AUTH_MANAGER_USERS", roles)
    patch.setenv("AIRFLOW__CORE__SIMPLE_AUTH_MANAGER_PASSWORDS_FILE", str(folder / "passwords.json"))
    patch.setenv("AIRFLOW__CORE__SIMPLE_AUTH_MANAGER_ALL_ADMINS", "False")
    patch.setenv("AIRFLOW__API_AUTH__JWT_SECRET", "lineage-plus-in-process-tests-" + "s" * 64)
    with TestClient(create_app(), base_url="http://localhost") as client:
        yield client
