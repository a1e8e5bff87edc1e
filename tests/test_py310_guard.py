"""The suite's own guards are on in every run, the Airflow-free one on Python 3.10 (scripts/test-py310.sh)
included: that run loads the same tests/conftest.py as test.sh, not a cut-down one."""

from __future__ import annotations

from pathlib import Path

import pytest

TESTS = Path(__file__).resolve().parent


def test_the_suite_conftest_and_its_assertion_count_guard_are_loaded(request: pytest.FixtureRequest) -> None:
    plugins = request.config.pluginmanager
    loaded = [
        p for p in plugins.get_plugins() if Path(getattr(p, "__file__", "") or "") == TESTS / "conftest.py"
    ]
    assert len(loaded) == 1, "tests/conftest.py is not loaded in this run"
    conftest = loaded[0]
    # assertion_count.pytest_configure wraps pytest.raises to count it as a check: it ran in this session
    assert getattr(pytest.raises, "__wrapped__", None) is not None
    hooks = {impl.plugin for impl in plugins.hook.pytest_runtest_call.get_hookimpls()}
    assert conftest in hooks  # the per-test check count (assertion_count.pytest_runtest_call) is wired
