"""A BashOperator with ``dbt_lineage_env_templates()`` (tests/emit/test_dbt_rendered_secrets.py).

Its command stands in for ``dbt-ol``: it builds the dbt transport from ``OPENLINEAGE__TRANSPORT`` as
``dbt-ol``'s client does, and redacts a line holding the warehouse password the task rendered (it
prints whether it did: the task log is masked by Airflow either way).
"""

from __future__ import annotations

import pendulum
from airflow.providers.standard.operators.bash import BashOperator
from airflow.sdk import dag

from airflow_lineage_plus.dbt import dbt_lineage_env_templates

AS_DBT_OL = (
    "import json, os; from openlineage.client.transport import get_default_factory; "
    "get_default_factory().create(json.loads(os.environ['OPENLINEAGE__TRANSPORT'])); "
    "from airflow_lineage_plus.deliver.redaction import scrub; "
    "print('DBT-OL REDACTS IT:', scrub('value ' + os.environ['DB_PASS']) == 'value ***')"
)


@dag(dag_id="dbt_rendered_env", schedule=None, start_date=pendulum.datetime(2024, 6, 1, tz="UTC"))
def dbt_rendered_env() -> None:
    BashOperator(
        task_id="dbt_build",
        bash_command=f'python -c "{AS_DBT_OL}"',
        env={"DB_PASS": "{{ conn.warehouse.password }}", **dbt_lineage_env_templates()},
        append_env=True,
    )


dbt_rendered_env()
