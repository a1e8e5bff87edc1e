"""The events tests build by hand (``graph_builders``, ``what_changed_events``) are valid OpenLineage: each
event against the spec, each facet against the schema its ``_schemaURL`` names."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

from tests.support import graph_builders as g
from tests.support import what_changed_events as w
from tests.support.openlineage_spec import SpecUnavailableError, validate_event, validate_events

World = Callable[[], list[dict[str, Any]]]

#: Every world the builders make, with the number of events in it.
WORLDS: dict[str, tuple[World, int]] = {
    "orders_pipeline": (g.orders_pipeline, 10),
    "orders_pipeline(full_start=True)": (lambda: g.orders_pipeline(full_start=True), 10),
    "varied_events": (g.varied_events, 15),
    "retirement_events": (g.retirement_events, 9),
    "tie_events": (g.tie_events, 17),
    "daily_runs(3)": (lambda: g.daily_runs(3), 14),
    "daily_runs(3, retried_day=2)": (lambda: g.daily_runs(3, retried_day=2), 14),
    "permissions_world": (g.permissions_world, 27),
    "cross_dag_world": (g.cross_dag_world, 10),
    "cross_dag_world(orders_fail=False, rerun=True)": (
        lambda: g.cross_dag_world(orders_fail=False, rerun=True),
        12,
    ),
    "week": (w.week, 32),
    "week(changed last day)": (
        lambda: w.week(
            3, rows=500, nulls=90, sql="SELECT id FROM raw.contacts", fields=[("id", "INT")], state="FAIL"
        ),
        12,
    ),
    "week(raw_assertions=...)": (lambda: w.week(raw_assertions=[("not_null", "email", False)]), 32),
    "check": (lambda: w.check("gx_contacts", "raw.contacts", 30, [("unique", "id", False)]), 2),
}


@pytest.mark.parametrize("name", list(WORLDS))
def test_every_hand_built_world_is_valid_openlineage(name: str) -> None:
    build, count = WORLDS[name]
    assert validate_events(build()) == count


def test_a_facet_built_without_naming_its_schema_is_not_accepted() -> None:
    [start, _] = g.run_pair("job", "r", 0, 1)
    start["run"]["facets"]["errorMessage"] = g.facet(message="boom", programmingLanguage="python")
    with pytest.raises(SpecUnavailableError):
        validate_event(start)


def test_a_facet_that_does_not_fit_the_schema_it_names_is_not_accepted() -> None:
    [_, end] = g.run_pair("job", "r", 0, 1, "FAIL")
    end["run"]["facets"]["errorMessage"] = g.facet(g.ERROR_MESSAGE, message="boom")  # no programmingLanguage
    with pytest.raises(AssertionError, match="facet 'errorMessage' is invalid"):
        validate_event(end)
