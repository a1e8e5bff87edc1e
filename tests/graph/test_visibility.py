"""A reader limited to some DAGs sees their lineage and nothing of the others' (graph/visibility.py).

The world is ``graph_builders.permissions_world``; the reader may read DAG ``alpha`` only.
"""

from __future__ import annotations

import contextlib
import json
from pathlib import Path
from typing import Any

import pytest

from airflow_lineage_plus.graph import LineageQueries, NodeNotFound, open_source
from airflow_lineage_plus.graph.visibility import Visibility
from airflow_lineage_plus.graph.walk import walk
from airflow_lineage_plus.store import wire as w
from tests.support.graph_builders import (
    airflow_facets,
    at,
    dataset_node,
    ds,
    job_event,
    job_node,
    parent_facet,
    permissions_world,
    run_id,
    run_pair,
    with_run_facets,
    write_log,
)
from tests.support.store_engines import store_source_of

SECRETS = ("beta", "secret", "spark", "ghost", "shared_model", "stray", "late_child", "private")


@pytest.fixture(scope="module")
def source(tmp_path_factory: pytest.TempPathFactory) -> Any:
    return open_source(
        events=write_log(tmp_path_factory.mktemp("visibility") / "events.jsonl", permissions_world())
    )


@pytest.fixture
def alpha(source: Any) -> LineageQueries:
    return LineageQueries(source).scoped(lambda dag_id: dag_id == "alpha")


@pytest.fixture
def everyone(source: Any) -> LineageQueries:
    return LineageQueries(source)


def test_each_job_belongs_to_the_dag_its_parent_chain_reaches(source: Any) -> None:
    seen = Visibility(source.graph, lambda dag_id: True)
    owners = {
        name: seen.job_dags(job_node(name))
        for name in (
            "alpha",
            "alpha.publish",
            "beta.score",
            "dbt-run-beta",
            "beta_model.x",
            "dbt-run-alpha",
            "spark_app",
            "shared_model",
            "shared_child",
            "late_child",
            "stray_child",
        )
    }
    assert owners == {
        "alpha": {"alpha"},
        "alpha.publish": {"alpha"},
        "beta.score": {"beta"},
        "dbt-run-beta": {"beta"},  # a child run inherits its parent task's DAG...
        "beta_model.x": {"beta"},  # ... at any depth
        "dbt-run-alpha": {"alpha"},
        "spark_app": {None},  # no parent, no Airflow facet: no DAG
        "shared_model": {"alpha", "beta"},
        "shared_child": {"alpha"},  # its parent run is alpha's, whatever else its parent job ran under
        "late_child": {"beta"},  # parent run not in the log: its parent job's DAG
        "stray_child": {None},  # parent job unknown: no DAG
    }


def test_a_dataset_between_a_hidden_producer_and_hidden_consumers_shows_restricted_placeholders(
    alpha: LineageQueries,
) -> None:
    answer = alpha.lineage(dataset_node("scores"), 6)
    assert {n["id"]: n["type"] for n in answer["nodes"]} == {
        job_node("alpha.publish"): "JOB",
        dataset_node("alpha_report"): "DATASET",
        "restricted:upstream:" + dataset_node("scores"): "RESTRICTED",
        "restricted:downstream:" + dataset_node("scores"): "RESTRICTED",
    }
    placeholders = [n for n in answer["nodes"] if n["type"] == "RESTRICTED"]
    assert all(n["name"] == "" and n["namespace"] == "" for n in placeholders)
    assert {(e["origin"], e["destination"]) for e in answer["edges"]} == {
        (dataset_node("scores"), job_node("alpha.publish")),
        (job_node("alpha.publish"), dataset_node("alpha_report")),
        ("restricted:upstream:" + dataset_node("scores"), dataset_node("scores")),
        (dataset_node("scores"), "restricted:downstream:" + dataset_node("scores")),
    }


def test_no_answer_to_a_one_dag_reader_names_anything_of_another_dag(
    alpha: LineageQueries, source: Any
) -> None:
    graph = source.graph
    answers: list[Any] = [alpha.search(text, 50) for text in ("", "a", "beta", "score", "out", "spark")]
    for node_id in [*graph.jobs, *graph.datasets]:
        with contextlib.suppress(NodeNotFound):
            answers.append(alpha.node_details(node_id))
        for ask in (alpha.lineage, alpha.upstream, alpha.downstream, alpha.failed_upstream, alpha.impact):
            with contextlib.suppress(NodeNotFound):
                answers.append(ask(node_id, 8))
    for run in list(graph.runs):
        with contextlib.suppress(NodeNotFound):
            answers.append(alpha.run_details(run))
    text = json.dumps(answers)
    assert [secret for secret in SECRETS if secret in text] == []
    assert "alpha.publish" in text and "dbt-run-alpha" in text and "lonely_ds" in text


