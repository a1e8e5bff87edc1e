"""Figures computed from lists of dicts, pandas and pyarrow agree with each other and with the data."""

from __future__ import annotations

import pandas as pd
import pyarrow as pa
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from airflow_lineage_plus.author.profiling import profile

ROWS = [
    {"id": 1, "email": "a@x.io", "revenue": 10.0},
    {"id": 2, "email": None, "revenue": 5.5},
    {"id": 3, "email": "c@x.io", "revenue": None},
    {"id": 3, "email": "c@x.io"},
]


def _figures(p: object) -> dict[str, tuple[int | None, int | None, float | None, float | None]]:
    return {n: (c.null_count, c.distinct_count, c.min, c.max) for n, c in p.columns.items()}  # type: ignore[attr-defined]


def test_list_of_dicts_counts_rows_nulls_and_missing_keys_as_nulls() -> None:
    result = profile(ROWS)
    assert result.row_count == 4
    assert {n: c.null_count for n, c in result.columns.items()} == {"id": 0, "email": 1, "revenue": 2}
    assert all(c.distinct_count is None and c.min is None for c in result.columns.values())


def test_distinct_and_min_max_only_when_asked() -> None:
    result = profile(ROWS, distinct=True, min_max=True)
    assert _figures(result) == {
        "id": (0, 3, 1.0, 3.0),
        "email": (1, 2, None, None),
        "revenue": (2, 2, 5.5, 10.0),
    }


def test_pandas_and_pyarrow_give_the_same_figures_as_records() -> None:
    frame = pd.DataFrame(ROWS)
    table = pa.Table.from_pylist(ROWS)
    expected = _figures(profile(ROWS, distinct=True, min_max=True))
    assert _figures(profile(frame, distinct=True, min_max=True)) == expected
    assert _figures(profile(table, distinct=True, min_max=True)) == expected
    assert profile(frame).row_count == profile(table).row_count == 4


def test_columns_limit_which_columns_are_profiled() -> None:
    assert set(profile(ROWS, columns=["email"]).columns) == {"email"}
    assert set(profile(pa.Table.from_pylist(ROWS), columns=["id"]).columns) == {"id"}


def test_a_single_dict_is_rejected_with_a_hint() -> None:
    with pytest.raises(TypeError, match="list of dicts"):
        profile({"id": 1})


@settings(max_examples=60, deadline=None)
@given(
    st.lists(
        st.fixed_dictionaries(
            {"a": st.one_of(st.none(), st.integers(-5, 5)), "b": st.one_of(st.none(), st.text(max_size=3))}
        ),
        max_size=40,
    )
)
def test_null_counts_match_a_direct_count_for_any_rows(rows: list[dict[str, object]]) -> None:
    result = profile(rows, distinct=True)
    assert result.row_count == len(rows)
    for name in ("a", "b"):
        if rows:
            assert result.columns[name].null_count == sum(r[name] is None for r in rows)
            assert result.columns[name].distinct_count == len({r[name] for r in rows if r[name] is not None})
