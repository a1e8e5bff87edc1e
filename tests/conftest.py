"""Fixtures of the test harness; the harness itself (environment, runner) lives in ``harness.py``.

Before anything else: helper modules get pytest's assertion rewriting, so their ``assert`` statements count
as checks (``assertion_count.py`` fails a test that checks nothing). ``harness`` is imported next: it sets
the isolated Airflow environment before anything imports Airflow. This file loads without Airflow (the
Python 3.10 run, ``scripts/test-py310.sh``, uses it too).

The reference specs are needed only by tests that validate: every Airflow recording (``airflow_db`` asks for
``reference_specs``) and any test calling ``validate_event``; without them those tests fail with one message
naming the ways to get them (``spec_files.py``), and the others run.

Groups and order under ``--dist loadgroup`` are declared on the tests (``run_report.py``): a test file
marked ``pytest.mark.xdist_group(name)`` shares that group, one marked ``pytest.mark.minutes(n)`` (its
Airflow runs take about ``n`` minutes) is started before lighter ones.
At the end the run prints how many events were validated and how many tests ran per area.
"""

from __future__ import annotations

from pathlib import Path

import pytest

TESTS = Path(__file__).resolve().parent
pytest.register_assert_rewrite(
    *sorted(
        {
            p.stem
            for p in TESTS.rglob("*.py")
            if not p.stem.startswith("test_")
            and p.stem != "conftest"
            and "dags" not in p.parts
            and "node_modules" not in p.parts  # tests/js's npm packages ship Python files too
        }
    )
)

import importlib.util  # noqa: E402
import os  # noqa: E402
import subprocess  # noqa: E402
import sys  # noqa: E402
from collections.abc import Iterator  # noqa: E402
from typing import Any  # noqa: E402

from tests.support import openlineage_spec  # noqa: E402
from tests.support.assertion_count import pytest_assertion_pass, pytest_configure, pytest_runtest_call  # noqa: E402, F401
from tests.support.harness import _HOME, AirflowRunner  # noqa: E402
from tests.support.run_report import (  # noqa: E402, F401
    pytest_collection_modifyitems,
    pytest_runtest_logreport,
    pytest_runtest_protocol,
    pytest_sessionfinish,
    pytest_terminal_summary,
    pytest_testnodedown,
)

#: pytest-xdist's group suffix kept on pytest's structured node ids (a hook of its own, run after xdist's)
pytest_plugins = ["tests.support.xdist_group_ids"]

if importlib.util.find_spec("airflow") is not None:
    from airflow_lineage_plus import conf as _conf

    _conf.sql_max_length()  # Airflow configures logging on first use: let it happen now, not inside a test


@pytest.fixture(scope="session")
def reference_specs() -> str:
    """The OpenLineage spec the installed client writes, found or downloaded (``spec_files.py``); without
    it every test asking for this fails with the one message naming the ways to get it."""
    return openlineage_spec.require_spec()


@pytest.fixture(scope="session")
def airflow_db(reference_specs: str) -> Path:
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
    from tests.support.sample_world import local_s3_session

    yield from local_s3_session()


@pytest.fixture(scope="session")
def demo_runs(airflow_db: Path, local_s3: Any, tmp_path_factory: pytest.TempPathFactory) -> Any:
    """The demo's four sample DAG runs, made once per session: the samples, CLI and UI tests read the
    same runs (each set is four real ``airflow dags test`` runs, two of them with ``dbt build``)."""
    from tests.support.sample_world import record_demo_runs

    return record_demo_runs(local_s3, tmp_path_factory.mktemp("samples"))
