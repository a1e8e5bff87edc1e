"""Connection-derived dataset names resolve from a connection kept in the metadata database, promptly."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.support.harness import AirflowRunner
from tests.support.openlineage_spec import validate_events

pytestmark = pytest.mark.airflow

DAGS = Path(__file__).parent / "dags"


def test_tables_named_through_a_metadata_db_connection_reach_both_events(
    airflow_runner: AirflowRunner,
) -> None:
    airflow = str(Path(sys.executable).parent / "airflow")
    subprocess.run(
        [airflow, "connections", "delete", "metadata_db_warehouse"],
        env=os.environ.copy(),
        capture_output=True,
    )
    added = subprocess.run(
        [
            airflow,
            "connections",
            "add",
            "metadata_db_warehouse",
            "--conn-uri",
            "postgres://etl:secret@warehouse.internal:5433/analytics",
        ],
        env=os.environ.copy(),
        capture_output=True,
        text=True,
    )
    assert added.returncode == 0, added.stdout + added.stderr
    started = time.monotonic()
    result = airflow_runner.run(DAGS / "connection_tables.py", dag_id="connection_tables")
    elapsed = time.monotonic() - started
    assert result.returncode == 0, result.output[-4000:]
    assert validate_events(result.events) == len(result.events)
    events = result.task_events("fct_daily_orders")
    assert [e["eventType"] for e in events] == ["START", "COMPLETE"]
    for event in events:
        assert [(d["namespace"], d["name"]) for d in event["inputs"]] == [
            ("postgres://warehouse.internal:5433", "analytics.staging.stg_orders")
        ]
        out = event["outputs"][0]
        assert (out["namespace"], out["name"]) == (
            "postgres://warehouse.internal:5433",
            "analytics.marts.fct_daily_orders",
        )
        source = out["facets"]["columnLineage"]["fields"]["total_revenue_usd"]["inputFields"][0]
        assert (source["namespace"], source["name"]) == (
            "postgres://warehouse.internal:5433",
            "analytics.staging.stg_orders",
        )
    assert "was lost" not in result.output
    print(f"run with metadata-db connection lookups took {elapsed:.1f} s")
