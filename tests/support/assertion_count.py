"""Fail every test that passes without checking anything: count the checks each test makes.

A check is an ``assert`` statement that held (pytest's ``pytest_assertion_pass`` hook, which needs
``enable_assertion_pass_hook = true``; asserts in ``tests/support`` and the other helper modules count too,
as ``tests/conftest.py`` has them rewritten), a ``pytest.raises`` / ``pytest.warns`` expectation, or an
explicit :func:`record_check` by a helper whose check is not an ``assert`` (``validate_event`` raising on
an invalid event). Only the test body counts: a check in a fixture does not make the test check
anything. A test that ends without error and with no check fails with a message naming the fix.

Used by ``tests/conftest.py``; load it in another run with ``-p assertion_count``.
"""

from __future__ import annotations

from collections.abc import Callable, Generator
from pathlib import Path
from typing import Any

import pytest

_checks = 0


def record_check(count: int = 1) -> None:
    """A helper made a check that is not an ``assert`` statement (for example a schema validation)."""
    global _checks
    _checks += count


def checks_so_far() -> int:
    return _checks


def _counting(real: Callable[..., Any]) -> Callable[..., Any]:
    def expect(*args: Any, **kwargs: Any) -> Any:
        record_check()  # the expectation is checked when the block or call ends; a miss fails the test
        return real(*args, **kwargs)

    expect.__wrapped__ = real  # type: ignore[attr-defined]
    expect.__doc__ = real.__doc__
    return expect


def pytest_configure(config: pytest.Config) -> None:
    if not config.getini("enable_assertion_pass_hook"):
        raise pytest.UsageError("assertion_count needs `enable_assertion_pass_hook = true` in the pytest ini")
    if not hasattr(config, "workerinput"):
        # Rewritten modules are cached in __pycache__/*-pytest-*.pyc without saying whether they call the
        # pass hook: a cache written before the hook was enabled would count nothing. Rewrite afresh.
        for stale in Path(config.rootpath, "tests").rglob("__pycache__/*-pytest-*.pyc"):
            stale.unlink(missing_ok=True)
    if not getattr(pytest.raises, "__wrapped__", None):
        pytest.raises = _counting(pytest.raises)  # type: ignore[assignment]
        pytest.warns = _counting(pytest.warns)  # type: ignore[assignment]


def pytest_assertion_pass(item: pytest.Item, lineno: int, orig: str, expl: str) -> None:
    record_check()


@pytest.hookimpl(wrapper=True)
def pytest_runtest_call(item: pytest.Item) -> Generator[None, None, None]:
    global _checks
    _checks = 0
    result = yield
    if _checks == 0:
        raise AssertionError(
            f"{item.nodeid} passed without checking anything: no assert held, no pytest.raises/warns, no "
            "validation. Assert the behaviour the test name states (an exact count where it is exact)."
        )
    return result
