"""dbt Core run from Airflow tasks, its runs children of the task's run (the names users import).

``from airflow_lineage_plus.dbt import run_dbt`` in a ``@task``; ``dbt_lineage_env_templates()`` as a
``BashOperator``'s ``env``; ``DbtLineageTransport`` is the transport ``dbt-ol`` is given. See docs/dbt.md.
"""

from __future__ import annotations

from airflow_lineage_plus.dbt.dbt_events import DbtLineageTransport, dataset_identity
from airflow_lineage_plus.dbt.dbt_run import (
    TaskRunIds,
    dbt_lineage_env,
    dbt_lineage_env_templates,
    dbt_transport_config,
    run_dbt,
)
from airflow_lineage_plus.exceptions import DbtRunFailed

__all__ = [
    "DbtLineageTransport",
    "DbtRunFailed",
    "TaskRunIds",
    "dataset_identity",
    "dbt_lineage_env",
    "dbt_lineage_env_templates",
    "dbt_transport_config",
    "run_dbt",
]
