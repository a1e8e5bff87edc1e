"""Fail every test that passes without checking anything: count the checks each test makes.

A check is an ``assert`` statement that held (pytest's ``pytest_assertion_pass`` hook, which needs
``enable_assertion_pass_hook = true``; asserts in ``tests/support`` and the other helper modules count too,
as ``tests/conftest.py`` has them rewritten), a ``pytest.raises`` / ``pytest.warns`` expectation, or an
explicit :func:`record_check` by a helper whose check is not an ``assert`` (``validate_event`` raising on
an invalid event). Only the test body counts: a check in a fixture does not make the test check
anything. A test that ends without error and with no check fails with a message naming the fix.

Only this repository's asserts count: pytest also rewrites every module of every installed distribution
that ships a pytest plugin (Hypothesis, pytest-xdist, ...), so their internal asserts would count as the
test's checks (a ``@given`` test checking nothing would pass) and, with the pass hook on, each one would
build an explanation nobody reads (Hypothesis drew its examples about 60 times slower). ``pytest_configure``
takes those packages off pytest's list before they are imported; ``pyproject.toml`` leaves out anyio's
plugin (no test uses it), which would import anyio before that.

Used by ``tests/conftest.py``; load it in another run with ``-p assertion_count``.
"""

from __future__ import annotations

import importlib.metadata
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


def plugin_packages() -> set[str]:
    """The top-level modules and packages of the installed distributions that ship a pytest plugin (read
    from their files, as pytest marks them: Python 3.10's ``packages_distributions`` misses Hypothesis)."""
    entries = importlib.metadata.entry_points(group="pytest11")
    plugins = {entry.dist.name: entry.dist for entry in entries if entry.dist is not None}
    return {
        file.parts[0].removesuffix(".py")
        for dist in plugins.values()
        for file in dist.files or []
        if file.suffix == ".py" and ".." not in file.parts
    }


def _rewrite_no_plugin_package(config: pytest.Config) -> None:
    """Take the plugin distributions' packages off pytest's rewrite list (see the module docstring)."""
    hook = config.pluginmanager.rewrite_hook
    marked: set[str] | None = getattr(hook, "_must_rewrite", None)
    if marked is None:  # ``--assert=plain``: nothing is rewritten, no assert counts
        return
    marked.difference_update(plugin_packages())
    getattr(hook, "_marked_for_rewrite_cache", {}).clear()


def pytest_configure(config: pytest.Config) -> None:
    if not config.getini("enable_assertion_pass_hook"):
        raise pytest.UsageError("assertion_count needs `enable_assertion_pass_hook = true` in the pytest ini")
    _rewrite_no_plugin_package(config)
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
