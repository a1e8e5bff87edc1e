"""Fixtures of the test harness; the harness itself (environment, runner) lives in ``harness.py``.

``harness`` is imported first: it sets the isolated Airflow environment before anything imports Airflow.
"""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

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


@pytest.fixture(scope="session")
def local_s3() -> Iterator[Any]:
    """moto's S3 server with the sample bucket (``sample_world``), started once per session."""
    from sample_world import local_s3_session

    yield from local_s3_session()


@pytest.fixture(scope="session")
def demo_runs(airflow_db: Path, local_s3: Any, tmp_path_factory: pytest.TempPathFactory) -> Any:
    """The demo's four sample DAG runs, made once per session: tests/samples and tests/test_cli.py read
    the same runs (each set is four real ``airflow dags test`` runs, two of them with ``dbt build``)."""
    from sample_world import record_demo_runs

    return record_demo_runs(local_s3, tmp_path_factory.mktemp("samples"))
