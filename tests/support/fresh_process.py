"""Run a test in a fresh interpreter when this one runs other threads: ``@pytest.mark.single_threaded``.

Some behaviour is only reachable from a process running one thread (the event-log reader forks worker
processes only then, as a forked child of a threaded process can inherit a lock held forever). Session
fixtures of other tests (the stand-in S3 and SMTP servers) keep threads alive for the whole run, so such a
test, when it finds other threads, runs alone in a child ``pytest`` (no xdist) and passes only if the child
passes it; the child applies the same checks (timeout, assertion count) to the test body.

Used by ``tests/conftest.py``.
"""

from __future__ import annotations

import os
import subprocess
import sys
import threading

import pytest

from tests.support.assertion_count import record_check

_CHILD = "LINEAGE_PLUS_TEST_FRESH_PROCESS"


def without_group(nodeid: str) -> str:
    """``nodeid`` without the ``@<group>`` an xdist worker appends under ``--dist loadgroup`` (an "@" in a
    parameter's id, before the last "]", is part of the test id)."""
    if "@" in nodeid.rsplit("]", 1)[-1]:
        return nodeid.rsplit("@", 1)[0]
    return nodeid


@pytest.hookimpl(tryfirst=True)
def pytest_pyfunc_call(pyfuncitem: pytest.Function) -> bool | None:
    if pyfuncitem.get_closest_marker("single_threaded") is None:
        return None
    if threading.active_count() == 1:
        return None  # run here, as usual
    if os.environ.get(_CHILD):
        raise AssertionError(f"threads running in the fresh process: {threading.enumerate()}")
    nodeid = without_group(pyfuncitem.nodeid)
    proc = subprocess.run(
        [sys.executable, "-m", "pytest", "-p", "no:xdist", "-q", "--no-header", nodeid],
        cwd=pyfuncitem.config.rootpath,
        env={**os.environ, _CHILD: "1"},
        capture_output=True,
        text=True,
        timeout=540,
    )
    assert proc.returncode == 0, f"{pyfuncitem.nodeid} failed in a fresh process:\n{proc.stdout[-6000:]}"
    record_check()
    return True
