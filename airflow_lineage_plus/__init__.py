"""airflow-lineage-plus: lineage you can trust for Airflow 3, on top of the OpenLineage provider."""

from __future__ import annotations

from airflow_lineage_plus.__about__ import __version__

__all__ = ["__version__"]
