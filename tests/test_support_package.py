"""tests/support is a package (``from tests.support import harness``) whose modules are the same objects as
under their bare names (``import harness``, which Airflow's subprocesses and benchmarks/ use): one
AIRFLOW_HOME, one counter. Test files and helpers import it as the package, every one of them, and so they
import the helpers of a test folder (``from tests.emit.skip_support import ...``) and each other."""

from __future__ import annotations

import ast
import importlib
import sys
from pathlib import Path

import harness

import tests.support.assertion_count as counted
from tests.support import harness as packaged
from tests.support.openlineage_spec import validate_events


def test_a_helper_imported_by_package_and_by_bare_name_is_one_module() -> None:
    assert packaged is harness and packaged._HOME == harness._HOME
    assert counted is sys.modules["assertion_count"] is sys.modules["tests.support.assertion_count"]
    assert validate_events is importlib.import_module("openlineage_spec").validate_events
    assert harness.__spec__ is not None and harness.__spec__.name == "harness"  # its own spec kept


TESTS = Path(__file__).resolve().parent
SUPPORT = {p.stem for p in (TESTS / "support").glob("*.py") if p.stem != "__init__"}
#: what is not the suite's own: DAGs (they run in Airflow) and the JavaScript tools' packages
OUTSIDE = {"dags", "node_modules"}
#: the helpers of a test folder and the test files (pytest puts their folder on ``sys.path``)
LOCAL = {
    p.stem
    for p in TESTS.rglob("*.py")
    if p.parent != TESTS / "support"
    and p.stem not in {"__init__", "conftest"}
    and not OUTSIDE & set(p.relative_to(TESTS).parts)
}


def _bare_imports(path: Path) -> list[str]:
    """The modules of tests/ ``path`` imports by bare name (``import harness``, ``from skip_support import
    ...``, ``from test_lineage_browser import ...``)."""
    found = []
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            names = [node.module]
        elif isinstance(node, ast.Import):
            names = [alias.name for alias in node.names]
        else:
            continue
        found += [f"line {node.lineno}: {name}" for name in names if name.split(".")[0] in SUPPORT | LOCAL]
    return found


def test_test_files_and_helpers_import_tests_support_and_each_other_as_packages() -> None:
    files = [
        p
        for p in TESTS.rglob("*.py")
        if not OUTSIDE & set(p.relative_to(TESTS).parts) and p != Path(__file__).resolve()
    ]
    bare = {str(p.relative_to(TESTS)): found for p in sorted(files) if (found := _bare_imports(p))}
    assert bare == {}
    assert len(files) > 100 and len(SUPPORT) > 20  # the scan saw the suite
    assert {"skip_support", "ui_pipeline", "browser_support", "test_lineage_browser"} <= LOCAL
