"""A DAG of the beta team that has never run: its lineage is known only from ``lineage-plus publish-static``
(one JobEvent per declaring task), for the per-DAG permission tests of declared lineage.

Its task reads the shared ``analytics.shared.customer_scores`` (which a reader of ``perm_alpha`` sees) and
declares a write to a beta-only table: a reader of ``perm_alpha`` only must get neither the task nor that
table, through any route. Kept apart from ``tests/ui/dags`` so that the real runs never parse it.
"""

from __future__ import annotations

import pendulum
from airflow.sdk import dag, task

from airflow_lineage_plus import datasets as ds
from airflow_lineage_plus import lineage

SCORES = ds.postgres("warehouse", "analytics", "shared", "customer_scores")
EXPORT = ds.postgres("warehouse", "analytics", "beta_vault", "scores_export")


@dag(schedule=None, start_date=pendulum.datetime(2024, 1, 1, tz="UTC"), catchup=False, tags=["test"])
def perm_beta_planned() -> None:
    @lineage(inputs=[SCORES], outputs=[EXPORT])
    @task
    def export_scores() -> None:
        pass

    export_scores()


perm_beta_planned()
