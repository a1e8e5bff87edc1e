"""The rules of ``what-changed``: a node's latest run against its own recent runs (docs/what-changed.md).

Pure functions over :class:`~.history.History` records. The baseline of a node is its last N completed
runs before the latest one; a figure counts as changed only when it is outside the usual run-to-run
spread: further from the baseline's median than ``spread`` robust deviations (:func:`robust_spread`)
**and** by at least a relative minimum (:class:`Thresholds`: every threshold is a plain argument).
"""

from __future__ import annotations

import itertools
import statistics
from collections import Counter
from collections.abc import Sequence
from datetime import date
from typing import Any

import attrs

from airflow_lineage_plus.graph.history import DatasetRun, History, JobRun
from airflow_lineage_plus.graph.schema_diff import ADDED, REMOVED, diff_fields

#: job states that mean the latest run did not do its work
BAD_STATES = frozenset({"FAILED", "ABORTED", "SKIPPED", "UPSTREAM_FAILED"})
#: the execution mode of a run that did its work in full
FULL_MODE = "RAN"
#: the consistency factor that makes the MAD estimate a standard deviation for normal noise
MAD_SCALE = 1.4826
_SECOND = 1_000_000

#: kind -> rank among causes (lower first): what most often explains the changes below it
KIND_ORDER = {
    "state": 0,
    "sql": 1,
    "sourceCode": 1,
    "executionMode": 2,
    "schema": 3,
    "assertion": 4,
    "partition": 5,
    "freshnessSlo": 6,
    "freshness": 6,
    "rowCount": 7,
    "nullRate": 8,
    "nullCount": 8,
    "bytes": 9,
    "retries": 10,
    "duration": 11,
}
#: the kinds nothing upstream explains (someone changed the job): always among the causes
INTRINSIC = frozenset({"sql", "sourceCode"})
#: the kinds that may explain changes downstream (a slower run or a retry does not change data)
EXPLAINING = frozenset(kind for kind, order in KIND_ORDER.items() if order <= KIND_ORDER["nullCount"])


@attrs.frozen
class Thresholds:
    """When a difference counts as a change (defaults: ``[lineage_plus] what_changed_*``).

    ``spread``: how many robust deviations (1.4826 x MAD of the baseline) a figure must move;
    ``min_relative``: and by at least this fraction of the baseline median (row count, null count,
    bytes); ``duration_relative``: the same minimum for a run's duration, which must also move by at least
    ``duration_seconds`` (a run a few seconds slower is noise); ``null_rate_points``: how much
    a column's null rate must rise (absolute: 0.01 is one percentage point); ``late_factor`` and
    ``late_minutes``: a dataset is late when its latest write is older (or came later after the one
    before) than ``late_factor`` x its usual interval between writes and the usual interval plus
    ``late_minutes``; ``min_baseline``: fewer completed runs than this in the baseline and figures are
    not compared (the answer says it cannot tell)."""

    spread: float = 3.0
    min_relative: float = 0.05
    duration_relative: float = 0.5
    duration_seconds: float = 60.0
    null_rate_points: float = 0.01
    late_factor: float = 1.5
    late_minutes: float = 10.0
    min_baseline: int = attrs.field(default=3, converter=int)


@attrs.frozen
class Change:
    """One change of one node: ``before`` (the baseline's usual value) -> ``after`` (the latest run's),
    ``size`` (a fraction of the baseline where relative means something, else a word or a difference),
    ``at`` (epoch microseconds of the latest run), ``weight`` (how big, for ranking among equals)."""

    node: str
    kind: str
    column: str | None
    before: Any
    after: Any
    size: Any
    at: int | None
    weight: float = 1.0


def robust_spread(values: Sequence[float]) -> tuple[float, float]:
    """(median, 1.4826 x median absolute deviation) of ``values``."""
    middle = statistics.median(values)
    return middle, MAD_SCALE * statistics.median(abs(v - middle) for v in values)


def moved(latest: float, baseline: Sequence[float], min_relative: float, spread: float) -> float | None:
    """The relative change of ``latest`` from the baseline's median when it is outside the usual spread
    (None when it is not; ``inf`` from a median of 0)."""
    middle, deviation = robust_spread(baseline)
    difference = latest - middle
    if abs(difference) <= spread * deviation or difference == 0:
        return None
    if middle == 0:
        return float("inf")
    relative = difference / abs(middle)
    return relative if abs(relative) >= min_relative else None


def _usual(values: Sequence[Any]) -> Any:
    """The most common value (the newest, first, of equally common ones), None for none."""
    return Counter(values).most_common(1)[0][0] if values else None


def _number(value: float) -> float | int:
    return int(value) if float(value).is_integer() else round(value, 4)


def _size(relative: float) -> float | None:
    return None if relative == float("inf") else round(relative, 4)


