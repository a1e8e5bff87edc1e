"""Tests of one xdist group run on one worker with the installed pytest and pytest-xdist
(``tests/support/xdist_group_ids.py`` keeps the group on pytest's structured node ids)."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]

GROUPED = """
import pytest

pytestmark = pytest.mark.xdist_group("shared")


@pytest.mark.parametrize("i", range(6))
def test_grouped(i):
    assert i >= 0
"""


@pytest.mark.timeout(120)
def test_the_tests_of_one_group_in_two_files_run_on_one_worker(tmp_path: Path) -> None:
    (tmp_path / "conftest.py").write_text('pytest_plugins = ["tests.support.xdist_group_ids"]\n')
    for name in ("test_a.py", "test_b.py"):
        (tmp_path / name).write_text(GROUPED)
    proc = subprocess.run(
        [
            sys.executable,
            "-m",
            "pytest",
            "-n",
            "2",
            "--dist",
            "loadgroup",
            "-v",
            "-p",
            "no:cacheprovider",
            "-p",
            "no:randomly",
            str(tmp_path),
        ],
        cwd=tmp_path,
        env={**os.environ, "PYTHONPATH": str(REPO), "PYTHONDONTWRITEBYTECODE": "1"},
        capture_output=True,
        text=True,
        timeout=110,
    )
    assert proc.returncode == 0, proc.stdout[-3000:]
    ran = re.findall(
        r"^\[(gw\d+)\] .*PASSED (test_[ab]\.py::test_grouped\[\d\])@shared\s*$", proc.stdout, re.M
    )
    assert len(ran) == 12, proc.stdout[-3000:]
    assert len({worker for worker, _ in ran}) == 1, proc.stdout[-3000:]
