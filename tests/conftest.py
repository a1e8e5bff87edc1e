"""Fixtures of the test harness; the harness itself (environment, runner) lives in ``harness.py``.

``harness`` is imported first: it sets the isolated Airflow environment before anything imports Airflow.
"""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from harness import _HOME, TESTS, AirflowRunner

from airflow_lineage_plus import conf as _conf

_conf.sql_max_length()  # Airflow configures logging on first use: let it happen now, not inside a test


@pytest.fixture(scope="session")
def airflow_db() -> Path:
    """Create the isolated metadata database once per session (a real ``airflow db migrate``)."""
    airflow = str(Path(sys.executable).parent / "airflow")
    proc = subprocess.run(
        [airflow, "db", "migrate"], env=os.environ.copy(), capture_output=True, text=True, timeout=600
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    return _HOME


@pytest.fixture
def airflow_runner(airflow_db: Path, tmp_path: Path) -> Iterator[AirflowRunner]:
    yield AirflowRunner(tmp_path)


@pytest.fixture
def dag_file_dir() -> Path:
    return TESTS / "dags"
