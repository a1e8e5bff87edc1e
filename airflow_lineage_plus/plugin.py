"""The Airflow plugin: it only wires the package's parts into Airflow (see each module for the logic)."""

from __future__ import annotations

from airflow.plugins_manager import AirflowPlugin

from airflow_lineage_plus import conf
from airflow_lineage_plus.dbt.dbt_run import dbt_lineage_env


class LineagePlusPlugin(AirflowPlugin):
    """Registers the skip-state and alert listeners (and, where installed, the Lineage view), and the
    template macro ``macros.lineage_plus.dbt_lineage_env`` (registered even when disabled: templates that
    use it must still render; it then returns no variables)."""

    name = "lineage_plus"
    macros = [dbt_lineage_env]
    if not conf.is_disabled():
        from airflow_lineage_plus.act import alert_listener
        from airflow_lineage_plus.emit import skip_listener

        listeners = [skip_listener, alert_listener]

        from airflow_lineage_plus.ui import mount, navigation

        fastapi_apps = [{"app": mount.LineageApp(), "url_prefix": mount.URL_PREFIX, "name": "Lineage Plus"}]
        external_views = navigation.external_views()