def job_runs(baseline_runs: int) -> int:
    """How many of a job's newest runs its comparison reads: the latest and twice the baseline before it
    (the baseline is the completed ones among those, so failed runs between them leave room)."""
    return 2 * baseline_runs + 1


def dataset_runs(baseline_runs: int) -> int:
    """How many of a dataset's newest runs its comparison reads: the latest and its baseline (a dataset's
    runs are completed writes already)."""
    return baseline_runs + 1


def job_changes(history: History, baseline_runs: int, thresholds: Thresholds) -> list[Change]:
    """Changes of a job's latest finished run against its last ``baseline_runs`` completed ones."""
    runs = [r for r in history.runs if isinstance(r, JobRun) and r.state != "RUNNING"]
    if not runs:
        return []
    latest, earlier = runs[0], runs[1:]
    base = [r for r in earlier if r.state == "COMPLETED"][:baseline_runs]
    node, at = history.node_id, latest.at
    found: list[Change] = []
    usual_state = _usual([r.state for r in earlier[:baseline_runs]]) or "COMPLETED"
    if latest.state in BAD_STATES and latest.state != usual_state:
        found.append(Change(node, "state", None, usual_state, latest.state, latest.state, at))
    usual_mode = _usual([r.execution_mode or FULL_MODE for r in base]) or FULL_MODE
    mode = latest.execution_mode or FULL_MODE
    if mode != FULL_MODE and mode != usual_mode:
        found.append(Change(node, "executionMode", None, usual_mode, mode, mode, at))
    for kind, attr in (("sql", "sql"), ("sourceCode", "source_code")):
        value, usual = getattr(latest, attr), _stable([getattr(r, attr) for r in base])
        if value is not None and usual is not None and value != usual:
            found.append(Change(node, kind, None, usual, value, "changed", at))
    if len(base) < thresholds.min_baseline:
        return found
    tries = [r.tries for r in base if r.tries is not None]
    if latest.tries is not None and len(tries) >= thresholds.min_baseline:
        middle, deviation = robust_spread([t - 1 for t in tries])
        retries = latest.tries - 1
        if retries > middle + max(thresholds.spread * deviation, 0.5):
            found.append(
                Change(node, "retries", None, _number(middle), retries, _number(retries - middle), at)
            )
    durations = [d for d in (r.duration for r in base) if d is not None]
    if (
        latest.state == "COMPLETED"
        and latest.duration is not None
        and len(durations) >= thresholds.min_baseline
    ):
        middle = statistics.median(durations)
        relative = moved(latest.duration, durations, thresholds.duration_relative, thresholds.spread)
        if relative is not None and abs(latest.duration - middle) >= thresholds.duration_seconds:
            before, after = round(middle, 3), round(latest.duration, 3)
            found.append(Change(node, "duration", None, before, after, _size(relative), at, abs(relative)))
    return found


def _stable(versions: Sequence[str | None]) -> str | None:
    """The baseline's version when most of its runs agree on one (SQL that differs every run, a templated
    date in it, is its usual spread: no version to compare with)."""
    known = [v for v in versions if v is not None]
    usual = _usual(known)
    if usual is None or (known.count(usual) * 2 <= len(known) and len(known) > 1):
        return None
    return str(usual)


def dataset_changes(
    history: History, baseline_runs: int, thresholds: Thresholds, now: int
) -> tuple[list[Change], str | None]:
    """(changes, why the figures cannot be compared, or None) of a dataset's latest write against its
    last ``baseline_runs`` writes; ``now`` (epoch microseconds) is the time freshness is judged at."""
    runs = [r for r in history.runs if isinstance(r, DatasetRun)]
    if not runs:
        return [], "no run recorded anything of it"
    latest, base = runs[0], runs[1 : baseline_runs + 1]
    found = _freshness(history, runs[: baseline_runs + 1], thresholds, now)
    if base and latest.fields is not None and base[0].fields is not None:
        found += _schema(history.node_id, latest, base[0].fields)
    found += _assertions(history.node_id, latest, base[0] if base else None)
    found += _partitions(history.node_id, latest, base)
    if not latest.has_figures:
        return found, "its latest run recorded no figures"
    if len(base) < thresholds.min_baseline:
        return found, f"only {len(base)} earlier run(s) to compare with (at least {thresholds.min_baseline})"
    found += _figures(history.node_id, latest, base, thresholds)
    return found, None