def test_hidden_nodes_and_runs_are_not_found_for_the_reader(alpha: LineageQueries) -> None:
    for node_id in (
        job_node("beta.score"),
        job_node("beta_model.x"),
        dataset_node("beta_private"),
        job_node("spark_app"),
        job_node("shared_model"),
    ):
        with pytest.raises(NodeNotFound):
            alpha.node_details(node_id)
        with pytest.raises(NodeNotFound):
            alpha.lineage(node_id, 3)
    with pytest.raises(NodeNotFound):
        alpha.run_details(run_id("beta-score"))
    assert alpha.run_details(run_id("alpha-publish"))["job"]["id"] == job_node("alpha.publish")
    assert [n["id"] for n in alpha.search("scor", 20)] == [dataset_node("scores")]
    assert alpha.search("beta", 20) == []


def test_dataset_details_leave_out_what_the_reader_may_not_see(
    alpha: LineageQueries, everyone: LineageQueries
) -> None:
    details = alpha.node_details(dataset_node("scores"))
    assert (details["producers"], details["consumers"]) == ([], [job_node("alpha.publish")])
    assert details["restrictedProducers"] is True and details["restrictedConsumers"] is True
    full = everyone.node_details(dataset_node("scores"))
    assert full["producers"] == [job_node("beta.score")]
    assert full["consumers"] == [job_node("alpha.publish"), job_node("spark_app")]
    assert "restrictedProducers" not in full


def test_a_reader_of_every_dag_sees_what_an_unscoped_reader_sees(
    source: Any, everyone: LineageQueries
) -> None:
    all_dags = LineageQueries(source).scoped(lambda dag_id: True)
    for node_id in (dataset_node("scores"), job_node("beta_model.x"), dataset_node("stray_out")):
        assert all_dags.lineage(node_id, 6) == everyone.lineage(node_id, 6)
    assert all_dags.search("o", 100) == everyone.search("o", 100)
    assert "RESTRICTED" not in json.dumps(everyone.lineage(dataset_node("scores"), 6))


def test_a_walk_stops_at_its_node_cap_and_counts_what_it_left_out(tmp_path: Path) -> None:
    events: list[dict[str, Any]] = []
    for i in range(30):
        events += run_pair(
            f"chain.step{i}", f"step-{i}", i, i + 0.5, inputs=[ds(f"d{i}")], outputs=[ds(f"d{i + 1}")]
        )
    graph = open_source(events=write_log(tmp_path / "chain.jsonl", events)).graph
    walked = walk(graph, dataset_node("d0"), 100, upstream=False, cap=10)
    assert len(walked.seen) == 10
    assert sum(walked.cut.values()) == 1
    full = walk(graph, dataset_node("d0"), 100, upstream=False)
    assert len(full.seen) == 61 and full.cut == {}


def test_a_declared_job_and_the_tables_only_it_declares_are_shown_only_to_readers_of_every_dag(
    tmp_path: Path,
) -> None:
    """A JobEvent names no DAG (its job name is only a name): lineage of no DAG. Its declared edges are cut
    for a one-DAG reader like any hidden job's, and a table only it declares is not "touched by no job"."""
    planned = job_event("beta.planned", 20, inputs=[ds("scores")], outputs=[ds("beta_planned_out")])
    log = write_log(tmp_path / "events.jsonl", [*permissions_world(), planned])
    everyone = LineageQueries(open_source(events=log))
    alpha = everyone.scoped(lambda dag_id: dag_id == "alpha")
    out = dataset_node("beta_planned_out")
    states = {(e["origin"], e["destination"]): e["state"] for e in everyone.lineage(out, 2)["edges"]}
    assert states == {
        (job_node("beta.planned"), out): "declared",
        (dataset_node("scores"), job_node("beta.planned")): "declared",
    }
    for node_id in (job_node("beta.planned"), out):
        with pytest.raises(NodeNotFound):
            alpha.node_details(node_id)
    consumers = alpha.node_details(dataset_node("scores"))["consumers"]
    assert consumers == [job_node("alpha.publish")]
    downstream = alpha.downstream(dataset_node("scores"), 3)
    assert {n["id"] for n in downstream["nodes"]} == {
        job_node("alpha.publish"),
        dataset_node("alpha_report"),
        "restricted:downstream:" + dataset_node("scores"),
    }
    assert "planned" not in json.dumps([downstream, alpha.search("planned", 20)])


def _beta_retired_world() -> list[dict[str, Any]]:
    """The permissions world, and two earlier completed runs of beta's task: the first wrote a table the
    second no longer wrote, so that table's only edge is retired; the second wrote ``scores`` with column
    lineage from beta's private table, and alpha's report column comes from it."""
    facets = {**airflow_facets("beta", task_id="score"), "parent": parent_facet("beta", "beta-run")}
    scores = ds("scores", fields=[("v", "TEXT")], columns={"v": [("beta_private", "secret_col", "IDENTITY")]})
    earlier = run_pair("beta.score", "beta-old", 0.1, 0.2, outputs=[ds("beta_retired_out")])
    earlier += run_pair("beta.score", "beta-new", 0.5, 0.6, outputs=[scores])
    report = ds("alpha_report", fields=[("v", "TEXT")], columns={"v": [("scores", "v", "IDENTITY")]})
    publish = run_pair("alpha.publish", "alpha-publish-2", 2.5, 2.6, inputs=[ds("scores")], outputs=[report])
    alpha = {**airflow_facets("alpha", task_id="publish"), "parent": parent_facet("alpha", "alpha-run")}
    return [*permissions_world(), *with_run_facets(earlier, facets), *with_run_facets(publish, alpha)]


