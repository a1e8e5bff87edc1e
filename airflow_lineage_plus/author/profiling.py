"""Data-quality figures computed from the data a task handles: row count, null counts, distinct, min/max.

Accepts a list (or iterable) of dicts, a pandas ``DataFrame`` or a pyarrow ``Table``/``RecordBatch``;
pandas and pyarrow are used only when the data is theirs, never imported otherwise. Only summary
statistics come out: no values, except min/max when explicitly asked for.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

import attr


@attr.define
class ColumnProfile:
    """Figures of one column."""

    null_count: int | None = None
    distinct_count: int | None = None
    min: float | None = None
    max: float | None = None


@attr.define
class Profile:
    """Figures of one dataset as the task handled it."""

    row_count: int | None
    columns: dict[str, ColumnProfile]


def _numeric(value: Any) -> float | None:
    if isinstance(value, bool) or value is None:
        return None
    try:
        return float(value)
    except (TypeError, ValueError):
        return None


def _profile_records(
    rows: Iterable[Mapping[str, Any]], columns: list[str] | None, distinct: bool, min_max: bool
) -> Profile:
    present: dict[str, int] = {}
    nulls: dict[str, int] = {}
    seen: dict[str, set[Any]] = {}
    lows: dict[str, float] = {}
    highs: dict[str, float] = {}
    count = 0
    wanted = set(columns) if columns is not None else None
    for row in rows:
        count += 1
        for name, value in row.items():
            if wanted is not None and name not in wanted:
                continue
            present[name] = present.get(name, 0) + 1
            if value is None:
                nulls[name] = nulls.get(name, 0) + 1
                continue
            if distinct:
                seen.setdefault(name, set()).add(
                    value if isinstance(value, str | int | float | bool) else repr(value)
                )
            if min_max:
                number = _numeric(value)
                if number is not None:
                    if name not in lows or number < lows[name]:
                        lows[name] = number
                    if name not in highs or number > highs[name]:
                        highs[name] = number
    names = columns if columns is not None else list(present)
    return Profile(
        row_count=count,
        columns={
            # a row without the column counts as a null in it
            name: ColumnProfile(
                null_count=nulls.get(name, 0) + count - present.get(name, 0),
                distinct_count=len(seen.get(name, ())) if distinct else None,
                min=lows.get(name),
                max=highs.get(name),
            )
            for name in names
        },
    )


def _profile_arrow(table: Any, columns: list[str] | None, distinct: bool, min_max: bool) -> Profile:
    import pyarrow.compute as pc

    names = columns if columns is not None else list(table.schema.names)
    result: dict[str, ColumnProfile] = {}
    for name in names:
        column = table.column(name)
        profile = ColumnProfile(null_count=int(column.null_count))
        if distinct:
            profile.distinct_count = int(pc.count_distinct(column, mode="only_valid").as_py())
        if min_max and _is_numeric_arrow(column.type):
            bounds = pc.min_max(column).as_py()
            profile.min, profile.max = _numeric(bounds["min"]), _numeric(bounds["max"])
        result[name] = profile
    return Profile(row_count=int(table.num_rows), columns=result)


def _is_numeric_arrow(arrow_type: Any) -> bool:
    import pyarrow.types as pt

    return bool(pt.is_integer(arrow_type) or pt.is_floating(arrow_type) or pt.is_decimal(arrow_type))


def _profile_pandas(frame: Any, columns: list[str] | None, distinct: bool, min_max: bool) -> Profile:
    names = columns if columns is not None else [str(c) for c in frame.columns]
    nulls = frame[names].isna().sum()
    result: dict[str, ColumnProfile] = {}
    for name in names:
        series = frame[name]
        profile = ColumnProfile(null_count=int(nulls[name]))
        if distinct:
            profile.distinct_count = int(series.nunique(dropna=True))
        if min_max and series.dtype.kind in "iuf":
            profile.min, profile.max = _numeric(series.min()), _numeric(series.max())
        result[name] = profile
    return Profile(row_count=len(frame), columns=result)


def profile(
    data: Any,
    *,
    columns: Iterable[str] | None = None,
    distinct: bool = False,
    min_max: bool = False,
) -> Profile:
    """Figures of ``data``; ``columns`` limits which columns are profiled."""
    wanted = list(columns) if columns is not None else None
    module = type(data).__module__
    if module.startswith("pyarrow"):
        return _profile_arrow(data, wanted, distinct, min_max)
    if module.startswith("pandas"):
        return _profile_pandas(data, wanted, distinct, min_max)
    if isinstance(data, Mapping):
        raise TypeError("profile() takes many rows (a list of dicts), not one dict")
    rows = data if isinstance(data, list) else list(data)
    return _profile_records(rows, wanted, distinct, min_max)