def _figures(node: str, latest: DatasetRun, base: list[DatasetRun], t: Thresholds) -> list[Change]:
    found, at = [], latest.at
    for kind, attr in (("rowCount", "rows"), ("bytes", "bytes")):
        value = getattr(latest, attr)
        values = [getattr(r, attr) for r in base if getattr(r, attr) is not None]
        if value is None or len(values) < t.min_baseline:
            continue
        relative = moved(value, values, t.min_relative, t.spread)
        if relative is not None:
            before = _number(statistics.median(values))
            found.append(Change(node, kind, None, before, value, _size(relative), at, abs(relative)))
    for column, count in sorted(dict(latest.nulls).items()):
        counts = [(n, run.rows) for run in base if (n := dict(run.nulls).get(column)) is not None]
        if len(counts) < t.min_baseline:
            continue
        if latest.rows and all(rows for _, rows in counts):
            rates = [n / rows for n, rows in counts if rows]
            rate = count / latest.rows
            middle, deviation = robust_spread(rates)
            if rate - middle >= t.null_rate_points and rate - middle > t.spread * deviation:
                before, after, points = round(middle, 4), round(rate, 4), round(rate - middle, 4)
                found.append(Change(node, "nullRate", column, before, after, points, at, points))
            continue
        relative = moved(count, [n for n, _ in counts], t.min_relative, t.spread)
        if relative is not None and relative > 0:
            before = _number(statistics.median(n for n, _ in counts))
            found.append(Change(node, "nullCount", column, before, count, _size(relative), at, relative))
    return found


def _schema(node: str, latest: DatasetRun, before: Any) -> list[Change]:
    words = {ADDED: "added", REMOVED: "removed"}
    return [
        Change(
            node, "schema", d["column"], d["from"], d["to"], words.get(d["kind"], "typeChanged"), latest.at
        )
        for d in diff_fields(before, latest.fields or ())
    ]


def _assertions(node: str, latest: DatasetRun, previous: DatasetRun | None) -> list[Change]:
    passed_before = {(a, c) for a, c, ok in (previous.assertions if previous else ()) if ok}
    failed_before = {(a, c) for a, c, ok in (previous.assertions if previous else ()) if not ok}
    found = []
    for name, column, ok in sorted(latest.assertions, key=lambda a: (a[0], a[1] or "")):
        if not ok and (name, column) not in failed_before:
            before = "passed" if (name, column) in passed_before else None
            found.append(Change(node, "assertion", column, before, "failed", name, latest.at))
    return found


def _partitions(node: str, latest: DatasetRun, base: list[DatasetRun]) -> list[Change]:
    """A partition missing from the usual sequence: date partitions written at a regular step (the
    baseline's median step, in days), where the latest is more than one step after the one before."""
    dated = [pair for pair in map(_dated, [latest, *base]) if pair is not None]
    if len(dated) <= len(base) or len(dated) < 3:  # a run without a date partition, or too few runs
        return []
    ordinals = [day.toordinal() for _, day in dated]
    steps = [a - b for a, b in itertools.pairwise(ordinals[1:])]
    step = int(statistics.median(steps)) if steps else 0
    gap = ordinals[0] - ordinals[1]
    if step <= 0 or gap <= step or any(s != step for s in steps):
        return []
    dimension = dated[0][0]
    missing = [date.fromordinal(ordinals[1] + step * k).isoformat() for k in range(1, gap // step)]
    return [
        Change(node, "partition", dimension, base[0].partition, latest.partition, f"missing {day}", latest.at)
        for day in missing[:5]
    ]


def _dated(run: DatasetRun) -> tuple[str, date] | None:
    """(dimension, day) of the run's first partition dimension whose value starts with a date."""
    for key, value in run.dimensions:
        try:
            return key, date.fromisoformat(value[:10])
        except ValueError:
            continue
    return None


def _freshness(history: History, runs: list[DatasetRun], t: Thresholds, now: int) -> list[Change]:
    """Later than usual (the latest write is older, or came later after the one before, than the usual
    interval allows), and past the writers' SLO."""
    node, at = history.node_id, runs[0].at
    age = max(0, now - at)
    found = []
    if history.slo_minutes is not None and age > history.slo_minutes * 60 * _SECOND:
        slo = history.slo_minutes * 60
        past = age / _SECOND / max(slo, 1) - 1  # a target of zero minutes: sized in seconds past it
        found.append(Change(node, "freshnessSlo", None, slo, age // _SECOND, round(past, 4), at))
    times = [r.at for r in runs]
    intervals = [a - b for a, b in itertools.pairwise(times[1:])]
    if len(intervals) + 1 < t.min_baseline:
        return found
    usual = statistics.median(intervals)
    allowed = max(usual * t.late_factor, usual + t.late_minutes * 60 * _SECOND)
    for gap in (age, times[0] - times[1]):
        if usual > 0 and gap > allowed:
            relative = gap / usual - 1
            before, after = round(usual / _SECOND), round(gap / _SECOND)
            found.append(Change(node, "freshness", None, before, after, round(relative, 4), at, relative))
            break
    return found