def _every_answer(reader: LineageQueries, nodes: list[str], runs: list[str], **when: Any) -> list[Any]:
    """Every question of every node (and run) one reader may ask, ``when`` (as_of) given to all."""
    as_of = when.get("as_of")
    answers: list[Any] = [reader.search(text, 50) for text in ("", "a", "beta", "score", "out", "spark")]
    for node_id in nodes:
        for ask in (
            lambda n: reader.node_details(n, as_of=as_of),
            lambda n: reader.schema_diff(n, as_of=as_of),
            lambda n: reader.columns(n, "v", 8, as_of=as_of),
            *(
                lambda n, q=q: getattr(reader, q)(n, 8, as_of=as_of, include_retired=True)
                for q in ("lineage", "upstream", "downstream", "failed_upstream", "impact")
            ),
        ):
            with contextlib.suppress(NodeNotFound):
                answers.append(ask(node_id))
    for run in runs:
        with contextlib.suppress(NodeNotFound):
            answers.append(reader.run_details(run))
    return answers


def test_no_answer_names_another_dag_whatever_the_reader_the_time_or_the_retired_edges(
    tmp_path: Path,
) -> None:
    """Every question, through the whole log in memory and through the lineage store, now and as of the last
    event time, retired edges included: nothing of beta (a retired edge of a beta job keeps its table
    hidden too), and the same answers either way."""
    log = write_log(tmp_path / "events.jsonl", _beta_retired_world())
    in_memory = open_source(events=log)
    graph = in_memory.graph
    nodes, runs = sorted([*graph.jobs, *graph.datasets]), sorted(graph.runs)
    last = max(w.to_micros(e["eventTime"]) for e in _beta_retired_world())
    answers = {}
    for name, source in (("memory", in_memory), ("store", store_source_of(log))):
        reader = LineageQueries(source).scoped(lambda dag_id: dag_id == "alpha")
        for when in (None, last):
            answers[(name, when)] = _every_answer(reader, nodes, runs, as_of=when)
    for key, found in answers.items():
        text = json.dumps(found)
        assert [secret for secret in SECRETS if secret in text] == [], key
        assert "alpha.publish" in text and "dbt-run-alpha" in text and "lonely_ds" in text, key
    assert answers[("store", None)] == answers[("memory", None)]
    assert answers[("store", last)] == answers[("memory", last)]
    trace = (
        LineageQueries(in_memory)
        .scoped(lambda dag_id: dag_id == "alpha")
        .columns(dataset_node("alpha_report"), "v", 8)
    )
    assert [(row["name"], row["column"]) for row in trace["upstream"]] == [("scores", "v")]
    assert len(trace["paths"]) == 1  # scores.v -> alpha_report.v; nothing past the hidden table
    everyone = LineageQueries(in_memory)
    full = everyone.columns(dataset_node("alpha_report"), "v", 8)["upstream"]
    assert [(row["name"], row["column"]) for row in full] == [("scores", "v"), ("beta_private", "secret_col")]
    downstream = everyone.downstream(
        job_node("beta.score"), 1, include_retired=True, as_of=w.to_micros(at(9))
    )
    assert {(e["destination"], e["state"]) for e in downstream["edges"]} >= {
        (dataset_node("beta_retired_out"), "retired")
    }


def test_runs_under_one_parent_run_that_is_not_in_the_graph_take_the_dag_of_their_own_parent_job(
    tmp_path: Path,
) -> None:
    events = (
        with_run_facets(run_pair("alpha.task", "a1", 1, 2), airflow_facets("alpha", task_id="task"))
        + with_run_facets(run_pair("beta.task", "b1", 1, 2), airflow_facets("beta", task_id="task"))
        + with_run_facets(
            run_pair("child_a", "c1", 3, 4), {"parent": parent_facet("alpha.task", run_id("gone"))}
        )
        # the same parent run (not in the graph), another parent job
        + with_run_facets(
            run_pair("child_b", "c2", 3, 4), {"parent": parent_facet("beta.task", run_id("gone"))}
        )
    )
    graph = open_source(events=write_log(tmp_path / "events.jsonl", events)).full_graph()
    dags = Visibility(graph, lambda _: True)
    assert [dags.runs_dags(job_node(name)) for name in ("child_a", "child_b")] == [
        frozenset({"alpha"}),
        frozenset({"beta"}),
    ]
