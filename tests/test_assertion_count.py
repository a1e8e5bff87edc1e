"""The suite's own honesty check: a test that passes without checking anything fails (assertion_count.py)."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path

SUPPORT = Path(__file__).resolve().parent / "support"

CASES = """
import pytest
from hypothesis import given, settings, strategies as st


def test_asserts_nothing():
    sum([1, 2])


def test_loops_over_nothing():
    for record in []:
        assert record["skipped"] is True


def test_asserts_in_a_helper_that_is_not_rewritten():
    from helper_plain import check
    check(1)


def test_asserts():
    assert sum([1, 2]) == 3


def test_expects_an_exception():
    with pytest.raises(ZeroDivisionError):
        1 / 0


def test_expects_a_warning():
    import warnings
    with pytest.warns(UserWarning):
        warnings.warn("careful", UserWarning)


def test_records_a_check():
    from assertion_count import record_check
    record_check()


def test_asserts_in_a_rewritten_helper():
    from helper_rewritten import check
    check(1)


@settings(max_examples=5, database=None)
@given(st.text(alphabet="ab-", min_size=1).filter(lambda text: not text.startswith("-")))
def test_draws_examples_and_checks_nothing(text):
    text.upper()


@settings(max_examples=5, database=None)
@given(st.text(alphabet="ab-", min_size=1))
def test_draws_examples_and_checks_each(text):
    assert text.upper().lower() == text
"""


def test_a_test_that_checks_nothing_fails_and_one_that_checks_passes(tmp_path: Path) -> None:
    (tmp_path / "pytest.ini").write_text("[pytest]\nenable_assertion_pass_hook = true\n")
    (tmp_path / "conftest.py").write_text(
        'import pytest\npytest.register_assert_rewrite("helper_rewritten")\n'
    )
    (tmp_path / "helper_plain.py").write_text("def check(value):\n    assert value == 1\n")
    (tmp_path / "helper_rewritten.py").write_text("def check(value):\n    assert value == 1\n")
    (tmp_path / "test_cases.py").write_text(textwrap.dedent(CASES))
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(SUPPORT), str(tmp_path)])}
    proc = subprocess.run(
        [sys.executable, "-m", "pytest", "-p", "assertion_count", "-p", "no:cacheprovider", "-q", "-rA"],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    outcomes = {
        line.split(" ", 2)[1].split("::")[-1]: line.split(" ", 1)[0]
        for line in proc.stdout.splitlines()
        if line.startswith(("PASSED ", "FAILED "))
    }
    assert outcomes == {
        "test_asserts_nothing": "FAILED",
        "test_loops_over_nothing": "FAILED",
        "test_asserts_in_a_helper_that_is_not_rewritten": "FAILED",
        "test_asserts": "PASSED",
        "test_expects_an_exception": "PASSED",
        "test_expects_a_warning": "PASSED",
        "test_records_a_check": "PASSED",
        "test_asserts_in_a_rewritten_helper": "PASSED",
        "test_draws_examples_and_checks_nothing": "FAILED",  # Hypothesis' own asserts are not its checks
        "test_draws_examples_and_checks_each": "PASSED",
    }, proc.stdout[-3000:]
    assert proc.stdout.count("passed without checking anything") >= 4
    assert proc.returncode == 1


def test_the_packages_of_pytest_plugins_that_run_inside_tests_are_not_rewritten() -> None:
    """Hypothesis and anyio run inside the tests: their asserts would count as checks and cost an
    explanation each (assertion_count.py). The plugin modules pytest imports before any conftest
    (pytest-xdist, pytest-timeout, Hypothesis' plugin) stay rewritten: they run between the tests."""
    import anyio  # noqa: F401 (imported here if no earlier test did)
    import hypothesis.internal.conjecture.data  # noqa: F401
    from _pytest.assertion.rewrite import AssertionRewritingHook

    from tests.support.assertion_count import plugin_packages

    rewritten = {
        name.split(".")[0]
        for name, module in list(sys.modules.items())
        if isinstance(getattr(module, "__loader__", None), AssertionRewritingHook)
    }
    assert {"hypothesis", "anyio", "xdist"} <= plugin_packages()
    assert "tests" in rewritten  # the repository's own modules are
    assert sorted(rewritten & {"hypothesis", "anyio"}) == []
