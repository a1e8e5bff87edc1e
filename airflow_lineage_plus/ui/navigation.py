"""Where the Lineage view appears in the Airflow UI: a "Lineage" entry in the navigation, and tabs.

Airflow 3 shows ``external_views`` in an iframe and fills ``{DAG_ID}``, ``{RUN_ID}`` and ``{TASK_ID}``
into ``href`` for the DAG, task and task-instance pages: percent-encoded by Airflow 3.3, but as they
are by Airflow 3.1, so there a run id's "+" (``manual__...+00:00``) reaches the page bare. The page
reads these three parameters with "+" as a plus, not a space (``airflowParam`` in static/state.js),
which is right for both. (``{MAP_INDEX}`` is left as is for unmapped tasks, so it is not used: the tab
shows every recorded try of the task in that run.)
"""

from __future__ import annotations

from typing import Any

from airflow_lineage_plus import conf
from airflow_lineage_plus.ui.mount import URL_PREFIX


def external_views() -> list[dict[str, Any]]:
    """The plugin's ``external_views``: a top-level "Lineage" button and Lineage tabs on DAGs, tasks, tries.

    The URLs start with the path of ``[api] base_url`` so they work when Airflow is served under a prefix.
    """
    page = f"{conf.airflow_api_base_path()}{URL_PREFIX.strip('/')}/"
    return [
        {
            "name": "Lineage",
            "href": page,
            "destination": "nav",
            "url_route": "lineage",
            "nav_top_level": True,
            "icon": page + "static/lineage.svg",
        },
        {
            "name": "Lineage",
            "href": page + "?dag_id={DAG_ID}",
            "destination": "dag",
            "url_route": "lineage-dag",
        },
        {
            "name": "Lineage",
            "href": page + "?dag_id={DAG_ID}&task_id={TASK_ID}",
            "destination": "task",
            "url_route": "lineage-task",
        },
        {
            "name": "Lineage",
            "href": page + "?dag_id={DAG_ID}&run_id={RUN_ID}&task_id={TASK_ID}",
            "destination": "task_instance",
            "url_route": "lineage-task-instance",
        },
    ]
