"""Fixtures of the test harness; the harness itself (environment, runner) lives in ``harness.py``.

Before anything else: helper modules get pytest's assertion rewriting, so their ``assert`` statements count
as checks (``assertion_count.py`` fails a test that checks nothing). ``harness`` is imported next: it sets
the isolated Airflow environment before anything imports Airflow. At session start the reference specs
are looked up (``spec_files.py``): without them the run stops with one message naming the ways to get them.
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
            if not p.stem.startswith("test_") and p.stem != "conftest" and "dags" not in p.parts
        }
    )
)

import os  # noqa: E402
import subprocess  # noqa: E402
import sys  # noqa: E402
from collections.abc import Iterator  # noqa: E402
from typing import Any  # noqa: E402

import marquez_spec  # noqa: E402
import openlineage_spec  # noqa: E402
from assertion_count import pytest_assertion_pass, pytest_configure, pytest_runtest_call  # noqa: E402, F401
from fresh_process import pytest_pyfunc_call, without_group  # noqa: E402, F401
from harness import _HOME, AirflowRunner  # noqa: E402
from spec_files import SpecUnavailableError  # noqa: E402

from airflow_lineage_plus import conf as _conf  # noqa: E402

_conf.sql_max_length()  # Airflow configures logging on first use: let it happen now, not inside a test


def pytest_sessionstart(session: pytest.Session) -> None:
    if hasattr(session.config, "workerinput"):
        return  # the controller looked already; workers read the same places
    try:
        openlineage_spec.require_spec()
        marquez_spec.require_spec()
    except SpecUnavailableError as exc:
        pytest.exit(str(exc), returncode=pytest.ExitCode.USAGE_ERROR)


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
    """The demo's four sample DAG runs, made once per session: the samples, CLI and UI tests read the
    same runs (each set is four real ``airflow dags test`` runs, two of them with ``dbt build``)."""
    from sample_world import record_demo_runs

    return record_demo_runs(local_s3, tmp_path_factory.mktemp("samples"))


#: Tests that share one recording of the sample pipelines run on one xdist worker (``--dist loadgroup``).
SHARED_RECORDINGS = "sample-pipelines"


@pytest.hookimpl(tryfirst=True)
def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """With ``--dist loadgroup``: one group per test file (its module-scoped runs are made once), except
    that every test using the sample pipelines' or the Lineage view's recordings joins one group."""
    # xdist workers see ``dist == "no"``; they keep ``loadgroup`` set, and they are where the groups count.
    if not (
        getattr(config.option, "loadgroup", False) or getattr(config.option, "dist", "no") == "loadgroup"
    ):
        return
    groups: dict[str, list[pytest.Item]] = {}
    for item in items:
        shared = "demo_runs" in getattr(item, "fixturenames", ()) or item.path.parent.name == "ui"
        group = SHARED_RECORDINGS if shared else str(item.path.relative_to(TESTS))
        item.add_marker(pytest.mark.xdist_group(group))
        groups.setdefault(group, []).append(item)
    # Workers take the groups in this order (test.sh passes --no-loadscope-reorder): the longest first,
    # so that no long group starts when the other worker has nothing left.
    ordered = sorted(groups.items(), key=_group_order)
    items[:] = [item for _, group in ordered for item in group]


#: The groups that take longest (a minute or more of Airflow runs each; ``--durations`` in CI's log).
LONGEST_FIRST = (
    SHARED_RECORDINGS,
    "reliability/test_fault_injection.py",
    "samples/test_demo.py",
    "emit/test_skip_clear_rerun.py",
    "emit/test_skip_state.py",
)


def _group_order(named: tuple[str, list[pytest.Item]]) -> tuple[int, int]:
    """The longest groups first, then groups running Airflow (marked ``airflow``), each by size."""
    name, group = named
    if name in LONGEST_FIRST:
        return (LONGEST_FIRST.index(name) - len(LONGEST_FIRST), 0)
    runs_airflow = any(item.get_closest_marker("airflow") is not None for item in group)
    return (0 if runs_airflow else 1, -len(group))


@pytest.hookimpl(optionalhook=True)
def pytest_xdist_node_collection_finished(node: Any, ids: list[str]) -> None:
    """With ``--dist loadgroup`` every test id a worker reports must end in ``@<group>``; if not (a pytest
    and a pytest-xdist that no longer agree on how to rename a test: pytest 9.2 with xdist 3.8), the groups
    are ignored, every worker makes its own copy of each module's Airflow runs and the suite silently takes
    twice as long."""
    if node.config.getoption("dist") != "loadgroup":
        return
    ungrouped = [nodeid for nodeid in ids if without_group(nodeid) == nodeid]
    if ungrouped:
        raise pytest.UsageError(
            f"pytest-xdist did not group {len(ungrouped)} tests (first: {ungrouped[0]}): this pytest and "
            "pytest-xdist do not agree on test ids; install the versions pyproject.toml's test extra allows"
        )
