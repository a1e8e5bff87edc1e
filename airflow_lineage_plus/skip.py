"""The dotted path users configure: ``[openlineage] custom_run_facets``.

``custom_run_facets = airflow_lineage_plus.skip.run_facets``
"""

from airflow_lineage_plus.emit.self_skip import run_facets

__all__ = ["run_facets"]
