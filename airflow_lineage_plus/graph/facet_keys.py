"""Facet keys the lineage graph reads, in one place so they can be aligned with their producers."""

from __future__ import annotations

#: Run facet written by airflow_lineage_plus.skip on COMPLETE/ABORT events of skipped task runs.
SKIP_STATE = "lineagePlus_skipState"
#: Run facet telling how a task run executed (``mode``: e.g. ``cached``, ``no-op``).
EXECUTION_MODE = "lineagePlus_executionMode"
#: The provider's DAG-run facet; its ``tasksState`` maps task_id -> Airflow state.
AIRFLOW_STATE = "airflowState"
#: The provider's task-run facet (dag, dagRun, task, taskInstance ...).
AIRFLOW_RUN = "airflow"
#: Standard OpenLineage facets.
PARENT = "parent"
ERROR_MESSAGE = "errorMessage"
OWNERSHIP = "ownership"
SCHEMA = "schema"
COLUMN_LINEAGE = "columnLineage"
DOCUMENTATION = "documentation"
TAGS = "tags"
SQL = "sql"
SOURCE_CODE_LOCATION = "sourceCodeLocation"
DATA_QUALITY_METRICS = "dataQualityMetrics"
DATA_QUALITY_ASSERTIONS = "dataQualityAssertions"
OUTPUT_STATISTICS = "outputStatistics"
QUALITY_FACETS = (DATA_QUALITY_METRICS, OUTPUT_STATISTICS, DATA_QUALITY_ASSERTIONS)
