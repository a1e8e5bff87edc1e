"""The suite's own guards are on in every run, the Airflow-free one on Python 3.10 (scripts/test-py310.sh)
included: that run loads the same tests/conftest.py as test.sh, not a cut-down one."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

TESTS = Path(__file__).resolve().parent


def test_the_suite_conftest_and_its_assertion_count_guard_are_loaded(request: pytest.FixtureRequest) -> None:
    conftest = sys.modules.get("conftest") or sys.modules.get("tests.conftest")
    assert conftest is not None and Path(conftest.__file__) == TESTS / "conftest.py"
    plugins = request.config.pluginmanager
    assert plugins.is_registered(conftest)
    # assertion_count.pytest_configure wraps pytest.raises to count it as a check: it ran in this session
    assert getattr(pytest.raises, "__wrapped__", None) is not None
    hooks = {impl.plugin for impl in plugins.hook.pytest_runtest_call.get_hookimpls()}
    assert conftest in hooks  # the per-test check count (assertion_count.pytest_runtest_call) is wired
