"""The event logs the Lineage view tests read, from DAGs run for real; each recorded once per process.

* ``record_pipeline``: ``tests/ui/dags/ui_orders.py`` run twice. The first run succeeds end to end; the
  second (a later logical date) fails at ``load_stg_orders``, so the mart table's newest upstream state
  is "a stage two hops up failed". It also writes a dataset named ``<img src=x onerror=alert(1)>``.
* ``record_sample_pipeline``: the project's sample pipeline (``dags/ecommerce_orders.py`` and
  ``dags/crm_contacts_ingestion.py``), the failing day and the CRM's days that change on purpose included:
  the samples' own recording (the ``demo_runs`` fixture), plus the hostile name.
* ``record_permission_pipeline``: ``tests/ui/dags/perm_dags.py``, two DAGs of two teams sharing a table.
"""

from __future__ import annotations

import json
import shutil
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any

from airflow_lineage_plus import cli
from tests.support.harness import AirflowRunner, DagRunResult, Recording

DAGS = Path(__file__).resolve().parent / "dags"
DAG_FILE = DAGS / "ui_orders.py"
DAG_ID = "ui_orders"
NAMESPACE = "test-airflow"
WAREHOUSE = "postgres://warehouse:5432"
MART_ID = f"dataset:{WAREHOUSE}:analytics.marts.fct_daily_orders"
STG_ID = f"dataset:{WAREHOUSE}:analytics.staging.stg_orders"
RAW_ID = "dataset:s3://acme-raw:orders/2024-01-01.json"
HOSTILE_NAME = "<img src=x onerror=alert(1)>"
HOSTILE_ID = f"dataset:{WAREHOUSE}:{HOSTILE_NAME}"
JOB_IDS = {
    task: f"job:{NAMESPACE}:{DAG_ID}.{task}"
    for task in ("ingest_orders_to_s3", "load_stg_orders", "fct_daily_orders")
}


@cache
def record_pipeline(basetemp: Path) -> tuple[Path, DagRunResult, DagRunResult]:
    """(event log, good run, failed run), recorded once per process under pytest's ``basetemp``."""
    workdir = basetemp / "ui-orders"
    workdir.mkdir(parents=True, exist_ok=True)
    runner = AirflowRunner(workdir)
    good, failed = runner.run_many(
        DAG_FILE,
        recordings=[
            Recording(DAG_ID, "2024-01-01T00:00:00+00:00"),
            Recording(DAG_ID, "2024-01-02T00:00:00+00:00", {"fail_stage": True}),
        ],
    )
    log = workdir / f"events-{DAG_ID}.jsonl"
    stable = workdir / "lineage-events.jsonl"
    shutil.copy(log, stable)
    return stable, good, failed


@dataclass
class SamplePipeline:
    """The sample orders pipeline's events (plus the hostile name from ``ui_orders``), for the browser."""

    log: Path
    mart_id: str
    job_ids: dict[str, str]  # stage task id -> job id (fct_daily_orders: the dbt model the task runs)
    failed_run: DagRunResult
    dbt_task_id: str  # the job of the task that runs dbt
    warehouse: str  # the namespace of the warehouse's tables (the DuckDB file of the recording)


def record_sample_pipeline(basetemp: Path, demo_runs: Any) -> SamplePipeline:
    """The samples' demo runs (CRM, a good day, a day without orders, a day whose dbt model fails, the
    CRM's later days: fewer contacts, then a new staging SQL)."""
    runs = demo_runs.all()
    workdir = basetemp / "ui-sample-pipeline"
    workdir.mkdir(parents=True, exist_ok=True)
    hostile_log, _, _ = record_pipeline(basetemp)
    log = workdir / "sample-events.jsonl"
    with log.open("w") as out:
        for run in [*runs, *demo_runs.crm_later]:
            out.writelines(json.dumps(event) + "\n" for event in run.events)
        out.write(hostile_log.read_text())
    # the mart is built by the dbt model that the task fct_daily_orders runs
    mart = next(
        output
        for event in runs[1].events
        if event["job"]["name"] == MART_MODEL
        for output in event.get("outputs", [])
        if output["name"].endswith("marts.fct_daily_orders")
    )
    namespace = runs[1].task_events("fct_daily_orders")[0]["job"]["namespace"]
    job_ids = {stage: f"job:{namespace}:ecommerce_orders.{stage}" for stage in SAMPLE_STAGES}
    return SamplePipeline(
        log=log,
        mart_id=f"dataset:{mart['namespace']}:{mart['name']}",
        job_ids={**job_ids, "fct_daily_orders": f"job:{namespace}:{MART_MODEL}"},
        failed_run=runs[3],
        dbt_task_id=job_ids["fct_daily_orders"],
        warehouse=mart["namespace"],
    )


SAMPLE_STAGES = ("ingest_orders_to_s3", "load_stg_orders", "fct_daily_orders")
MART_MODEL = "analytics.marts.shop.fct_daily_orders.build.run"

PERM_DAG_FILE = DAGS / "perm_dags.py"
#: DAGs that never run: their lineage is only declared (``lineage-plus publish-static``)
PLANNED_DAGS = DAGS.parent / "declared_dags"
ALPHA_DAG, BETA_DAG = "perm_alpha", "perm_beta"
#: the alpha DAG's task: its job name is longer than a node's line, to see it shown whole
ALPHA_TASK = "publish_customer_report_for_the_board"
#: what perm_beta's lineage says that a reader of perm_alpha only must never get: names of its jobs,
#: datasets and child job, its SQL, error, description, owning team (its run ids come from the log)
BETA_STRINGS = (
    "perm_beta",
    "beta_vault",
    "beta_scoring_model",
    "notify_beta",
    "score_customers",
    "beta_secret_formula",
    "beta-secret-error",
    "beta-confidential",
    "beta-secret-team",
    "score_audit",
    "scores_export",
)


@dataclass
class PermissionPipeline:
    """The events of ``tests/ui/dags/perm_dags.py``: one run of each DAG (beta's fails), one log."""

    log: Path
    alpha: DagRunResult
    beta: DagRunResult


@cache
def record_permission_pipeline(workdir: Path) -> PermissionPipeline:
    """Both DAGs of ``perm_dags.py`` run for real (different logical dates, so different run ids), then
    the declared lineage of ``declared_dags/perm_planned.py`` (a beta DAG that never ran) published to the
    same log with ``lineage-plus publish-static``."""
    workdir.mkdir(parents=True, exist_ok=True)
    runner = AirflowRunner(workdir)
    beta, alpha = runner.run_many(
        PERM_DAG_FILE,
        recordings=[
            Recording(BETA_DAG, "2024-03-02T00:00:00+00:00"),
            Recording(ALPHA_DAG, "2024-03-01T00:00:00+00:00"),
        ],
        name="perm",
    )
    log = workdir / "permission-events.jsonl"
    with log.open("w") as out:
        for run in (beta, alpha):
            out.writelines(json.dumps(event) + "\n" for event in run.events)
    code, _, err = cli.run(["--events", str(log), "publish-static", "--dags", str(PLANNED_DAGS)])
    assert code == 0, err
    return PermissionPipeline(log=log, alpha=alpha, beta=beta)
