"""The run's own report (tests/support/run_report.py): a group that ran on two xdist workers is named (and
fails the run), and groups start heaviest first by the minutes their tests declare."""

from __future__ import annotations

from typing import Any

import pytest

from tests.support import run_report


class _Item:
    """What the ordering reads of a collected test: its closest marks."""

    def __init__(self, minutes: float | None = None, airflow: bool = False) -> None:
        self.marks = {}
        if minutes is not None:
            self.marks["minutes"] = pytest.mark.minutes(minutes).mark
        if airflow:
            self.marks["airflow"] = pytest.mark.airflow.mark

    def get_closest_marker(self, name: str) -> Any:
        return self.marks.get(name)


def test_a_group_reported_by_two_workers_is_named_with_both(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(
        run_report, "_worker_groups", {"gw0": {"a.py", "shared"}, "gw1": {"b.py", "shared"}, "gw2": {"c.py"}}
    )
    assert run_report._split_groups() == {"shared": ["gw0", "gw1"]}
    monkeypatch.setattr(run_report, "_worker_groups", {"gw0": {"a.py"}, "gw1": {"b.py"}})
    assert run_report._split_groups() == {}


def test_groups_start_by_declared_minutes_then_airflow_then_size() -> None:
    groups = {
        "small-unit": [_Item()],
        "big-unit": [_Item(), _Item(), _Item()],
        "airflow": [_Item(airflow=True)],
        "five-minutes": [_Item(5, airflow=True)],
        "eight-minutes": [_Item(), _Item(8, airflow=True)],
    }
    ordered = sorted(groups, key=lambda name: run_report._group_order(groups[name]))  # type: ignore[arg-type]
    assert ordered == ["eight-minutes", "five-minutes", "airflow", "big-unit", "small-unit"]


class _Collected:
    """What grouping reads of a collected test: its file, fixtures and closest marks."""

    def __init__(self, path: str, fixtures: tuple[str, ...] = (), group: str | None = None) -> None:
        self.path = run_report.TESTS / path
        self.fixturenames = fixtures
        self.mark = pytest.mark.xdist_group(group).mark if group is not None else None

    def get_closest_marker(self, name: str) -> Any:
        return self.mark if name == "xdist_group" else None


def test_a_test_is_in_the_group_it_declares_else_its_shared_recordings_else_its_file() -> None:
    declared = _Collected("ui/test_static_files.py", group=run_report.SHARED_RECORDINGS)
    by_fixture = _Collected("cli/test_demo_answers.py", fixtures=("tmp_path", "demo_runs"))
    by_name = _Collected("emit/test_x.py", group="emit-shared")
    alone = _Collected("emit/test_skip_state.py", fixtures=("tmp_path",))
    alerts = [_Collected(f"act/test_{name}.py", fixtures=("alerted_pipeline",)) for name in ("a", "b")]
    items = (declared, by_fixture, by_name, alone, *alerts)
    groups = [run_report.group_of(item) for item in items]  # type: ignore[arg-type]
    assert groups == [
        run_report.SHARED_RECORDINGS,
        run_report.SHARED_RECORDINGS,
        "emit-shared",
        "emit/test_skip_state.py",
        "alerted-pipeline",
        "alerted-pipeline",
    ]
