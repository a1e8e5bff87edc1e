"""The Marquez source against a stand-in that behaves as Marquez does (``fake_marquez.py``), every answer held
to Marquez's openapi.yml: the same answers as the event log for an ordered stream of well-formed events,
and the documented differences (``docs/graph.md``) where Marquez's model differs from ours."""

from __future__ import annotations

import json
import socket
import time
from pathlib import Path
from typing import Any

import httpx
import pytest

from airflow_lineage_plus.containment import call_within
from airflow_lineage_plus.graph import LineageQueries, NodeNotFound, SourceUnavailable, open_source
from tests.support import timing
from tests.support.fake_marquez import FakeMarquez
from tests.support.graph_builders import (
    daily_runs,
    dataset_node,
    ds,
    event,
    facet,
    job_event,
    job_node,
    orders_pipeline,
    permissions_world,
    run_id,
    run_pair,
    write_log,
)
from tests.support.marquez_contract import validate, validate_response
from tests.support.marquez_fixture import API_KEY
from tests.support.marquez_spec import spec_file


def _events() -> list[dict[str, Any]]:
    """The orders pipeline, a self-skipped report run and a DAG run whose scheduler skipped the report."""
    events = orders_pipeline(full_start=True)
    events += run_pair(
        "orders.report",
        "report-2",
        14,
        15,
        skipped="no new partitions",
        inputs=[ds("fct_daily_orders")],
        outputs=[ds("orders_report")],
        full_start=True,
    )
    # a later DAG run in which the scheduler skipped `report` (no task events, only airflowState)
    parent = facet(run={"runId": run_id("dagrun-9")}, job={"namespace": "pipeline", "name": "orders"})
    # the DAG run's load writes what the last load wrote (the same schema)
    raw, stg = ([d for e in events for d in e[side] if d["name"] == n][-1] for side, n in _RAW_STG)
    load = run_pair("orders.load_orders", "load-9", 41, 42, inputs=[raw], outputs=[stg], full_start=True)
    for item in load:
        item["run"]["facets"]["parent"] = parent
    events += [event("START", "orders", "dagrun-9", 40), *load]
    # a task declared in DAG code (a JobEvent) that has not run yet
    events.append(job_event("orders.audit", 46, inputs=[ds("orders_report")], outputs=[ds("audit_log")]))
    events.append(
        event(
            "COMPLETE",
            "orders",
            "dagrun-9",
            45,
            run_facets={
                "airflowState": facet(
                    dagRunState="success", tasksState={"load_orders": "success", "report": "skipped"}
                )
            },
        )
    )
    return events


_RAW_STG = (("inputs", "raw_orders"), ("outputs", "stg_orders"))


