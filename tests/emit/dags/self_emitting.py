"""A task written the way many tutorials show: it builds its own client and emits its own run."""

from __future__ import annotations

import uuid

import pendulum
from airflow.sdk import dag, task


@dag(schedule=None, start_date=pendulum.datetime(2024, 1, 1, tz="UTC"), catchup=False)
def self_emitting() -> None:
    @task
    def export_report() -> None:
        from openlineage.client import OpenLineageClient
        from openlineage.client.event_v2 import InputDataset, Job, OutputDataset, Run, RunEvent, RunState
        from openlineage.client.facet_v2 import schema_dataset

        client = OpenLineageClient()
        run = Run(runId=str(uuid.uuid4()))
        job = Job(namespace="tutorial", name="export_report_job")
        now = pendulum.now("UTC").isoformat()
        schema = schema_dataset.SchemaDatasetFacet(
            fields=[schema_dataset.SchemaDatasetFacetFields(name="revenue", type="DOUBLE")]
        )
        inputs = [InputDataset(namespace="s3://reports", name="daily")]
        outputs = [OutputDataset(namespace="s3://reports", name="published", facets={"schema": schema})]
        producer = "https://example.com/tutorial"
        for state in (RunState.START, RunState.COMPLETE):
            client.emit(
                RunEvent(
                    eventType=state,
                    eventTime=now,
                    run=run,
                    job=job,
                    producer=producer,
                    inputs=inputs,
                    outputs=outputs,
                )
            )

    export_report()


self_emitting()
