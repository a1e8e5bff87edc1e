"""Two DAGs of two teams, for the alert permission tests (the probe of issue 27).

``sec`` (team:secret) loads a private table and models it into the shared ``shared.margins``; its
``load`` fails when the run's conf says so, with an error naming a customer. ``pub`` (team:pub) reports
from the shared table. A one-DAG reader of ``pub`` must learn of ``sec`` only that an upstream failed.
"""

from __future__ import annotations

import pendulum
from airflow.sdk import dag, get_current_context, task

from airflow_lineage_plus import Output, lineage
from airflow_lineage_plus import datasets as ds

SEC_RAW = ds.postgres("warehouse", "analytics", "sec_vault", "sec_raw")
MARGINS = ds.postgres("warehouse", "analytics", "shared", "margins")
REPORT = ds.postgres("warehouse", "analytics", "pub_reports", "margin_report")
SEC_ERROR = "margin calc for customer 4711 failed"


@dag(schedule=None, start_date=pendulum.datetime(2024, 1, 1, tz="UTC"), catchup=False, tags=["test"])
def sec() -> None:
    @lineage(outputs=[Output(SEC_RAW, owners=["team:secret"])], owners=["team:secret"])
    @task
    def load() -> None:
        if (get_current_context()["dag_run"].conf or {}).get("fail"):
            raise ValueError(SEC_ERROR)

    @lineage(inputs=[SEC_RAW], outputs=[Output(MARGINS, owners=["team:secret"])], owners=["team:secret"])
    @task
    def model() -> None:
        pass

    load() >> model()


@dag(schedule=None, start_date=pendulum.datetime(2024, 1, 1, tz="UTC"), catchup=False, tags=["test"])
def pub() -> None:
    @lineage(inputs=[MARGINS], outputs=[Output(REPORT, owners=["team:pub"])], owners=["team:pub"])
    @task
    def report() -> None:
        pass

    report()


sec()
pub()
