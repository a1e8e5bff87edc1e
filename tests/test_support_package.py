"""tests/support is a package (``from tests.support import harness``) whose modules are the same objects as
under the bare names the older test files import (``import harness``): one AIRFLOW_HOME, one counter."""

from __future__ import annotations

import importlib
import sys

import harness

import tests.support.assertion_count as counted
from tests.support import harness as packaged
from tests.support.openlineage_spec import validate_events


def test_a_helper_imported_by_package_and_by_bare_name_is_one_module() -> None:
    assert packaged is harness and packaged._HOME == harness._HOME
    assert counted is sys.modules["assertion_count"] is sys.modules["tests.support.assertion_count"]
    assert validate_events is importlib.import_module("openlineage_spec").validate_events
    assert harness.__spec__ is not None and harness.__spec__.name == "harness"  # its own spec kept
