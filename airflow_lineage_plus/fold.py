"""The dotted path users configure: ``"transformer_class": "airflow_lineage_plus.fold.FoldIntoTaskRun"``."""

from airflow_lineage_plus.emit.run_fold import FoldIntoTaskRun

__all__ = ["FoldIntoTaskRun"]
