"""The skip-state facets, their shipped schemas, the claims table and the cause rules, without a DAG run."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from openlineage.client.event_v2 import Job, Run, RunEvent, RunState
from openlineage.client.serde import Serde

import airflow_lineage_plus
from airflow_lineage_plus import facet_keys as keys
from airflow_lineage_plus.author.runtime import set_execution_mode
from airflow_lineage_plus.claims import claim, claimed, ensure_table, skip_claims_table
from airflow_lineage_plus.custom_facets import (
    BRANCH_NOT_TAKEN,
    EXECUTION_MODE_VERSION,
    EXECUTION_MODES,
    MANUAL,
    TRIGGER_RULE,
    UNKNOWN,
    ExecutionModeRunFacet,
    SkipStateRunFacet,
    schema_url,
)
from airflow_lineage_plus.emit.skip_causes import DagRunSnapshot, explain
from airflow_lineage_plus.exceptions import ConfigurationError
from tests.support.openlineage_spec import validate_event

SCHEMAS = Path(airflow_lineage_plus.__file__).parent / "schemas"
RUN_ID = "01a2265a-6aaa-7000-8000-000000000001"


def _event(**facets: Any) -> dict[str, Any]:
    event = RunEvent(
        eventType=RunState.ABORT,
        eventTime="2024-01-01T00:00:00+00:00",
        run=Run(runId=RUN_ID, facets=facets),
        job=Job(namespace="test-airflow", name="dag.task"),
    )
    parsed: dict[str, Any] = json.loads(Serde.to_json(event))
    return parsed


@pytest.mark.parametrize(
    ("facet_class", "file_name"),
    [
        (SkipStateRunFacet, "SkipStateRunFacet.json"),
        (ExecutionModeRunFacet, "1-1-0/ExecutionModeRunFacet.json"),
    ],
)
def test_schema_url_names_the_shipped_schema_whose_id_it_is(facet_class: Any, file_name: str) -> None:
    url = facet_class._get_schema()
    base, _, fragment = url.partition("#")
    assert base.endswith(f"/schemas/{file_name}")
    schema = json.loads((SCHEMAS / file_name).read_text())
    assert schema["$id"] == base
    assert fragment == f"/$defs/{Path(file_name).stem}"
    assert schema["properties"][facet_class.key]["$ref"] == f"#{fragment}"


def _mode_event(mode: str, version: str | None) -> dict[str, Any]:
    """An event whose execution mode facet names the schema ``version`` (None: 1-0-0, the first)."""
    event = _event(**{keys.EXECUTION_MODE: ExecutionModeRunFacet(mode=mode, reason="two of three files")})
    event["run"]["facets"][keys.EXECUTION_MODE]["_schemaURL"] = schema_url("ExecutionModeRunFacet", version)
    return event


def test_partial_is_a_mode_of_the_new_schema_version_and_old_events_stay_valid() -> None:
    assert EXECUTION_MODES == ("RAN", "CACHED", "NO_OP", "PARTIAL")
    validate_event(_event(**{keys.EXECUTION_MODE: ExecutionModeRunFacet(mode="PARTIAL")}))
    for mode in ("RAN", "CACHED", "NO_OP"):  # what events written before PARTIAL carry, under both versions
        validate_event(_mode_event(mode, None))
        validate_event(_mode_event(mode, EXECUTION_MODE_VERSION))
    with pytest.raises(AssertionError, match="lineagePlus_executionMode"):
        validate_event(_mode_event("PARTIAL", None))  # 1-0-0 is shipped unchanged: no PARTIAL in it
    first = json.loads((SCHEMAS / "ExecutionModeRunFacet.json").read_text())
    later = json.loads((SCHEMAS / EXECUTION_MODE_VERSION / "ExecutionModeRunFacet.json").read_text())
    assert first["$defs"]["ExecutionModeRunFacet"]["allOf"][1]["properties"]["mode"]["enum"] == [
        "RAN",
        "CACHED",
        "NO_OP",
    ]
    assert later["$defs"]["ExecutionModeRunFacet"]["allOf"][1]["properties"]["mode"]["enum"] == list(
        EXECUTION_MODES
    )


def test_skip_and_execution_mode_facets_validate_against_their_schemas() -> None:
    facet = SkipStateRunFacet(
        skipped=True,
        reason=TRIGGER_RULE,
        message="trigger rule all_success not met: upstream a=skipped",
        causedBy="a",
        triggerRule="all_success",
        upstreamStates={"a": "skipped"},
        state="skipped",
        mapIndex=-1,
        tryNumber=0,
    )
    mode = ExecutionModeRunFacet(mode="NO_OP", reason="nothing new")
    validate_event(_event(**{keys.SKIP_STATE: facet, keys.EXECUTION_MODE: mode}))


def test_a_reason_outside_the_enum_fails_schema_validation() -> None:
    facet = SkipStateRunFacet(skipped=True, reason="BECAUSE")
    with pytest.raises(AssertionError, match="lineagePlus_skipState"):
        validate_event(_event(**{keys.SKIP_STATE: facet}))


def test_claims_table_is_created_on_first_use_and_gives_each_run_id_once(tmp_path: Path) -> None:
    from sqlalchemy import create_engine, inspect
    from sqlalchemy.orm import Session

    engine = create_engine(f"sqlite:///{tmp_path / 'metadata.db'}")
    table = skip_claims_table("lineage_plus_skip_claims")
    rows = [(RUN_ID, "dag", "task", -1, 0, "dag-run"), ("other", "dag", "task2", 3, 1, "dag-run")]
    with Session(engine) as session:
        ensure_table(session, table)
        assert claim(session.connection(), table, rows) == {RUN_ID, "other"}
        session.commit()
        assert claim(session.connection(), table, [*rows, ("new", "dag", "t", -1, 1, "r")]) == {"new"}
        session.rollback()  # an uncommitted claim is no claim
        assert claimed(session.connection(), table, "dag") == {RUN_ID, "other"}
        assert claimed(session.connection(), table, "another_dag") == set()
    assert "lineage_plus_skip_claims" in inspect(engine).get_table_names()


def test_a_claims_table_name_that_is_not_a_plain_identifier_is_refused_naming_the_option() -> None:
    with pytest.raises(ConfigurationError, match=r"\[lineage_plus\] skip_claims_table"):
        skip_claims_table("claims; DROP TABLE dag")


def _snapshot(**states: str) -> DagRunSnapshot:
    snap = DagRunSnapshot(dag_id="dag", run_id="run")
    for task_id, state in states.items():
        snap.states[(task_id, -1)] = state
    return snap


class _Task:
    """The two attributes of a serialized task the cause rules read."""

    def __init__(self, upstream: set[str], trigger_rule: str = "all_success") -> None:
        self.upstream_task_ids = upstream
        self.trigger_rule = trigger_rule


def test_a_hand_marked_skip_is_manual_and_names_who() -> None:
    snap = _snapshot(a="success", b="skipped")
    snap.manual[("b", -1)] = "admin"
    cause = explain(snap, "b", -1, _Task({"a"}))
    assert cause.reason == MANUAL
    assert "admin" in cause.message


def test_short_circuit_applies_to_every_task_it_listed_but_a_branch_only_to_direct_downstream() -> None:
    snap = _snapshot(
        gate="success", x="skipped", y="skipped", pick="success", left="success", right="skipped"
    )
    snap.skipmixin[("gate", -1)] = {"skipped": ["x", "y"]}
    snap.skipmixin[("pick", -1)] = {"followed": ["left"]}
    assert explain(snap, "y", -1, _Task({"x"})).caused_by == "gate"
    branch = explain(snap, "right", -1, _Task({"pick"}))
    assert (branch.reason, branch.caused_by) == (BRANCH_NOT_TAKEN, "pick")


def test_one_failed_rule_blames_the_upstream_that_succeeded() -> None:
    snap = _snapshot(a="success", b="skipped", alert="skipped")
    cause = explain(snap, "alert", -1, _Task({"a", "b"}, "one_failed"))
    assert (cause.reason, cause.caused_by, cause.trigger_rule) == (TRIGGER_RULE, "a", "one_failed")
    assert cause.upstream_states == {"a": "success", "b": "skipped"}


def test_a_skip_with_no_upstream_and_no_known_cause_is_unknown() -> None:
    cause = explain(_snapshot(lonely="skipped"), "lonely", -1, _Task(set()))
    assert cause.reason == UNKNOWN


def test_not_run_leaves_out_task_instances_whose_current_try_started() -> None:
    snap = _snapshot(self_skipped="skipped", never="skipped", failed_up="upstream_failed", ok="success")
    snap.try_numbers.update({("self_skipped", -1): 1, ("never", -1): 0, ("failed_up", -1): 0})
    snap.started.add(("self_skipped", -1, 1))
    assert snap.not_run() == [("failed_up", -1), ("never", -1)]


def test_set_execution_mode_never_raises_into_the_task() -> None:
    from airflow_lineage_plus.containment import lost_counts

    before = lost_counts().get("the execution mode facet", 0)
    # Outside a running task there is no context, and "FAST" is no mode: both are logged, not raised.
    assert set_execution_mode("CACHED") is None
    assert set_execution_mode("FAST") is None
    assert lost_counts()["the execution mode facet"] == before + 2
