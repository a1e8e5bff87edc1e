"""The jobs a run ran and the runs that ran a run (graph/ancestry.py) are the same whatever graph answers:
folded in memory, read again after events were appended, read from the lineage store, and folded as of an
earlier time.

The world is ``graph_builders.permissions_world``: task ``beta.score`` runs ``dbt-run-beta``, which runs
``beta_model.x``; task ``alpha.publish`` runs ``dbt-run-alpha`` and ``shared_model``, which runs
``shared_child``; ``shared_model`` also runs under ``beta.score``.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from airflow_lineage_plus.graph import LineageQueries, open_source
from airflow_lineage_plus.graph.ancestry import descendant_jobs
from airflow_lineage_plus.graph.eventlog import EventLogSource
from airflow_lineage_plus.graph.store_source import StoreSource
from airflow_lineage_plus.graph.stored_graph import StoredGraph
from airflow_lineage_plus.store import LineageStore, sqlite_url
from airflow_lineage_plus.store import wire as w
from airflow_lineage_plus.store.database import SCRATCH
from airflow_lineage_plus.store.facts import Facts
from tests.support.graph_builders import at, job_node, permissions_world, run_id, write_log

BETA_RAN = [job_node("dbt-run-beta"), job_node("shared_model"), job_node("beta_model.x")]
ALPHA_RAN = [job_node("dbt-run-alpha"), job_node("shared_model"), job_node("shared_child")]
MODEL_RAN_BY = [("dbt-run-beta", "dbt-beta"), ("beta.score", "beta-score")]


def _ran_by(queries: LineageQueries, **when: Any) -> list[tuple[str, str]]:
    node = queries.lineage(job_node("beta_model.x"), 0, **when)["target"]
    return [(parent["name"], parent["runId"]) for parent in node.get("ranBy", [])]


def _labelled(pairs: list[tuple[str, str]]) -> list[tuple[str, str]]:
    return [(name, run_id(label)) for name, label in pairs]


def _sources(tmp_path: Path) -> dict[str, Any]:
    events = permissions_world()
    whole = write_log(tmp_path / "whole.jsonl", events)
    # the first read knows the DAG runs and tasks; every child run (dbt's) is appended after it
    parents = [e for e in events if "parent" not in (e.get("run") or {}).get("facets", {})]
    children = [e for e in events if e not in parents]
    appended = write_log(tmp_path / "appended.jsonl", parents)
    later = EventLogSource(appended)
    with open(appended, "a") as handle:
        handle.writelines(json.dumps(e) + "\n" for e in children)
    assert later.refresh() == len(children)
    store = LineageStore(sqlite_url(tmp_path / "lineage.db"))
    assert store.append(json.dumps(e).encode() for e in events).added == len(events)
    return {
        "memory": open_source(events=whole),
        "memory+appended": later,
        "store": StoreSource(store, owns_store=True),
    }


def test_a_task_lists_the_jobs_it_ran_and_a_model_the_runs_that_ran_it_from_every_source(
    tmp_path: Path,
) -> None:
    for name, source in _sources(tmp_path).items():
        queries = LineageQueries(source)
        assert queries.descendants(job_node("beta.score")) == BETA_RAN, name
        assert queries.descendants(job_node("alpha.publish")) == ALPHA_RAN, name
        assert queries.descendants(job_node("spark_app")) == [], name
        assert _ran_by(queries) == _labelled(MODEL_RAN_BY), name
        details = queries.run_details(run_id("model-x"))
        assert [(p["name"], p["runId"]) for p in details["ranBy"]] == _labelled(MODEL_RAN_BY), name
        # a reader of DAG alpha: shared_model also ran under beta, so it is not named
        alpha = queries.scoped(lambda dag_id: dag_id == "alpha")
        assert alpha.descendants(job_node("alpha.publish")) == [
            job_node("dbt-run-alpha"),
            job_node("shared_child"),
        ], name
        # as of a time before shared_model ran under alpha.publish (minute 2.3), and before the model ran
        early = w.to_micros(at(2.25))
        assert queries.descendants(job_node("alpha.publish"), as_of=early) == [job_node("dbt-run-alpha")], (
            name
        )
        assert queries.descendants(job_node("beta.score"), as_of=w.to_micros(at(1.25))) == [
            job_node("dbt-run-beta")
        ], name
        assert _ran_by(queries, as_of=w.to_micros(at(1.35))) == _labelled(MODEL_RAN_BY), name
        source.close()


def test_a_run_named_by_its_parent_only_in_later_events_knows_the_jobs_it_ran() -> None:
    events = permissions_world()
    for event in events[::2]:  # these events do not name the parent: the others (folded after) do
        event.get("run", {}).get("facets", {}).pop("parent", None)
    lines = [json.dumps(e).encode() for e in events]
    store = LineageStore(SCRATCH)
    for index in [*range(0, len(lines), 2), *range(1, len(lines), 2)]:  # each half has half of each run
        facts = Facts()
        assert facts.add_bytes(lines[index], index)
        store.fold(facts)
    graph = StoredGraph(store)
    assert descendant_jobs(graph, job_node("beta.score")) == BETA_RAN
    assert descendant_jobs(graph, job_node("alpha.publish")) == ALPHA_RAN


@pytest.mark.parametrize("kind", ["memory", "store"])
def test_a_job_that_ran_nothing_lists_no_descendants(tmp_path: Path, kind: str) -> None:
    log = write_log(tmp_path / "events.jsonl", permissions_world())
    source = open_source(events=log) if kind == "memory" else _sources(tmp_path)["store"]
    queries = LineageQueries(source)
    assert queries.descendants(job_node("beta_model.x")) == []
    assert queries.descendants("dataset:warehouse:scores") == []
    source.close()
