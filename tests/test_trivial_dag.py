"""A real DAG run through the real provider emits spec-valid START and COMPLETE per task instance."""

from __future__ import annotations

from collections import Counter
from pathlib import Path

import pytest

from tests.support.harness import AirflowRunner
from tests.support.openlineage_spec import validate_events

pytestmark = pytest.mark.airflow


def test_trivial_dag_emits_one_valid_start_and_complete_per_task_instance(
    airflow_runner: AirflowRunner, dag_file_dir: Path
) -> None:
    result = airflow_runner.run(dag_file_dir / "trivial.py", dag_id="trivial")
    assert result.returncode == 0, result.output[-3000:]
    assert validate_events(result.events) == len(result.events) > 0
    tasks = {"trivial.extract", "trivial.transform", "trivial.done"}
    counts = Counter((e["job"]["name"], e["eventType"]) for e in result.task_events())
    assert counts == Counter({(t, k): 1 for t in tasks for k in ("START", "COMPLETE")})
    for job, runs in result.runs_by_job().items():
        assert len(runs) == 1, f"{job} has {len(runs)} runs"
    assert [e["eventType"] for e in result.dag_events()] == ["COMPLETE"]
