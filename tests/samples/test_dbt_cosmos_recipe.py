"""The Cosmos recipe of docs/dbt.md, run for real: Astronomer Cosmos (``ExecutionMode.LOCAL``) builds the
sample dbt project in an Airflow task, and its lineage lands on that task's own events with the dataset
names of this package's identity, dbt's tests as assertions, no dbt child runs.

Cosmos registers an Airflow plugin, a cluster policy and a provider in whatever environment it is installed
in, so it runs from a virtualenv of its own: this one's packages (same Airflow, provider, client, dbt) plus
astronomer-cosmos, built with uv from its cache, and this checkout installed in it (``--no-deps``).
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from tests.support.harness import REPO, AirflowRunner, DagRunResult
from tests.support.openlineage_spec import validate_events

pytestmark = pytest.mark.airflow

COSMOS = "astronomer-cosmos==1.15.1"
DAG_FILE = Path(__file__).resolve().parent / "dags" / "dbt_cosmos.py"


def _cosmos_python(root: Path) -> Path:
    """A virtualenv with this environment's packages and astronomer-cosmos; its Python."""
    uv = str(Path(sys.executable).parent / "uv")
    venv = root / "cosmos-venv"
    frozen = subprocess.run(
        [uv, "pip", "freeze", "-p", sys.executable], capture_output=True, text=True, check=True, timeout=120
    ).stdout
    requirements = root / "requirements.txt"
    requirements.write_text(
        "".join(
            line + "\n" for line in frozen.splitlines() if not line.startswith(("-e", "airflow-lineage-plus"))
        )
    )
    python = venv / "bin" / "python"
    for command in (
        [uv, "venv", "-q", "-p", sys.executable, str(venv)],
        [uv, "pip", "install", "-q", "-p", str(python), "-r", str(requirements), COSMOS],
        [uv, "pip", "install", "-q", "-p", str(python), "--no-deps", "-e", str(REPO)],
    ):
        subprocess.run(command, capture_output=True, text=True, check=True, timeout=600)
    return python


@pytest.fixture(scope="module")
def cosmos_run(airflow_db: Path, tmp_path_factory: pytest.TempPathFactory) -> tuple[DagRunResult, Path]:
    root = tmp_path_factory.mktemp("cosmos")
    warehouse = root / "warehouse" / "analytics.duckdb"
    warehouse.parent.mkdir()
    profiles = root / "profiles.yml"  # the recipe: an absolute path to the DuckDB file
    target = {"type": "duckdb", "path": str(warehouse), "threads": 1}
    profiles.write_text(json.dumps({"shop": {"target": "warehouse", "outputs": {"warehouse": target}}}))
    env = {
        "AIRFLOW_CONN_WAREHOUSE": json.dumps(
            {"conn_type": "duckdb", "host": "localhost", "extra": {"database": str(warehouse)}}
        ),
        "COSMOS_TEST_PROJECT": str(REPO / "dags" / "dbt" / "shop"),
        "COSMOS_TEST_PROFILES": str(profiles),
        "PYTHONPATH": "",  # the checkout is installed in the Cosmos virtualenv
    }
    result = AirflowRunner(root).run(
        DAG_FILE,
        dag_id="dbt_cosmos",
        env=env,
        logical_date="2024-06-01",
        timeout=420,
        python=_cosmos_python(root),
    )
    return result, warehouse


def _complete(result: DagRunResult, task_id: str) -> dict[str, Any]:
    [event] = [e for e in result.task_events(task_id) if e["eventType"] in {"COMPLETE", "FAIL"}]
    return event


def test_cosmos_puts_the_models_lineage_on_its_own_task_with_this_packages_names(
    cosmos_run: tuple[DagRunResult, Path],
) -> None:
    result, warehouse = cosmos_run
    assert result.returncode == 0, result.output[-3000:]
    assert validate_events(result.events) == len(result.events)
    staging = {(d["namespace"], d["name"]) for d in _complete(result, "load_staging")["outputs"]}
    assert staging == {
        (f"duckdb://{warehouse}", "analytics.staging.stg_orders"),
        (f"duckdb://{warehouse}", "analytics.staging.stg_contacts"),
    }
    built = _complete(result, "marts.fct_daily_orders_model_build")
    assert built["eventType"] == "COMPLETE"
    inputs = {(d["namespace"], d["name"]): d for d in built["inputs"]}
    mart = (f"duckdb://{warehouse}", "analytics.marts.fct_daily_orders")
    assert set(inputs) == staging | {mart}  # the tests of `dbt build` read the mart
    assert [(d["namespace"], d["name"]) for d in built["outputs"]] == [mart]
    assertions = inputs[mart]["inputFacets"]["dataQualityAssertions"]["assertions"]
    assert sorted((a["assertion"], a["column"], a["success"]) for a in assertions) == [
        ("not_null", "account_id", True),
        ("not_null", "order_date", True),
    ]


def test_cosmos_makes_no_dbt_child_runs(cosmos_run: tuple[DagRunResult, Path]) -> None:
    result, _ = cosmos_run
    jobs = {e["job"]["name"] for e in result.events}
    assert jobs == {"dbt_cosmos", "dbt_cosmos.load_staging", "dbt_cosmos.marts.fct_daily_orders_model_build"}
    parents = {e["run"]["facets"]["parent"]["job"]["name"] for e in result.task_events()}
    assert parents == {"dbt_cosmos"}
