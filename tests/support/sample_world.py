"""Sample pipelines under test: a local S3 endpoint, an embedded warehouse and the four demo runs.

The sample DAGs run for real (``airflow dags test`` through the harness in ``harness.py``) against moto's
S3-compatible server and a DuckDB warehouse, reached through the same Airflow connection ids as in
production (``aws_default``, ``warehouse``). The four runs are recorded once per test process (the
``demo_runs`` fixture of ``tests/conftest.py``) and shared by the samples, the CLI and the browser tests
(one xdist group: ``pytest_collection_modifyitems`` there).
"""

from __future__ import annotations

import os
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from tests.support.harness import REPO, AirflowRunner, DagRunResult, Recording

if str(REPO) not in sys.path:
    sys.path.insert(0, str(REPO))

from demo.environment import DAGS, skip_facets_available, warehouse_connection
from demo.run import SAMPLE_RUNS
from demo.s3_endpoint import LocalS3

BUCKET = "raw-data-lake"
CRM_DAG = DAGS / "crm_contacts_ingestion.py"
ORDERS_DAG = DAGS / "ecommerce_orders.py"


def local_s3_session() -> Iterator[LocalS3]:
    """moto's S3 server with the sample bucket, for as long as the generator is not closed."""
    s3 = LocalS3()
    s3.start()
    s3.create_bucket(BUCKET)
    yield s3
    s3.stop()


@dataclass
class SampleWorld:
    """The systems the sample DAGs ran against, and a runner that runs them there."""

    root: Path
    env: dict[str, str]
    warehouse_file: Path
    s3: LocalS3

    def run_many(self, name: str, dag_files: list[Path], recordings: list[Recording]) -> list[DagRunResult]:
        """``recordings`` in one Airflow process and one work directory (:meth:`AirflowRunner.run_many`):
        each result still holds exactly its run's events."""
        return AirflowRunner(self.root / name).run_many(
            *dag_files, recordings=recordings, env=self.env, name=name
        )


def make_world(root: Path, s3: LocalS3) -> SampleWorld:
    warehouse_file = root / "warehouse" / "analytics.duckdb"
    warehouse_file.parent.mkdir(parents=True)
    env = {
        "AIRFLOW_CONN_AWS_DEFAULT": s3.airflow_connection(),
        "AIRFLOW_CONN_WAREHOUSE": warehouse_connection(warehouse_file),
        # the DAGs folder first (lineage_samples), then what the tests run with (this checkout's package)
        "PYTHONPATH": os.pathsep.join(p for p in (str(DAGS), os.environ.get("PYTHONPATH", "")) if p),
    }
    if skip_facets_available():
        env["AIRFLOW__OPENLINEAGE__CUSTOM_RUN_FACETS"] = "airflow_lineage_plus.skip.run_facets"
    return SampleWorld(root=root, env=env, warehouse_file=warehouse_file, s3=s3)


@dataclass
class DemoRuns:
    """The four runs most tests read (:meth:`all`) and the CRM's later days (:attr:`crm_later`)."""

    crm: DagRunResult
    orders_ok: DagRunResult
    orders_empty: DagRunResult
    orders_failed: DagRunResult
    world: SampleWorld
    #: the demo's later CRM days (``demo.run.SAMPLE_RUNS``): two ordinary ones, the day the CRM returns
    #: fewer contacts, the day the staging SQL changes; what the view's what-changed tests read
    crm_later: list[DagRunResult]

    def all(self) -> list[DagRunResult]:
        return [self.crm, self.orders_ok, self.orders_empty, self.orders_failed]

    def events(self) -> list[dict[str, Any]]:
        return [event for result in self.all() for event in result.events]


#: the CRM days the demo runs after the first, as it runs them (conf and environment)
CRM_LATER = [
    Recording(run.dag_id, run.logical_date, run.conf or None, dict(run.env))
    for run in SAMPLE_RUNS
    if run.dag_id == "crm_contacts_ingestion" and run.logical_date != "2024-06-01"
]


def record_demo_runs(local_s3: LocalS3, root: Path) -> DemoRuns:
    """The demo's runs: CRM contacts, a good day, a day without orders, a day whose dbt model fails, then
    the CRM's later days (:data:`CRM_LATER`), all in one Airflow process."""
    world = make_world(root, local_s3)
    crm, orders_ok, orders_empty, orders_failed, *crm_later = world.run_many(
        "demo",
        [CRM_DAG, ORDERS_DAG],
        [
            Recording("crm_contacts_ingestion", "2024-06-01", {}),
            Recording("ecommerce_orders", "2024-06-01", {"order_count": 40}),
            Recording("ecommerce_orders", "2024-06-02", {"order_count": 0}),
            Recording(
                "ecommerce_orders", "2024-06-03", {"order_count": 25, "fail_stage": "fct_daily_orders"}
            ),
            *CRM_LATER,
        ],
    )
    return DemoRuns(crm, orders_ok, orders_empty, orders_failed, world=world, crm_later=crm_later)
