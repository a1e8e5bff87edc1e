"""Cross-DAG lineage on a real run: a DAG run the scheduler started from an asset event is linked to the
DAG run whose task emitted it (the provider's ``jobDependencies`` facet, folded by the lineage store).

``tests/dags/cross_dag.py``: ``xdag_orders`` writes the asset in ``extract`` and then fails in ``check``
(Airflow records an asset event only for a task that succeeded, so a failed upstream DAG run is one that
failed after it fed the asset); the real scheduler starts ``xdag_report`` from that asset event. One
scheduler session records both runs; the tests read the store the package's transport wrote.
"""

from __future__ import annotations

import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from airflow_lineage_plus import node_ids as ids
from airflow_lineage_plus.graph import LineageQueries
from airflow_lineage_plus.graph.store_source import StoreSource
from airflow_lineage_plus.graph.visibility import DagAccess
from airflow_lineage_plus.store import LineageStore, sqlite_url
from airflow_lineage_plus.timestamps import to_micros
from tests.emit.skip_support import LiveAirflow
from tests.support.harness import TESTS, store_of
from tests.support.openlineage_spec import validate_events
from tests.support.view_in_process import simple_auth_airflow

pytestmark = [pytest.mark.airflow, pytest.mark.minutes(2)]

NAMESPACE = "test-airflow"
ORDERS_DAG = ids.job_id(NAMESPACE, "xdag_orders")
EXTRACT = ids.job_id(NAMESPACE, "xdag_orders.extract")
REPORT_DAG = ids.job_id(NAMESPACE, "xdag_report")
SUMMARIZE = ids.job_id(NAMESPACE, "xdag_report.summarize")
ORDERS = ids.dataset_id("s3://lineage-bucket", "xdag/orders.parquet")
REPORT = ids.dataset_id("s3://lineage-bucket", "xdag/report.parquet")
TERMINAL = {"COMPLETE", "FAIL"}


def _terminal(events: list[dict[str, Any]], job: str) -> dict[str, Any] | None:
    return next((e for e in events if e["job"]["name"] == job and e["eventType"] in TERMINAL), None)


@pytest.fixture(scope="module")
def recorded(airflow_db: Path, tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, Any]]:
    """Both DAG runs, by the real scheduler: the events (validated) and the store they were written to."""
    workdir = tmp_path_factory.mktemp("cross-dag")
    dags = workdir / "dags-xdag"
    dags.mkdir()
    shutil.copy(TESTS / "dags" / "cross_dag.py", dags)
    live = LiveAirflow(workdir)
    extra = {"AIRFLOW__CORE__DAGS_ARE_PAUSED_AT_CREATION": "False"}
    try:
        live.cli(
            "xdag",
            ["dags", "reserialize"],
            # the worker's database may know them, paused
            ["dags", "unpause", "xdag_orders"],
            ["dags", "unpause", "xdag_report"],
            ["dags", "trigger", "xdag_orders", "--conf", '{"fail": true}'],
            extra=extra,
        )
        events = live.run_scheduler_until(
            "xdag",
            lambda found: all(_terminal(found, job) for job in ("xdag_orders", "xdag_report")),
            extra=extra,
        )
    finally:
        live.stop()
    validate_events(events)
    store = LineageStore(sqlite_url(store_of(workdir / "events-xdag.jsonl")))
    source = StoreSource(store, owns_store=True)
    yield {"events": events, "source": source, "log": workdir / "events-xdag.jsonl"}
    source.close()


def _run_id(events: list[dict[str, Any]], job: str) -> str:
    found = {e["run"]["runId"] for e in events if e["job"]["name"] == job}
    assert len(found) == 1, (job, found)
    return found.pop()


def _trigger(events: list[dict[str, Any]], state: str) -> dict[str, Any]:
    return {
        "runId": _run_id(events, "xdag_orders"),
        "state": state,
        "taskJob": EXTRACT,
        "taskRunId": _run_id(events, "xdag_orders.extract"),
        "triggeredRunId": _run_id(events, "xdag_report"),
    }


def test_the_scheduler_starts_the_report_from_the_asset_and_the_provider_names_the_task_run(
    recorded: dict[str, Any],
) -> None:
    events = recorded["events"]
    assert _terminal(events, "xdag_orders")["eventType"] == "FAIL"  # type: ignore[index]
    assert _terminal(events, "xdag_report")["eventType"] == "COMPLETE"  # type: ignore[index]
    facets = [e["run"]["facets"] for e in events if e["job"]["name"] == "xdag_report"]
    upstream = [
        (d["job"]["name"], d["run"]["runId"]) for f in facets for d in f["jobDependencies"]["upstream"]
    ]
    assert len(facets) == 2  # START and COMPLETE, each naming the one task run whose asset event it was
    assert upstream == [("xdag_orders.extract", _run_id(events, "xdag_orders.extract"))] * 2


