"""The keys facets are emitted and read under, in one place.

Producers (:mod:`airflow_lineage_plus.custom_facets`) and readers (the Airflow-free
:mod:`airflow_lineage_plus.graph`) both take them from here. This module imports nothing. The provider's own
facet keys (``airflow``, ``airflowState``) are written here rather than imported because the graph must run
where the provider is not installed; the standard keys are the OpenLineage spec's.
"""

from __future__ import annotations

#: Custom facets of this package; prefixed so they never collide (OpenLineage "Custom Facet Naming").
PREFIX = "lineagePlus_"
DATA_CONTRACT = "lineagePlus_dataContract"
OWNING_TEAM = "lineagePlus_owningTeam"
SLO_TIER = "lineagePlus_sloTier"
SKIP_STATE = "lineagePlus_skipState"
EXECUTION_MODE = "lineagePlus_executionMode"
TRIMMED = "lineagePlus_trimmed"
FOLDED_FROM = "lineagePlus_foldedFrom"
#: Extra property of a summarised ``schema`` facet: how many fields were left out.
OMITTED_FIELDS = "lineagePlus_omittedFields"

#: The OpenLineage provider's DAG-run facet; its ``tasksState`` maps task_id -> Airflow state.
AIRFLOW_STATE = "airflowState"
#: The provider's task-run facet (dag, dagRun, task, taskInstance ...).
AIRFLOW_RUN = "airflow"
#: The provider's DAG-run facet (dag, dagRun ...).
AIRFLOW_DAG_RUN = "airflowDagRun"

#: Standard OpenLineage facets.
PARENT = "parent"
#: The upstream job runs of a run; the provider's on an asset-triggered DAG run (cross-DAG lineage).
JOB_DEPENDENCIES = "jobDependencies"
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
SUBSET = "subset"
QUALITY_FACETS = (DATA_QUALITY_METRICS, OUTPUT_STATISTICS, DATA_QUALITY_ASSERTIONS)
#: Facets the size budget never removes (docs/reliability.md).
KEPT_FACETS = frozenset({PARENT, JOB_DEPENDENCIES, "nominalTime", "processing_engine", "jobType", TRIMMED})
