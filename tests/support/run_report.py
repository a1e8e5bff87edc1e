"""How a run is split over xdist workers, and what it reports at its end: validated events, tests per area.

Groups (``--dist loadgroup``) are declared on the tests: a test in a group of its own says so with
``pytest.mark.xdist_group(name)`` (the files of ``tests/ui`` share :data:`SHARED_RECORDINGS`, the group of
the Lineage view's recordings); a test using a session fixture that records runs (the sample pipelines'
``demo_runs``, the alerts' ``alerted_pipeline``: :data:`SHARED_FIXTURES`) joins that fixture's group; any
other test is in its file's group, so its module-scoped Airflow runs are made
once. Order: the tests say how long their group takes with
``pytest.mark.minutes(n)`` (about ``n`` minutes of Airflow runs, from ``--durations`` in CI's log); groups
start heaviest first, then groups running Airflow (marked ``airflow``), each by size, so that no long group
starts when the other worker has nothing left. ``test.sh`` passes ``--no-loadscope-reorder`` to keep it.

Checked by behaviour, not by xdist's internals: every worker reports the groups it ran (``workeroutput``,
xdist's documented channel back to the controller), and a group that ran on two workers fails the run (a
pytest and a pytest-xdist that no longer agree on groups would otherwise make each worker repeat every
module's Airflow runs, and the suite silently take twice as long).

At the end: the number of distinct events validated against the OpenLineage schemas (summed over the
workers), the uses of the spec's known gaps (``openlineage_spec.KNOWN_GAPS``), and passed/run tests per area
(the first folder under ``tests/``; files directly in it count as ``tests``).

Used by ``tests/conftest.py``.
"""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path
from typing import Any

import pytest

from tests.support.openlineage_spec import gaps_used, validated_count

TESTS = Path(__file__).resolve().parents[1]
#: The group of the tests sharing one recording of the sample pipelines and the Lineage view's runs.
SHARED_RECORDINGS = "sample-pipelines"
#: The session fixtures that record Airflow runs, and the group of every test using one: on two workers
#: each would make the same runs once more.
SHARED_FIXTURES = {"demo_runs": SHARED_RECORDINGS, "alerted_pipeline": "alerted-pipeline"}

_groups_run: set[str] = set()
_areas: Counter[str] = Counter()
_passed: Counter[str] = Counter()
_validated = Counter[str]()
_gaps: Counter[str] = Counter()
_worker_groups: dict[str, set[str]] = {}


def _loadgroup(config: pytest.Config) -> bool:
    # xdist workers see ``dist == "no"``; they keep ``loadgroup`` set, and they are where the groups count.
    return bool(
        getattr(config.option, "loadgroup", False) or getattr(config.option, "dist", "no") == "loadgroup"
    )


def group_of(item: pytest.Item) -> str:
    """The test's xdist group: the one it declares, that of a shared recording it uses
    (:data:`SHARED_FIXTURES`), or its file's."""
    declared = item.get_closest_marker("xdist_group")
    if declared is not None:
        return str(declared.args[0] if declared.args else declared.kwargs["name"])
    for fixture in getattr(item, "fixturenames", ()):
        if fixture in SHARED_FIXTURES:
            return SHARED_FIXTURES[fixture]
    return item.path.relative_to(TESTS).as_posix()


def declared_minutes(group: list[pytest.Item]) -> float:
    """The largest ``pytest.mark.minutes(n)`` among a group's tests (0 when none declares one)."""
    marks = [item.get_closest_marker("minutes") for item in group]
    return max((float(mark.args[0]) for mark in marks if mark is not None), default=0.0)


def _group_order(group: list[pytest.Item]) -> tuple[float, int, int]:
    runs_airflow = any(item.get_closest_marker("airflow") is not None for item in group)
    return (-declared_minutes(group), 0 if runs_airflow else 1, -len(group))


@pytest.hookimpl(tryfirst=True)
def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """With ``--dist loadgroup``: each test in its group (an ``xdist_group`` mark), groups heaviest first."""
    if not _loadgroup(config):
        return
    groups: dict[str, list[pytest.Item]] = {}
    for item in items:
        group = group_of(item)
        if item.get_closest_marker("xdist_group") is None:
            item.add_marker(pytest.mark.xdist_group(group))
        groups.setdefault(group, []).append(item)
    ordered = sorted(groups.values(), key=_group_order)
    items[:] = [item for group in ordered for item in group]


def _area(nodeid: str) -> str:
    parts = nodeid.split("::", 1)[0].split("/")
    return parts[1] if len(parts) > 2 and parts[0] == "tests" else "tests"


def pytest_runtest_logreport(report: pytest.TestReport) -> None:
    """Count each test once per area (its call, or its setup when that failed or skipped)."""
    if report.when == "call" or (report.when == "setup" and not report.passed):
        area = _area(report.nodeid)
        _areas[area] += 1
        _passed[area] += 1 if report.passed else 0


@pytest.hookimpl(tryfirst=True)
def pytest_runtest_protocol(item: pytest.Item) -> None:
    mark = item.get_closest_marker("xdist_group")
    if mark is not None:
        _groups_run.add(str(mark.args[0] if mark.args else mark.kwargs.get("name")))


def pytest_sessionfinish(session: pytest.Session) -> None:
    config = session.config
    if hasattr(config, "workeroutput"):  # a worker: send what it did to the controller
        groups = sorted(_groups_run)
        config.workeroutput["lineage_plus"] = json.dumps(
            {"validated": validated_count(), "gaps": gaps_used(), "groups": groups}
        )
        return
    _validated["main"] = validated_count()
    _gaps.update(gaps_used())
    if _loadgroup(config) and _split_groups():
        session.exitstatus = pytest.ExitCode.TESTS_FAILED


@pytest.hookimpl(optionalhook=True)
def pytest_testnodedown(node: Any, error: Any) -> None:
    """The controller: a worker finished; read its counts and the groups it ran."""
    sent = getattr(node, "workeroutput", {}).get("lineage_plus")
    if not sent:
        return
    worker = str(node.workeroutput.get("workerid", id(node)))
    data = json.loads(sent)
    _validated[worker] = int(data["validated"])
    _gaps.update(data["gaps"])
    _worker_groups[worker] = set(data["groups"])


def _split_groups() -> dict[str, list[str]]:
    """Groups that ran on more than one worker, with those workers."""
    where: dict[str, list[str]] = {}
    for worker, groups in sorted(_worker_groups.items()):
        for group in groups:
            where.setdefault(group, []).append(worker)
    return {group: workers for group, workers in where.items() if len(workers) > 1}


def pytest_terminal_summary(terminalreporter: Any, exitstatus: int, config: pytest.Config) -> None:
    if hasattr(config, "workerinput"):
        return
    write = terminalreporter.write_line
    terminalreporter.section("lineage-plus: what this run checked")
    write(f"events validated against the OpenLineage schemas: {sum(_validated.values())}")
    for gap, uses in sorted(_gaps.items()):
        write(f"  of them checked through a known gap of the spec copies here: {gap} ({uses} look-ups)")
    total = sum(_areas.values())
    areas = ", ".join(f"{area} {_passed[area]}/{_areas[area]}" for area in sorted(_areas))
    write(f"tests passed/run per area ({total} in all): {areas}")
    for group, workers in sorted(_split_groups().items()):
        write(
            f"error: xdist group {group} ran on workers {', '.join(workers)}: this pytest and pytest-xdist "
            "do not agree on groups (every worker repeats the group's Airflow runs); install versions that do"
        )
