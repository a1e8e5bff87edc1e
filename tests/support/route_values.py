"""Requests for every route of the Lineage app, with every value of its parameters an event log offers.

A permission test asks each route with all of them, so a route added later is covered the day it is
added; a route with a parameter this module does not know fails the test, naming what to add here.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

#: what the search box might be given
SEARCH_TEXTS = ("a", "alpha", "beta", "perm", "secret", "customer", "scor", "model", "analytics", "notify")
DIRECTIONS = ("both", "upstream", "downstream")


@dataclass
class RouteValues:
    nodes: list[str]
    runs: list[str]
    dags: list[str]
    tasks: dict[str, list[str]]  # DAG id -> task ids
    airflow_runs: dict[str, list[str]]  # DAG id -> Airflow run ids
    static_files: list[str]
    beta_run_ids: list[str]  # the OpenLineage run ids of the hidden DAG's runs and their children's
    columns: dict[str, list[str]]  # dataset node -> the columns its schema and column-lineage facets name
    as_of: str  # the latest event time: asked "as of" it, a route shows everything, through the time path

    @classmethod
    def from_log(cls, log: Path, dags: list[str], hidden_dag: str) -> RouteValues:
        from airflow_lineage_plus.ui.view_app import STATIC_FILES

        events = [json.loads(line) for line in log.read_text().splitlines() if line.strip()]
        nodes: set[str] = set()
        tasks: dict[str, set[str]] = {dag: set() for dag in dags}
        airflow_runs: dict[str, set[str]] = {dag: set() for dag in dags}
        hidden_runs: set[str] = set()
        columns: dict[str, set[str]] = {}
        for event in events:
            job = event["job"]
            nodes.add(f"job:{job['namespace']}:{job['name']}")
            for item in [*event.get("inputs", []), *event.get("outputs", [])]:
                nodes.add(f"dataset:{item['namespace']}:{item['name']}")
                columns.setdefault(f"dataset:{item['namespace']}:{item['name']}", set()).update(
                    _columns(item)
                )
            dag, task = _dag_and_task(job["name"], dags)
            if dag and task:
                tasks[dag].add(task)
            facets = (event.get("run") or {}).get("facets") or {}  # a JobEvent (declared) has no run
            for key in ("airflow", "airflowDagRun"):
                run_id = ((facets.get(key) or {}).get("dagRun") or {}).get("run_id")
                if dag and run_id:
                    airflow_runs[dag].add(run_id)
            parent = ((facets.get("parent") or {}).get("job") or {}).get("name", "")
            if "run" in event and hidden_dag in (dag, _dag_and_task(parent, dags)[0]):
                hidden_runs.add(event["run"]["runId"])
        return cls(
            nodes=sorted(nodes),
            runs=sorted({event["run"]["runId"] for event in events if "run" in event}),
            dags=list(dags),
            tasks={dag: sorted(found) for dag, found in tasks.items()},
            airflow_runs={dag: sorted(found) for dag, found in airflow_runs.items()},
            static_files=sorted(STATIC_FILES),
            beta_run_ids=sorted(hidden_runs),
            columns={node: sorted(found) for node, found in columns.items() if found},
            as_of=max(event["eventTime"] for event in events),
        )

    def requests(self, route: Any) -> Iterator[tuple[str, dict[str, Any]]]:
        """(path, query parameters) for every request to ask ``route`` (a FastAPI ``APIRoute``)."""
        dependant = route.dependant
        params = {p.name: p for p in [*dependant.query_params, *dependant.path_params]}
        unknown = set(params) - {
            "node",
            "depth",
            "direction",
            "run",
            "dag_id",
            "task_id",
            "run_id",
            "map_index",
            "q",
            "limit",
            "name",
            "declared",  # left at its default, true: declared edges too, the most a route can show
            "as_of",  # asOf: once per node, the latest event time (every node is there then)
            "include_retired",  # includeRetired: true with asOf, the most a route can show
            "column",
            "proposed",  # left out: a proposed schema changes what is compared, not what is shown
            "baseline_runs",  # left at the configured baseline: it changes what is compared, not shown
        }
        if unknown:
            pytest.fail(
                f"route {route.path} has parameters {sorted(unknown)}: give them values in route_values.py"
            )
        yield from self._requests(route.path, params)

    def _requests(self, path: str, params: dict[str, Any]) -> Iterator[tuple[str, dict[str, Any]]]:
        depth = {"depth": 8} if "depth" in params else {}
        if "name" in params:
            for name in self.static_files:
                yield path.replace("{name}", name), {}
        elif "column" in params:
            for node in self.nodes:
                if not node.startswith("dataset:"):
                    continue
                columns = self.columns.get(node) or ["id"]  # a column no facet names: "not found" too
                for column in columns:
                    yield path, {"node": node, "column": column, **depth}
                yield path, {"node": node, "column": columns[0], **depth, "asOf": self.as_of}
        elif "node" in params:
            for node in self.nodes:
                for direction in DIRECTIONS if "direction" in params else (None,):
                    yield path, {"node": node, **depth, **({"direction": direction} if direction else {})}
                if "as_of" in params:
                    retired = {"includeRetired": "true"} if "include_retired" in params else {}
                    yield path, {"node": node, **depth, "asOf": self.as_of, **retired}
        elif "run" in params:
            for run in self.runs:
                yield path, {"run": run}
        elif "task_id" in params:
            for dag, tasks in self.tasks.items():
                for task in tasks:
                    yield path, {"dag_id": dag, "task_id": task}
                    for run_id in self.airflow_runs[dag]:
                        yield path, {"dag_id": dag, "task_id": task, "run_id": run_id, "map_index": -1}
        elif "dag_id" in params:
            for dag in self.dags:
                yield path, {"dag_id": dag, **depth}
                if "as_of" in params:
                    yield path, {"dag_id": dag, **depth, "asOf": self.as_of, "includeRetired": "true"}
        elif "q" in params:
            for text in SEARCH_TEXTS:
                yield path, {"q": text, "limit": 200}
        else:
            required = [name for name, param in params.items() if param.required]
            if required:
                pytest.fail(f"route {path} requires {required}: give them values in route_values.py")
            yield path, {}


def _columns(item: dict[str, Any]) -> set[str]:
    """The columns a dataset's schema and column-lineage facets name."""
    facets = item.get("facets") or {}
    fields = (facets.get("schema") or {}).get("fields") or []
    lineage = (facets.get("columnLineage") or {}).get("fields") or {}
    return {field["name"] for field in fields if "name" in field} | set(lineage)


def _dag_and_task(job_name: str, dags: list[str]) -> tuple[str | None, str | None]:
    """(DAG id, task id) of a provider job name ``<dag_id>`` or ``<dag_id>.<task_id>`` of one of ``dags``."""
    for dag in dags:
        if job_name == dag:
            return dag, None
        if job_name.startswith(dag + "."):
            return dag, job_name[len(dag) + 1 :]
    return None, None
