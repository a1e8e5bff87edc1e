"""Every ES module the Lineage page loads is one the app serves (it serves an allowlist, never by path)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from airflow_lineage_plus.ui.view_app import STATIC_FILES
from tests.support.run_report import SHARED_RECORDINGS

# one xdist group with the other tests of the Lineage view (tests/support/run_report.py)
pytestmark = pytest.mark.xdist_group(SHARED_RECORDINGS)

STATIC = Path(__file__).resolve().parents[2] / "airflow_lineage_plus" / "ui" / "static"
IMPORT = re.compile(r"""^import\s+[^;]*?from\s+["']\./([\w.-]+)["']""", re.M)


def test_every_module_the_page_imports_is_served() -> None:
    imported = {name for path in STATIC.glob("*.js") for name in IMPORT.findall(path.read_text())}
    page = (STATIC / "index.html").read_text()
    loaded = set(re.findall(r"src=\"[^\"]*?([\w.-]+\.js)\"", page))
    assert "groups.js" in imported and "main.js" in loaded
    assert imported | loaded <= set(STATIC_FILES)
    assert {path.name for path in STATIC.glob("*.js")} <= set(STATIC_FILES)
