"""Real OpenLineage events (the client's own classes) of chosen sizes, for the reliability tests."""

from __future__ import annotations

import datetime
import uuid
from typing import Any

from openlineage.client.event_v2 import InputDataset, Job, OutputDataset, Run, RunEvent, RunState
from openlineage.client.facet_v2 import (
    column_lineage_dataset,
    data_quality_metrics_dataset,
    documentation_job,
    schema_dataset,
    sql_job,
)

PRODUCER = "https://github.com/airflow-lineage-plus/airflow-lineage-plus/tests"


def run_event(
    job: str = "dag.task",
    *,
    run_id: str | None = None,
    state: RunState = RunState.COMPLETE,
    padding: int = 0,
    columns: int = 3,
    sql: str | None = None,
    when: datetime.datetime | None = None,
    namespace: str = "test-airflow",
) -> RunEvent:
    """A task event with schema, column lineage and column metrics, ``padding`` characters of docs."""
    names = [f"col_{i}" for i in range(columns)]
    schema = schema_dataset.SchemaDatasetFacet(
        fields=[
            schema_dataset.SchemaDatasetFacetFields(name=n, type="BIGINT", description=f"{n} doc")
            for n in names
        ]
    )
    lineage = column_lineage_dataset.ColumnLineageDatasetFacet(
        fields={
            n: column_lineage_dataset.Fields(
                inputFields=[
                    column_lineage_dataset.InputField(
                        namespace="s3://raw",
                        name="orders",
                        field=n,
                        transformations=[
                            column_lineage_dataset.Transformation(
                                type="DIRECT", subtype="TRANSFORMATION", description=f"{n} derived " * 4
                            )
                        ],
                    )
                ]
            )
            for n in names
        }
    )
    metrics = data_quality_metrics_dataset.DataQualityMetricsDatasetFacet(
        rowCount=10,
        columnMetrics={
            n: data_quality_metrics_dataset.ColumnMetrics(nullCount=0, distinctCount=10, min=1.0, max=9.0)
            for n in names
        },
    )
    job_facets: dict[str, Any] = {}
    if padding:
        job_facets["documentation"] = documentation_job.DocumentationJobFacet(description="x" * padding)
    if sql is not None:
        job_facets["sql"] = sql_job.SQLJobFacet(query=sql)
    return RunEvent(
        eventType=state,
        eventTime=(when or datetime.datetime.now(datetime.timezone.utc)).isoformat(),
        run=Run(runId=run_id or str(uuid.uuid4())),
        job=Job(namespace=namespace, name=job, facets=job_facets),
        producer=PRODUCER,
        inputs=[InputDataset(namespace="s3://raw", name="orders", facets={"schema": schema})],
        outputs=[
            OutputDataset(
                namespace="postgres://db:5432",
                name="analytics.public.orders",
                facets={"schema": schema, "columnLineage": lineage, "dataQualityMetrics": metrics},
            )
        ],
    )
