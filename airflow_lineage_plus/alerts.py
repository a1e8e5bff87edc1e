"""The dotted path users put in DAG files: ``airflow_lineage_plus.alerts.DownstreamOwnersNotifier``."""

from airflow_lineage_plus.act.callback import DownstreamOwnersNotifier

__all__ = ["DownstreamOwnersNotifier"]
