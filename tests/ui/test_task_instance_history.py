"""The Lineage tab of an old DAG run: a task's tries are found however many DAG runs came after it.

``tests/dags/trivial.py`` runs for real in one Airflow process, one DAG run more than a job's details list
holds (the list is cut to :data:`LISTED` runs here, from its 20, so that a few real runs are enough); the
Lineage view, mounted in Airflow's own app, then opens the task-instance tab of the first one.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from fastapi.testclient import TestClient

from airflow_lineage_plus.graph import details
from tests.support.harness import TESTS, AirflowRunner, DagRunResult, Recording
from tests.support.view_in_process import simple_auth_airflow

pytestmark = [pytest.mark.airflow, pytest.mark.minutes(1)]

#: runs a job's details list holds in these tests (``details.RECENT_RUNS``)
LISTED = 2
#: DAG runs recorded: one more than the details list holds
DAG_RUNS = LISTED + 1
PASSWORDS = {"viewer": "viewer-pw"}


@pytest.fixture(scope="module")
def recorded(airflow_db: Path, tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, list[DagRunResult]]:
    workdir = tmp_path_factory.mktemp("many-dag-runs")
    days = [f"2024-03-{day:02d}T00:00:00+00:00" for day in range(1, DAG_RUNS + 1)]
    results = AirflowRunner(workdir).run_many(
        TESTS / "dags" / "trivial.py",
        recordings=[Recording("trivial", logical_date=day) for day in days],
    )
    assert [result.returncode for result in results] == [0] * DAG_RUNS, results[0].output[-3000:]
    return workdir / "events-trivial.jsonl", results


@pytest.fixture(scope="module")
def client(
    recorded: tuple[Path, list[DagRunResult]], tmp_path_factory: pytest.TempPathFactory
) -> Iterator[TestClient]:
    patch = pytest.MonkeyPatch()
    patch.setattr(details, "RECENT_RUNS", LISTED)
    folder = tmp_path_factory.mktemp("auth")
    with simple_auth_airflow(patch, recorded[0], "viewer:viewer", PASSWORDS, folder) as test_client:
        yield test_client
    patch.undo()


def _viewer(client: TestClient) -> dict[str, str]:
    response = client.post("/auth/token", json={"username": "viewer", "password": PASSWORDS["viewer"]})
    assert response.status_code == 201, response.text
    return {"Authorization": f"Bearer {response.json()['access_token']}"}


def _extract_run(result: DagRunResult) -> tuple[str, str]:
    """(OpenLineage run id, Airflow run_id) of the ``extract`` task's run in one DAG run."""
    events = result.task_events("extract")
    run_ids = {event["run"]["runId"] for event in events}
    assert len(run_ids) == 1 and len(events) == 2
    airflow: dict[str, Any] = events[-1]["run"]["facets"]["airflow"]
    return run_ids.pop(), airflow["dagRun"]["run_id"]


def test_the_first_of_many_dag_runs_opens_on_its_own_try(
    recorded: tuple[Path, list[DagRunResult]], client: TestClient
) -> None:
    headers = _viewer(client)
    runs = [_extract_run(result) for result in recorded[1]]
    assert len({airflow_run for _, airflow_run in runs}) == DAG_RUNS
    listed = client.get(
        "/lineage-plus/api/node", params={"node": "job:test-airflow:trivial.extract"}, headers=headers
    )
    assert listed.status_code == 200, listed.text
    assert runs[0][0] not in {run["runId"] for run in listed.json()["runs"]}  # too old for the details
    for run_id, airflow_run in (runs[0], runs[-1]):
        response = client.get(
            "/lineage-plus/api/task-instance",
            params={"dag_id": "trivial", "task_id": "extract", "run_id": airflow_run, "map_index": -1},
            headers=headers,
        )
        assert response.status_code == 200, response.text
        body = response.json()
        assert [(t["runId"], t["tryNumber"], t["state"]) for t in body["tries"]] == [(run_id, 1, "COMPLETED")]
        assert body["run"]["runId"] == run_id and body["run"]["airflow"]["run_id"] == airflow_run