def test_upstream_of_the_report_crosses_a_triggered_edge_to_the_orders_dag_run(
    recorded: dict[str, Any],
) -> None:
    answer = LineageQueries(recorded["source"]).upstream(REPORT)
    assert [(e["origin"], e["destination"], e["state"]) for e in answer["edges"]] == [
        (ORDERS, SUMMARIZE, "current"),
        (ORDERS_DAG, SUMMARIZE, "triggered"),
        (EXTRACT, ORDERS, "current"),
        (SUMMARIZE, REPORT, "current"),
    ]
    triggered = next(e for e in answer["edges"] if e["state"] == "triggered")
    assert triggered["triggers"] == [_trigger(recorded["events"], "FAILED")]


def test_failed_upstream_of_the_report_names_the_failed_orders_dag_run(recorded: dict[str, Any]) -> None:
    answer = LineageQueries(recorded["source"]).failed_upstream(REPORT)
    assert [(n["id"], n["latestRun"]["runId"], n["latestRun"]["state"]) for n in answer["nodes"]] == [
        (ORDERS_DAG, _run_id(recorded["events"], "xdag_orders"), "FAILED")
    ]
    assert [(e["origin"], e["destination"], e["state"]) for e in answer["edges"]] == [
        (ORDERS_DAG, SUMMARIZE, "triggered"),
        (SUMMARIZE, REPORT, "current"),
    ]


def test_as_of_the_report_runs_start_the_edge_is_there_with_the_orders_run_state_of_then(
    recorded: dict[str, Any],
) -> None:
    events = recorded["events"]
    start = next(e for e in events if e["job"]["name"] == "xdag_report" and e["eventType"] == "START")
    moment = to_micros(start["eventTime"])
    orders_end = to_micros(_terminal(events, "xdag_orders")["eventTime"])  # type: ignore[index]
    answer = LineageQueries(recorded["source"]).upstream(REPORT_DAG, as_of=moment)
    assert [(e["origin"], e["destination"], e["state"]) for e in answer["edges"]] == [
        (ORDERS_DAG, REPORT_DAG, "triggered")
    ]
    then = "FAILED" if orders_end <= moment else "RUNNING"
    assert answer["edges"][0]["triggers"] == [_trigger(events, then)]


def test_a_reader_of_the_report_dag_only_learns_nothing_of_the_orders_run(recorded: dict[str, Any]) -> None:
    access = DagAccess(frozenset({"xdag_report"}), frozenset({"xdag_orders", "xdag_report"}))
    reader = LineageQueries(recorded["source"]).scoped(access.predicate())
    events = recorded["events"]
    secrets = ("xdag_orders", _run_id(events, "xdag_orders"), _run_id(events, "xdag_orders.extract"))
    answers = [
        reader.upstream(REPORT),
        reader.failed_upstream(REPORT),
        reader.lineage(SUMMARIZE),
        reader.run_details(_run_id(events, "xdag_report")),
    ]
    assert answers[1]["nodes"] == []
    assert answers[3]["facets"]["jobDependencies"]["upstream"] == []
    for answer in answers:
        assert not any(secret in repr(answer) for secret in secrets), answer


def test_the_views_lineage_answer_has_the_triggered_edge(
    recorded: dict[str, Any], monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    passwords = {"viewer": "viewer-pw"}
    with simple_auth_airflow(monkeypatch, recorded["log"], "viewer:viewer", passwords, tmp_path) as client:
        login = client.post("/auth/token", json={"username": "viewer", "password": "viewer-pw"})
        assert login.status_code == 201, login.text
        reply = client.get(
            "/lineage-plus/api/lineage",
            params={"node": REPORT, "depth": 3},
            headers={"Authorization": f"Bearer {login.json()['access_token']}"},
        )
    assert reply.status_code == 200, reply.text
    edges = [e for e in reply.json()["edges"] if e["state"] == "triggered"]
    assert [(e["origin"], e["destination"], e["triggers"]) for e in edges] == [
        (ORDERS_DAG, SUMMARIZE, [_trigger(recorded["events"], "FAILED")])
    ]
