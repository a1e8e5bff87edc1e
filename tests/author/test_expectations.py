"""Reading Great Expectations results by shape: the shapes beside the 1.x objects the real run covers.

tests/author/test_gx_quality.py runs GX 1.x for real (CheckpointResult, ExpectationSuiteValidationResult);
these cover the other shapes ``record_expectations`` accepts, with no GX and no Airflow.
"""

from __future__ import annotations

from typing import Any

import pytest

from airflow_lineage_plus.author import expectations
from airflow_lineage_plus.exceptions import LineagePlusError, NotAValidationResult


def _entry(kind: str, success: bool, result: dict[str, Any], **kwargs: Any) -> dict[str, Any]:
    return {"success": success, "expectation_config": {"type": kind, "kwargs": kwargs}, "result": result}


def _suite(asset: str, *entries: dict[str, Any]) -> dict[str, Any]:
    batch = {"datasource_name": "lake", "data_asset_name": asset}
    return {"suite_name": "s", "results": list(entries), "meta": {"active_batch_definition": batch}}


def test_a_checkpoint_of_great_expectations_0_18_is_read_per_data_asset() -> None:
    legacy = {
        "expectation_suite_name": "legacy",
        "results": [
            {
                "success": False,
                "expectation_config": {
                    "expectation_type": "expect_column_values_to_be_unique",
                    "kwargs": {"column": "id"},
                },
                "result": {"element_count": 10, "unexpected_count": 2},
            }
        ],
        "meta": {"active_batch_definition": {"data_asset_name": "orders"}},
    }
    found = expectations.assertions_by_asset({"run_results": {"id-1": {"validation_result": legacy}}})
    (assertion,) = found["orders"]
    assert (assertion.assertion, assertion.column, assertion.success, assertion.name) == (
        "expect_column_values_to_be_unique",
        "id",
        False,
        "legacy.expect_column_values_to_be_unique.id",
    )
    assert assertion.actual == '{"element_count": 10, "unexpected_count": 2}'


def test_describe_dict_output_has_no_data_asset_and_lands_under_the_unnamed_key() -> None:
    described = {
        "success": True,
        "validation_results": [
            {
                "success": True,
                "expectations": [
                    {
                        "expectation_type": "expect_table_row_count_to_equal",
                        "success": True,
                        "kwargs": {"value": 3},
                        "result": {"observed_value": 3},
                    }
                ],
            }
        ],
    }
    found = expectations.assertions_by_asset(described)
    assert list(found) == [expectations.UNNAMED_ASSET]
    (assertion,) = found[expectations.UNNAMED_ASSET]
    assert (assertion.expected, assertion.actual) == ('{"value": 3}', "3")


def test_observed_values_leave_only_when_values_are_allowed() -> None:
    entry = _entry(
        "expect_column_max_to_be_between", True, {"observed_value": 812.5}, column="amount", max_value=900
    )
    assert expectations.to_assertion(entry, "s", include_values=False).actual is None
    assert expectations.to_assertion(entry, "s", include_values=True).actual == "812.5"


def test_a_huge_value_set_is_cut_and_marked() -> None:
    entry = _entry("expect_column_values_to_be_in_set", True, {}, column="c", value_set=list(range(5000)))
    expected = expectations.to_assertion(entry, None, include_values=False).expected
    assert expected is not None
    assert len(expected) == expectations.MAX_TEXT
    assert expected.endswith("…")


def test_a_list_of_results_is_read_whole_and_keeps_its_assets_apart() -> None:
    first = _suite("contacts", _entry("expect_column_values_to_not_be_null", False, {}, column="email"))
    second = _suite("orders", _entry("expect_column_values_to_not_be_null", True, {}, column="id"))
    found = expectations.assertions_by_asset([first, second])
    assert {asset: [a.success for a in entries] for asset, entries in found.items()} == {
        "contacts": [False],
        "orders": [True],
    }


@pytest.mark.parametrize("value", [None, 42, "result", {"success": True}])
def test_what_is_not_a_gx_result_is_refused_naming_what_is_accepted(value: Any) -> None:
    with pytest.raises(NotAValidationResult, match="CheckpointResult") as raised:
        expectations.assertions_by_asset(value)
    assert isinstance(raised.value, LineagePlusError)
