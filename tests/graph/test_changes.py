"""The rules of what-changed (graph/changes.py) over plain history records: the kinds the event-built and
the real-run tests do not reach, and the thresholds."""

from __future__ import annotations

import pytest

from airflow_lineage_plus.graph.changes import Thresholds, dataset_changes, job_changes, moved
from airflow_lineage_plus.graph.history import DatasetRun, History, JobRun

pytestmark = pytest.mark.timeout(30)
HOUR = 3_600_000_000
DAY = 24 * HOUR
JOB, DATA = "job:ns:load", "dataset:ns:table"


def _job_runs(latest: JobRun, count: int = 7) -> History:
    base = [
        JobRun(f"r{i}", "COMPLETED", started=i * DAY, ended=i * DAY + 600_000_000, tries=1, source_code="abc")
        for i in range(count)
    ]
    return History(JOB, (latest, *reversed(base)))


def _writes(latest: DatasetRun, count: int = 7, **kw: object) -> History:
    base = [
        DatasetRun(f"r{i}", JOB, at=i * DAY, rows=1000, nulls=(("email", 10),), **kw)  # type: ignore[arg-type]
        for i in range(count)
    ]
    return History(DATA, (latest, *reversed(base)), slo_minutes=kw.get("slo"))  # type: ignore[arg-type]


def _kinds(found: list) -> list[tuple[str, str | None, object, object, object]]:  # type: ignore[type-arg]
    return [(c.kind, c.column, c.before, c.after, c.size) for c in found]


def test_a_retried_run_and_a_new_code_version_are_job_changes() -> None:
    latest = JobRun(
        "new", "COMPLETED", started=7 * DAY, ended=7 * DAY + 600_000_000, tries=3, source_code="def"
    )
    assert _kinds(job_changes(_job_runs(latest), 7, Thresholds())) == [
        ("sourceCode", None, "abc", "def", "changed"),
        ("retries", None, 0, 2, 2),
    ]


@pytest.mark.parametrize(
    ("state", "mode", "expected"),
    [
        ("ABORTED", None, [("state", None, "COMPLETED", "ABORTED", "ABORTED")]),
        ("COMPLETED", "NO_OP", [("executionMode", None, "RAN", "NO_OP", "NO_OP")]),
        ("COMPLETED", "RAN", []),
    ],
)
def test_an_aborted_run_and_a_run_with_nothing_to_do_are_job_changes(
    state: str, mode: str | None, expected: list[tuple[object, ...]]
) -> None:
    latest = JobRun("new", state, started=7 * DAY, ended=7 * DAY + 600_000_000, tries=1, execution_mode=mode)
    assert _kinds(job_changes(_job_runs(latest), 7, Thresholds())) == expected


def test_a_run_an_hour_long_instead_of_ten_minutes_is_a_duration_change_and_a_minute_more_is_not() -> None:
    slow = JobRun("new", "COMPLETED", started=7 * DAY, ended=7 * DAY + HOUR, tries=1, source_code="abc")
    assert _kinds(job_changes(_job_runs(slow), 7, Thresholds())) == [("duration", None, 600, 3600, 5.0)]
    later = JobRun(
        "new", "COMPLETED", started=7 * DAY, ended=7 * DAY + 660_000_000, tries=1, source_code="abc"
    )
    assert job_changes(_job_runs(later), 7, Thresholds()) == []


def test_a_sql_that_differs_every_run_is_its_usual_spread() -> None:
    base = [JobRun(f"r{i}", "COMPLETED", started=i * DAY, sql=f"v{i}") for i in range(7)]
    history = History(JOB, (JobRun("new", "COMPLETED", started=7 * DAY, sql="v9"), *reversed(base)))
    assert job_changes(history, 7, Thresholds()) == []


def test_null_counts_without_row_counts_and_a_missing_partition() -> None:
    def write(day: int, nulls: int) -> DatasetRun:
        return DatasetRun(
            f"r{day}",
            JOB,
            at=day * DAY,
            nulls=(("email", nulls),),
            partition=f"date=2024-03-0{day + 1}",
            dimensions=(("date", f"2024-03-0{day + 1}"),),
        )

    runs = [write(day, 10) for day in range(6)]
    history = History(DATA, (write(7, 40), *reversed(runs)))  # 2024-03-07 never written
    found = dataset_changes(history, 7, Thresholds(), now=7 * DAY)[0]
    assert _kinds(found) == [
        ("freshness", None, 86_400, 172_800, 1.0),
        ("partition", "date", "date=2024-03-06", "date=2024-03-08", "missing 2024-03-07"),
        ("nullCount", "email", 10, 40, 3.0),
    ]


def test_past_the_slo_and_later_than_usual_when_asked_two_days_on() -> None:
    latest = DatasetRun("new", JOB, at=7 * DAY, rows=1000, nulls=(("email", 10),))
    history = History(DATA, (latest, *_writes(latest).runs[1:]), slo_minutes=26 * 60)
    found, reason = dataset_changes(history, 7, Thresholds(), now=9 * DAY)
    assert reason is None
    assert _kinds(found) == [
        ("freshnessSlo", None, 26 * 3600, 2 * 86_400, round(48 / 26 - 1, 4)),
        ("freshness", None, 86_400, 172_800, 1.0),
    ]


def test_a_target_of_zero_minutes_is_missed_by_any_age_and_sized_in_seconds_past_it() -> None:
    # freshnessMinutes 0 is valid (the schema's minimum): every write is late as soon as it is made
    latest = DatasetRun("new", JOB, at=7 * DAY, rows=1000, nulls=(("email", 10),))
    history = History(DATA, (latest, *_writes(latest).runs[1:]), slo_minutes=0)
    found, reason = dataset_changes(history, 7, Thresholds(), now=7 * DAY + 90 * 1_000_000)
    assert reason is None
    assert _kinds(found) == [("freshnessSlo", None, 0, 90, 89.0)]


def test_a_thin_baseline_cannot_tell_and_a_threshold_moves_the_line() -> None:
    latest = DatasetRun("new", JOB, at=3 * DAY, rows=900)
    found, reason = dataset_changes(_writes(latest, count=2), 7, Thresholds(), now=3 * DAY)
    assert (found, reason) == ([], "only 2 earlier run(s) to compare with (at least 3)")
    assert moved(900, [1000] * 7, 0.05, 3.0) == -0.1
    assert moved(900, [1000] * 7, 0.15, 3.0) is None  # min_relative 15 %: a 10 % drop is within
    assert moved(1010, [1000, 1020, 980, 1010, 990, 1020, 980], 0.05, 3.0) is None
