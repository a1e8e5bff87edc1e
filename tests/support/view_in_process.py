"""The plugin's Lineage view inside a test process, over the event log a test module recorded.

Airflow's ``create_app`` mounts the plugin's one ``LineageApp`` (made when the plugin is imported, once per
process), and its view keeps the reader that opened the configured log at its first request. Two test
modules on one pytest worker that each serve their own log through ``create_app`` would otherwise see
whichever log was asked first; each gives the view a reader of its own for as long as it runs.
"""

from __future__ import annotations

from pathlib import Path

import pytest


def serve_in_view(patch: pytest.MonkeyPatch, log: Path) -> None:
    """Configure ``log`` as the event log and give the plugin's view a fresh reader of it, until
    ``patch`` is undone (then the view has its earlier reader back)."""
    from airflow_lineage_plus.plugin import LineagePlusPlugin
    from airflow_lineage_plus.ui.view_source import LineageReader

    patch.setenv("AIRFLOW__LINEAGE_PLUS__EVENT_LOG_PATH", str(log))
    view = LineagePlusPlugin.fastapi_apps[0]["app"].build()
    patch.setattr(view.state, "lineage_reader", LineageReader())
