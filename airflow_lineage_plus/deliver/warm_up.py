"""The redaction automata warmed in the task process, before the provider forks a process per event.

RE2 builds the states of its automata as a text needs them. Built in the task process by the preload
(:func:`~airflow_lineage_plus.deliver.event_log_transport.prepare_process`), they are inherited by every
process forked after it; otherwise each event's process built them again for its one event (in
``airflow dags test``, an ad-hoc profile saw the check of an event take about 12 ms in the forked
process, against 6-8 ms with them built: docs/reliability.md, "A task's events").
"""

from __future__ import annotations

from typing import Any

import orjson

from airflow_lineage_plus.deliver.redaction import redact_json

_PRODUCER = "https://github.com/apache/airflow/tree/providers-openlineage/2.20.3"
_SPEC = "https://openlineage.io/spec"
_WHEN = "2026-01-01T06:00:00.123456+00:00"
_RUN_ID = "018d7690-8800-7d7e-8f38-55612f873a23"
_PARENT_RUN_ID = "018d7690-8800-724c-ab53-e9e5dbb3c9e2"


def _facet(schema: str, **fields: Any) -> dict[str, Any]:
    """A facet of the schema ``schema`` (``facets/<version>/<Name>``, or a ``$defs`` of the core spec)."""
    name = schema.rsplit("/", 1)[-1]
    url = f"{_SPEC}/{schema}.json#/$defs/{name}" if schema.startswith("facets/") else f"{_SPEC}/{schema}"
    return {"_producer": _PRODUCER, "_schemaURL": url, **fields}


_DAG_RUN = {
    "clear_number": 0,
    "conf": {},
    "dag_id": "daily_sales",
    "data_interval_end": _WHEN,
    "data_interval_start": _WHEN,
    "logical_date": _WHEN,
    "run_after": _WHEN,
    "run_id": f"scheduled__{_WHEN}",
    "run_type": "scheduled",
    "start_date": _WHEN,
    "triggering_user_name": "admin",
}
_TASK = {
    "task_id": "load_orders",
    "depends_on_past": False,
    "downstream_task_ids": "['report']",
    "executor_config": {},
    "inlets": "[]",
    "mapped": False,
    "operator_class": "_PythonDecoratedOperator",
    "operator_class_path": "airflow.providers.standard.decorators.python._PythonDecoratedOperator",
    "operator_provider_version": "1.21.0",
    "owner": "airflow",
    "priority_weight": 1,
    "queue": "default",
    "retries": 0,
    "trigger_rule": "all_success",
    "upstream_task_ids": "['extract']",
    "wait_for_past_depends_before_skipping": False,
}
_PARENT = {"namespace": "default", "name": "daily_sales"}
_FIELDS = [{"name": f"col_{i}", "type": "VARCHAR(64)"} for i in range(8)]
#: an event like the provider's: its facets, URLs, times, ids, a SQL query and a schema
SAMPLE_EVENT: dict[str, Any] = {
    "eventTime": _WHEN,
    "eventType": "COMPLETE",
    "producer": _PRODUCER,
    "schemaURL": f"{_SPEC}/2-0-2/OpenLineage.json#/$defs/RunEvent",
    "inputs": [
        {
            "namespace": "postgres://warehouse.example.com:5432",
            "name": "analytics.public.orders",
            "facets": {"schema": _facet("facets/1-2-0/SchemaDatasetFacet", fields=_FIELDS)},
        }
    ],
    "outputs": [{"namespace": "s3://data-lake-bucket", "name": "exports/orders/2026-01-01.parquet"}],
    "job": {
        "namespace": "default",
        "name": "daily_sales.load_orders",
        "facets": {
            "jobType": _facet(
                "facets/2-0-4/JobTypeJobFacet", integration="AIRFLOW", jobType="TASK", processingType="BATCH"
            ),
            "sql": _facet(
                "facets/1-1-0/SQLJobFacet", query="SELECT id, amount FROM public.orders WHERE ts > '2026'"
            ),
            "ownership": _facet("facets/1-0-1/OwnershipJobFacet", owners=[{"name": "data-team@example.com"}]),
        },
    },
    "run": {
        "runId": _RUN_ID,
        "facets": {
            "airflow": _facet(
                "2-0-2/OpenLineage.json#/$defs/RunFacet",
                dag={"dag_id": "daily_sales", "fileloc": "/opt/airflow/dags/daily_sales.py", "tags": "[]"},
                dagRun=_DAG_RUN,
                task=_TASK,
                taskInstance={"log_url": f"http://localhost:8080/dags/daily_sales/runs/{_RUN_ID}?try=1"},
                taskUuid=_RUN_ID,
            ),
            "airflowState": _facet(
                "2-0-2/OpenLineage.json#/$defs/RunFacet",
                dagRunState="success",
                tasksDuration={"extract": 5.821642},
                tasksState={"extract": "success", "report": "skipped"},
            ),
            "nominalTime": _facet(
                "facets/1-0-1/NominalTimeRunFacet", nominalStartTime=_WHEN, nominalEndTime=_WHEN
            ),
            "parent": _facet(
                "facets/1-2-0/ParentRunFacet",
                job=_PARENT,
                run={"runId": _PARENT_RUN_ID},
                root={"job": _PARENT, "run": {"runId": _PARENT_RUN_ID}},
            ),
            "processing_engine": _facet(
                "facets/1-1-1/ProcessingEngineRunFacet",
                name="Airflow",
                version="3.3.2",
                openlineageAdapterVersion="2.20.3",
            ),
            "tags": _facet(
                "facets/1-0-0/TagsRunFacet", tags=[{"key": "team", "source": "AIRFLOW", "value": "sales"}]
            ),
        },
    },
}


def warm_up(*probe_sets: tuple[tuple[str, str], ...]) -> None:
    """Run each scanner (one per probe set) over :data:`SAMPLE_EVENT`, so that RE2's automata have their
    states built: a process forked after it finds them, instead of building them for its first event."""
    sample = orjson.dumps(SAMPLE_EVENT)
    for probes in probe_sets:
        redact_json(sample, probes)