def _in_time_order(events: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return sorted(events, key=lambda e: e["eventTime"])


def _post_all(marquez: FakeMarquez, events: list[dict[str, Any]]) -> None:
    for item in events:
        response = httpx.post(
            f"{marquez.url}/api/v1/lineage",
            json=item,
            headers={"Authorization": f"Bearer {API_KEY}"},
            timeout=5,
        )
        assert response.status_code == 201


def _ask(queries: LineageQueries) -> dict[str, Any]:
    return {
        "up": queries.upstream(dataset_node("orders_report"), 10),
        "up2": queries.upstream(dataset_node("orders_report"), 2),
        "down": queries.downstream(dataset_node("raw_orders"), 10),
        "down_run_only": queries.downstream(dataset_node("raw_orders"), 10, include_declared=False),
        "down_job": queries.downstream(job_node("orders.load_orders"), 3),
        "failed": queries.failed_upstream(dataset_node("orders_report"), 10),
        "impact": queries.impact(dataset_node("stg_orders"), 10),
        "schema": queries.schema_diff(dataset_node("stg_orders")),
        "proposed": queries.schema_diff(dataset_node("stg_orders"), [{"name": "order_id", "type": "INT"}]),
        "columns": queries.columns(dataset_node("fct_daily_orders"), "total_usd", 10),
        "lint": queries.lint_names(),
        "lineage": queries.lineage(dataset_node("stg_orders"), 5, limit=3),
    }


def test_marquez_source_gives_the_same_answers_as_the_event_log(
    fake_marquez: FakeMarquez, tmp_path: Path
) -> None:
    events = _events()
    _post_all(fake_marquez, _in_time_order(events))  # a live stream: events arrive in the order they happen
    from_log = _ask(LineageQueries(open_source(events=write_log(tmp_path / "e.jsonl", events))))
    from_marquez = _ask(LineageQueries(open_source(marquez=fake_marquez.url, api_key=API_KEY)))
    exact_log = {key: answer.pop("exact", None) for key, answer in from_log.items()}
    exact_marquez = {key: answer.pop("exact", None) for key, answer in from_marquez.items()}
    assert from_marquez == from_log
    assert set(exact_log.values()) == {True, None}  # lint-names has no graph
    # Marquez's current edges are the latest finished run's: exact where that run completed; the failed
    # build_fct is in every neighbourhood but the column trace (Marquez's column lineage is exact)
    assert {key for key, exact in exact_marquez.items() if exact is False} == set(exact_log) - {
        "columns",
        "lint",
    }
    assert [n["latestRun"]["state"] for n in from_log["failed"]["nodes"]] == ["FAILED"]
    report = next(n for n in from_log["up2"]["nodes"] if n["id"] == job_node("orders.report"))
    # skipped by the scheduler in the last DAG run: known only from the DAG run's tasksState
    assert (report["latestRun"]["state"], report["latestRun"]["runId"]) == ("SKIPPED", None)
    declared = [e for e in from_log["down"]["edges"] if e["state"] == "declared"]
    assert declared == [
        {
            "origin": dataset_node("orders_report"),
            "destination": job_node("orders.audit"),
            "state": "declared",
        },
        {"origin": job_node("orders.audit"), "destination": dataset_node("audit_log"), "state": "declared"},
    ]
    audit = next(n for n in from_log["down"]["nodes"] if n["id"] == job_node("orders.audit"))
    assert audit["declared"] is True and audit["latestRun"] is None
    run_only = {n["id"] for n in from_log["down_run_only"]["nodes"]}
    assert run_only == {n["id"] for n in from_log["down"]["nodes"]} - {
        job_node("orders.audit"),
        dataset_node("audit_log"),
    }


def test_every_fake_marquez_answer_matches_the_openapi_contract(fake_marquez: FakeMarquez) -> None:
    _post_all(fake_marquez, _in_time_order(_events()))
    queries = LineageQueries(open_source(marquez=fake_marquez.url, api_key=API_KEY))
    _ask(queries)
    queries.search("orders")
    queries.node_details(dataset_node("stg_orders"))
    job = queries.node_details(job_node("orders.build_fct"))
    queries.run_details(job["runs"][0]["runId"])
    queries.source.summary()
    checked = {validate_response(path, body) for path, body in fake_marquez.responses}
    assert checked == {
        "LineageGraph",
        "NamespaceList",
        "DatasetList",
        "Dataset",
        "DatasetVersionList",
        "JobList",
        "Job",
        "RunList",
        "Run",
        "SearchResultList",
        "column-lineage",
    }


def test_the_contract_check_accepts_marquez_examples_and_rejects_bad_shapes() -> None:
    node = json.loads(spec_file("examples/lineage__node.json").read_text())
    # the example uses epoch numbers where the spec says date-time strings
    node["data"]["createdAt"] = node["data"]["updatedAt"] = "2021-06-24T13:04:34Z"
    graph = {"graph": [node]}
    node["inEdges"] = node["outEdges"] = []
    validate_response("/api/v1/lineage", graph)
    bad_nodes = [
        {**node, "type": "TABLE"},  # not a node type
        {**node, "id": "dataset:namespace:other"},  # the id names another dataset
        {
            **node,
            "outEdges": [{"origin": node["id"], "destination": "job:namespace:elsewhere"}],
        },  # not in graph
        {**node, "data": {k: v for k, v in node["data"].items() if k != "lastModifiedAt"}},  # a field dropped
    ]
    for bad in bad_nodes:
        with pytest.raises(AssertionError):
            validate_response("/api/v1/lineage", {"graph": [bad]})
    with pytest.raises(AssertionError, match="'type' is a required property"):
        validate("Dataset", {"fields": [{"name": "a"}]}, strict=False)  # a field needs a type


def _marquez_answers(fake: FakeMarquez) -> dict[str, Any]:
    _post_all(fake, _in_time_order(_events()))
    queries = LineageQueries(open_source(marquez=fake.url, api_key=API_KEY))
    queries.node_details(job_node("orders.build_fct"))
    queries.run_details(run_id("fct-2"))
    return {path: body for path, body in fake.responses}


def test_the_contract_check_rejects_what_marquez_would_never_send(fake_marquez: FakeMarquez) -> None:
    answers = _marquez_answers(fake_marquez)
    job = answers["/api/v1/namespaces/pipeline/jobs/orders.build_fct"]
    run = answers[f"/api/v1/jobs/runs/{run_id('fct-2')}"]
    validate_response("/api/v1/namespaces/pipeline/jobs/orders.build_fct", job)
    wrong = {
        "a field Marquez always sends is missing": (
            "Job",
            {k: v for k, v in job.items() if k != "latestRuns"},
        ),
        "a run state Marquez does not have": ("Run", {**run, "state": "SKIPPED"}),
        "a time that is not ISO-8601": ("Run", {**run, "startedAt": "yesterday"}),
        "a run id that is not a UUID": ("Run", {**run, "id": "fct-2"}),
        "a state that is null": ("Run", {**run, "state": None}),
    }
    for reason, (schema, body) in wrong.items():
        with pytest.raises(AssertionError):
            validate(schema, body)
            pytest.fail(reason)
    with pytest.raises(AssertionError):  # durationMs must be endedAt - startedAt
        validate_response(
            f"/api/v1/jobs/runs/{run_id('fct-2')}", {**run, "durationMs": run["durationMs"] + 1}
        )
    with pytest.raises(AssertionError):  # the id names another job
        validate_response(
            "/api/v1/namespaces/pipeline/jobs/x", {**job, "id": {"namespace": "pipeline", "name": "x"}}
        )


def test_marquez_source_reads_node_and_run_details(fake_marquez: FakeMarquez) -> None:
    _post_all(fake_marquez, _in_time_order(_events()))
    queries = LineageQueries(open_source(marquez=fake_marquez.url, api_key=API_KEY))
    job = queries.node_details(job_node("orders.build_fct"))
    assert [r["state"] for r in job["runs"]] == ["FAILED", "COMPLETED"]
    assert job["owners"] == ["team:finance"] and job["outputs"] == [dataset_node("fct_daily_orders")]
    run = queries.run_details(job["runs"][0]["runId"])
    assert run["errorMessage"] == "column amount does not exist"
    assert [o["name"] for o in run["outputs"]] == ["fct_daily_orders"]
    dataset = queries.node_details(dataset_node("stg_orders"))
    assert dataset["lastSchemaChange"][0] == {
        "kind": "COLUMN_REMOVED",
        "column": "amount",
        "from": "DECIMAL",
        "to": None,
    }
    assert [n["id"] for n in queries.search("stg")] == [dataset_node("stg_orders")]
    assert dataset["columnLineage"]["amount_usd"] == [
        {
            "namespace": "warehouse",
            "name": "raw_orders",
            "column": "amount",
            "transformations": [{"type": "DIRECT", "subtype": "TRANSFORMATION", "description": None}],
        }
    ]


def test_unknown_node_in_marquez_is_node_not_found(fake_marquez: FakeMarquez) -> None:
    _post_all(fake_marquez, _events())
    queries = LineageQueries(open_source(marquez=fake_marquez.url, api_key=API_KEY))
    with pytest.raises(NodeNotFound):
        queries.upstream(dataset_node("missing"))
    with pytest.raises(NodeNotFound):
        queries.schema_diff(dataset_node("missing"))


def test_wrong_api_key_is_a_clear_source_error(fake_marquez: FakeMarquez) -> None:
    queries = LineageQueries(open_source(marquez=fake_marquez.url, api_key="wrong"))
    with pytest.raises(SourceUnavailable, match="api-key"):
        queries.upstream(dataset_node("anything"))


def test_marquez_erroring_is_a_clear_source_error(fake_marquez: FakeMarquez) -> None:
    fake_marquez.fail_status = 503
    queries = LineageQueries(open_source(marquez=fake_marquez.url, api_key=API_KEY))
    with pytest.raises(SourceUnavailable, match="503"):
        queries.upstream(dataset_node("anything"))


def test_slow_marquez_fails_within_the_timeout(fake_marquez: FakeMarquez) -> None:
    queries = LineageQueries(open_source(marquez=fake_marquez.url, api_key=API_KEY, timeout=0.3))
    quick = timing.baseline(lambda: queries.upstream(dataset_node("anything")))  # answered at once
    fake_marquez.delay = 3.0
    began = time.monotonic()
    with pytest.raises(SourceUnavailable, match=r"did not answer within 0\.3 s"):
        queries.upstream(dataset_node("anything"))
    took = time.monotonic() - began
    assert 0.3 <= took <= timing.bound(0.3, quick), (
        f"{took:.2f} s for a 0.3 s timeout (baseline {quick:.3f} s)"
    )


def test_marquez_down_is_a_clear_source_error() -> None:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    queries = LineageQueries(open_source(marquez=f"http://127.0.0.1:{port}", timeout=1.0))
    with pytest.raises(SourceUnavailable, match="cannot reach Marquez"):
        queries.failed_upstream(dataset_node("anything"))


def test_a_marquez_that_ignores_offset_is_read_once_not_for_ever(
    fake_marquez: FakeMarquez, monkeypatch: pytest.MonkeyPatch
) -> None:
    from airflow_lineage_plus.graph import marquez

    monkeypatch.setattr(marquez, "PAGE", 3)
    events = [
        item
        for i in range(7)
        for item in run_pair(f"orders.t{i}", f"t{i}", i, i + 0.5, outputs=[ds(f"d{i}")])
    ]
    _post_all(fake_marquez, events)
    queries = LineageQueries(open_source(marquez=fake_marquez.url, api_key=API_KEY))
    assert len(queries.lint_names()["groups"]) == 0 and len(queries.source.dataset_names()) == 7
    fake_marquez.ignore_offset = True
    fake_marquez.responses.clear()
    names = call_within(20, "listing datasets", queries.source.dataset_names)
    assert len(names) == 3  # the first page; the repeated second one ended the listing
    assert [path for path, _ in fake_marquez.responses].count("/api/v1/namespaces/warehouse/datasets") == 2


def test_marquez_runs_keep_upstream_failed_their_dag_and_their_parent_job(fake_marquez: FakeMarquez) -> None:
    events = run_pair("dag.after", "a", 0, 1, "ABORT", outputs=[ds("after_out")])
    for item in events:
        item["run"]["facets"].update(
            {
                "lineagePlus_skipState": facet(skipped=True, reason="TRIGGER_RULE", state="upstream_failed"),
                "airflow": facet(dag={"dag_id": "dag"}),
                "parent": facet(
                    run={"runId": run_id("dagrun")}, job={"namespace": "pipeline", "name": "dag"}
                ),
            }
        )
    _post_all(fake_marquez, events)
    queries = LineageQueries(open_source(marquez=fake_marquez.url, api_key=API_KEY))
    graph = queries.source.graph_for(job_node("dag.after"), 1)
    [run] = graph.jobs[job_node("dag.after")].runs
    assert (run.state, run.dag_id, run.parent_job_id) == ("UPSTREAM_FAILED", "dag", job_node("dag"))


def test_a_one_dag_reader_gets_the_same_answers_from_marquez_as_from_the_event_log(
    fake_marquez: FakeMarquez, tmp_path: Path
) -> None:
    events = permissions_world()
    _post_all(fake_marquez, [e for e in events if "job" in e])
    alpha = {"may_read_dag": lambda dag_id: dag_id == "alpha"}
    from_marquez = LineageQueries(open_source(marquez=fake_marquez.url, api_key=API_KEY), **alpha)
    from_log = LineageQueries(open_source(events=write_log(tmp_path / "world.jsonl", events)), **alpha)
    for queries in (from_marquez, from_log):
        with pytest.raises(NodeNotFound):
            queries.node_details(job_node("beta.score"))
    for node in (dataset_node("scores"), job_node("alpha.publish")):
        marquez_answer, log_answer = from_marquez.lineage(node, 6), from_log.lineage(node, 6)
        assert log_answer.pop("exact") is True  # Marquez says whether it could answer exactly: beta failed
        assert marquez_answer.pop("exact") is False
        assert marquez_answer == log_answer
    assert [n["id"] for n in from_marquez.search("scor")] == [dataset_node("scores")]
    assert from_marquez.search("beta") == []


def test_a_jobs_details_take_a_few_marquez_requests_and_none_per_run(fake_marquez: FakeMarquez) -> None:
    events = []
    for i in range(8):
        events += run_pair(
            "orders.build_fct", f"fct-{i}", i, i + 0.5, inputs=[ds("stg")], outputs=[ds("fct")]
        )
    for item in events:
        item["run"]["facets"]["airflow"] = facet(dag={"dag_id": "orders"}, task={"task_id": "build_fct"})
    _post_all(fake_marquez, events)
    queries = LineageQueries(open_source(marquez=fake_marquez.url, api_key=API_KEY))
    fake_marquez.responses.clear()
    details = queries.node_details(job_node("orders.build_fct"))
    assert len(details["runs"]) == 8
    assert {run["airflow"]["dag_id"] for run in details["runs"]} == {"orders"}
    paths = [path for path, _ in fake_marquez.responses]
    assert not [path for path in paths if path.startswith("/api/v1/jobs/runs/")]
    assert len(paths) <= 5, paths


# -- where Marquez's model gives other answers than the event log (docs/graph.md, "Marquez source") ------


def _both(marquez: FakeMarquez, events: list[dict[str, Any]], tmp_path: Path) -> tuple[LineageQueries, ...]:
    """(from the event log, from Marquez), Marquez fed the events in the order given."""
    _post_all(marquez, events)
    from_log = LineageQueries(open_source(events=write_log(tmp_path / "e.jsonl", events)))
    return from_log, LineageQueries(open_source(marquez=marquez.url, api_key=API_KEY))


def test_a_start_arriving_after_the_failure_hides_the_failed_job_in_marquez_not_in_the_log(
    fake_marquez: FakeMarquez, tmp_path: Path
) -> None:
    events = orders_pipeline(full_start=True)
    events.sort(key=lambda e: e["eventTime"])
    late_start = next(e for e in events if e["eventType"] == "START" and e["run"]["runId"] == run_id("fct-2"))
    from_log, from_marquez = _both(fake_marquez, [*events, late_start], tmp_path)  # a retried START
    target = dataset_node("fct_daily_orders")
    assert [n["id"] for n in from_log.failed_upstream(target, 5)["nodes"]] == [job_node("orders.build_fct")]
    assert from_marquez.failed_upstream(target, 5)["nodes"] == []
    [log_job] = [n for n in from_log.upstream(target, 1)["nodes"]]
    [marquez_job] = [n for n in from_marquez.upstream(target, 1)["nodes"]]
    assert (log_job["latestRun"]["state"], marquez_job["latestRun"]["state"]) == ("FAILED", "RUNNING")


def test_an_input_a_completed_run_dropped_retires_in_both_one_a_failed_run_dropped_only_in_marquez(
    fake_marquez: FakeMarquez, tmp_path: Path
) -> None:
    def two_runs(job: str, output: str, last: str) -> list[dict[str, Any]]:
        first = [ds("stg_orders"), ds("fx_rates")]
        return [
            *run_pair(job, f"{job}-1", 0, 1, inputs=first, outputs=[ds(output)], full_start=True),
            *run_pair(
                job, f"{job}-2", 2, 3, last, inputs=[ds("stg_orders")], outputs=[ds(output)], full_start=True
            ),
        ]

    events = two_runs("orders.build_fct", "fct_daily_orders", "COMPLETE")
    events += two_runs("orders.build_alt", "fct_alt", "FAIL")
    from_log, from_marquez = _both(fake_marquez, events, tmp_path)
    fx_rates = dataset_node("fx_rates")

    def upstream(queries: LineageQueries, target: str, retired: bool = False) -> dict[str, str]:
        answer = queries.upstream(dataset_node(target), 2, include_retired=retired)
        return {e["origin"]: e["state"] for e in answer["edges"]}

    # the latest completed run no longer reads fx_rates: retired in both, shown only when asked for
    assert fx_rates not in upstream(from_log, "fct_daily_orders")
    assert fx_rates not in upstream(from_marquez, "fct_daily_orders")
    assert upstream(from_log, "fct_daily_orders", True)[fx_rates] == "retired"
    assert upstream(from_marquez, "fct_daily_orders", True)[fx_rates] == "retired"
    # a failed run is no evidence the job stopped reading it: current in the log, gone in Marquez
    assert upstream(from_log, "fct_alt")[fx_rates] == "current"
    assert fx_rates not in upstream(from_marquez, "fct_alt")
    assert from_marquez.upstream(dataset_node("fct_alt"), 2)["exact"] is False


def test_a_skip_record_without_outputs_removes_the_jobs_output_edge_in_marquez_only(
    fake_marquez: FakeMarquez, tmp_path: Path
) -> None:
    events = run_pair(
        "orders.report",
        "report-1",
        0,
        1,
        inputs=[ds("fct_daily_orders")],
        outputs=[ds("orders_report")],
        full_start=True,
    )
    record = event(
        "ABORT",
        "orders.report",
        "report-2",
        5,
        inputs=[ds("fct_daily_orders")],
        run_facets={"lineagePlus_skipState": facet(skipped=True, reason="TRIGGER_RULE")},
    )
    from_log, from_marquez = _both(fake_marquez, [*events, record], tmp_path)
    job = job_node("orders.report")
    assert [n["id"] for n in from_log.downstream(job, 1)["nodes"]] == [dataset_node("orders_report")]
    assert from_marquez.downstream(job, 1)["nodes"] == []
    assert from_log.node_details(job)["latestRun"]["state"] == "SKIPPED"
    assert from_marquez.node_details(job)["latestRun"]["state"] == "SKIPPED"


def test_a_schema_seen_only_by_readers_is_no_new_version_in_marquez(
    fake_marquez: FakeMarquez, tmp_path: Path
) -> None:
    v1 = ds("partner_feed", fields=[("id", "BIGINT"), ("amount", "DECIMAL")])
    v2 = ds("partner_feed", fields=[("id", "BIGINT"), ("amount_cents", "BIGINT")])
    events = [
        *run_pair(
            "orders.read_feed", "feed-1", 0, 1, inputs=[v1], outputs=[ds("feed_copy")], full_start=True
        ),
        *run_pair(
            "orders.read_feed", "feed-2", 2, 3, inputs=[v2], outputs=[ds("feed_copy")], full_start=True
        ),
    ]
    from_log, from_marquez = _both(fake_marquez, events, tmp_path)
    feed = dataset_node("partner_feed")
    assert [c["kind"] for c in from_log.schema_diff(feed)["changes"]] == ["COLUMN_REMOVED", "COLUMN_ADDED"]
    assert from_marquez.schema_diff(feed)["changes"] == []
    assert [f["name"] for f in from_marquez.node_details(feed)["fields"]] == ["id", "amount"]
    assert [f["name"] for f in from_log.node_details(feed)["fields"]] == ["id", "amount_cents"]


def test_every_write_is_a_marquez_version_yet_schema_answers_agree(
    fake_marquez: FakeMarquez, tmp_path: Path
) -> None:
    stg = ds("stg_orders", fields=[("order_id", "BIGINT")])
    wider = ds("stg_orders", fields=[("order_id", "BIGINT"), ("day", "DATE")])
    events = [
        *run_pair("orders.load", "load-1", 0, 1, outputs=[stg]),  # START bare: a version without fields
        *run_pair("orders.load", "load-2", 2, 3, outputs=[stg], full_start=True),
        *run_pair("orders.load", "load-3", 4, 5, outputs=[wider], full_start=True),
    ]
    from_log, from_marquez = _both(fake_marquez, events, tmp_path)
    versions = httpx.get(
        f"{fake_marquez.url}/api/v1/namespaces/warehouse/datasets/stg_orders/versions",
        headers={"Authorization": f"Bearer {API_KEY}"},
        timeout=5,
    ).json()["versions"]
    assert [len(v["fields"]) for v in versions] == [
        2,
        1,
        1,
        0,
    ]  # newest first; load-2's START and COMPLETE: one
    node = dataset_node("stg_orders")
    assert from_marquez.schema_diff(node) == from_log.schema_diff(node)
    assert from_marquez.schema_diff(node)["changes"] == [
        {"kind": "COLUMN_ADDED", "column": "day", "from": None, "to": "DATE"}
    ]


def test_an_old_dag_runs_tries_are_found_on_marquez_a_page_at_a_time(
    fake_marquez: FakeMarquez, monkeypatch: pytest.MonkeyPatch
) -> None:
    from airflow_lineage_plus.graph import marquez

    monkeypatch.setattr(marquez, "PAGE", 10)
    _post_all(fake_marquez, daily_runs(22))  # more runs than a job's details list
    queries = LineageQueries(open_source(marquez=fake_marquez.url, api_key=API_KEY))
    load, runs_path = job_node("nightly.load"), "/api/v1/namespaces/pipeline/jobs/nightly.load/runs"
    fake_marquez.responses.clear()
    oldest = [run_id("nightly.load-1-try2"), run_id("nightly.load-1-try1")]
    assert queries.airflow_runs(load, "scheduled__2024-01-01") == oldest
    assert [path for path, _ in fake_marquez.responses].count(
        runs_path
    ) == 3  # 23 runs: pages of 10, 10 and 3
    fake_marquez.responses.clear()
    assert queries.airflow_runs(load, "scheduled__2024-01-21") == [run_id("nightly.load-21-try1")]
    assert [path for path, _ in fake_marquez.responses].count(runs_path) == 2  # its page, then one without it
    assert queries.scoped(lambda dag: dag == "other").airflow_runs(load, "scheduled__2024-01-01") == []
    fake_marquez.ignore_offset = True
    fake_marquez.responses.clear()
    assert call_within(20, "paging runs", queries.airflow_runs, load, "scheduled__2024-01-01") == []
    assert [path for path, _ in fake_marquez.responses].count(runs_path) == 2  # the repeat ended it
