"""Hand-built OpenLineage events for graph tests: every facet carries _producer and the _schemaURL of
the schema it is valid against (tests/test_hand_built_events.py validates every world built here)."""

from __future__ import annotations

import json
import uuid
from collections.abc import Iterable
from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import Any

from openlineage.client import facet_v2 as ol

from airflow_lineage_plus.custom_facets import SKIP_REASONS, SkipStateRunFacet

PRODUCER = "https://example.com/tests"
BASE = datetime(2026, 3, 1, tzinfo=timezone.utc)
JOB_NS = "pipeline"
DS_NS = "warehouse"
SPEC = "https://openlineage.io/spec/2-0-2/OpenLineage.json"

# Each standard facet's _schemaURL, the version the installed client writes.
SCHEMA = ol.schema_dataset.SchemaDatasetFacet._get_schema()
COLUMN_LINEAGE = ol.column_lineage_dataset.ColumnLineageDatasetFacet._get_schema()
DATASET_OWNERSHIP = ol.ownership_dataset.OwnershipDatasetFacet._get_schema()
JOB_OWNERSHIP = ol.ownership_job.OwnershipJobFacet._get_schema()
PARENT = ol.parent_run.ParentRunFacet._get_schema()
ERROR_MESSAGE = ol.error_message_run.ErrorMessageRunFacet._get_schema()
SQL = ol.sql_job.SQLJobFacet._get_schema()
JOB_DEPENDENCIES = ol.job_dependencies_run.JobDependenciesRunFacet._get_schema()
QUALITY_METRICS = ol.data_quality_metrics_dataset.DataQualityMetricsDatasetFacet._get_schema()
QUALITY_ASSERTIONS = ol.data_quality_assertions_dataset.DataQualityAssertionsDatasetFacet._get_schema()
OUTPUT_STATISTICS = ol.output_statistics_output_dataset.OutputStatisticsOutputDatasetFacet._get_schema()
SKIP_STATE = SkipStateRunFacet._get_schema()
# The spec's base definition, for a facet whose body here is partial (the provider's airflow, airflowDagRun,
# airflowState) or is not its own schema's (a free-text skip reason, a lower-case execution mode).
RUN_FACET = f"{SPEC}#/$defs/RunFacet"
#: What a facet built without a schema says: a document that does not exist, so validating it fails.
NO_SCHEMA = "https://openlineage.io/spec/facets/1-0-0/Facet.json"


def facet(schema_url: str = NO_SCHEMA, **body: Any) -> dict[str, Any]:
    """A facet of ``body`` valid against the schema ``schema_url`` names (one of the constants above)."""
    return {"_producer": PRODUCER, "_schemaURL": schema_url, **body}


def at(minute: float) -> str:
    return (BASE + timedelta(minutes=minute)).isoformat().replace("+00:00", "Z")


def run_id(label: str) -> str:
    return str(uuid.uuid5(uuid.NAMESPACE_URL, label))


def ds(
    name: str,
    *,
    namespace: str = DS_NS,
    fields: Iterable[tuple[str, str]] | None = None,
    owners: Iterable[str] | None = None,
    columns: dict[str, list[tuple[str, str, str]]] | None = None,
) -> dict[str, Any]:
    """A dataset; ``columns`` maps an output column to (input dataset name, input column, subtype)."""
    facets: dict[str, Any] = {}
    if fields is not None:
        facets["schema"] = facet(SCHEMA, fields=[{"name": n, "type": t} for n, t in fields])
    if owners is not None:
        facets["ownership"] = facet(DATASET_OWNERSHIP, owners=[{"name": o, "type": "team"} for o in owners])
    if columns is not None:
        facets["columnLineage"] = facet(
            COLUMN_LINEAGE,
            fields={
                column: {
                    "inputFields": [
                        {
                            "namespace": DS_NS,
                            "name": source,
                            "field": field,
                            "transformations": [
                                {
                                    "type": "INDIRECT" if subtype in ("JOIN", "FILTER") else "DIRECT",
                                    "subtype": subtype,
                                }
                            ],
                        }
                        for source, field, subtype in inputs
                    ]
                }
                for column, inputs in columns.items()
            },
        )
    item: dict[str, Any] = {"namespace": namespace, "name": name}
    if facets:
        item["facets"] = facets
    return item


def event(
    kind: str,
    job: str,
    run: str,
    minute: float,
    *,
    inputs: Iterable[dict[str, Any]] = (),
    outputs: Iterable[dict[str, Any]] = (),
    run_facets: dict[str, Any] | None = None,
    job_facets: dict[str, Any] | None = None,
    namespace: str = JOB_NS,
) -> dict[str, Any]:
    return {
        "eventType": kind,
        "eventTime": at(minute),
        "run": {"runId": run_id(run), "facets": run_facets or {}},
        "job": {"namespace": namespace, "name": job, "facets": job_facets or {}},
        "inputs": list(inputs),
        "outputs": list(outputs),
        "producer": PRODUCER,
        "schemaURL": f"{SPEC}#/$defs/RunEvent",
    }


def job_event(
    job: str,
    minute: float,
    *,
    inputs: Iterable[dict[str, Any]] = (),
    outputs: Iterable[dict[str, Any]] = (),
    job_facets: dict[str, Any] | None = None,
    namespace: str = JOB_NS,
) -> dict[str, Any]:
    """A JobEvent: a job's declared inputs and outputs, with no run (static lineage)."""
    return {
        "eventTime": at(minute),
        "job": {"namespace": namespace, "name": job, "facets": job_facets or {}},
        "inputs": list(inputs),
        "outputs": list(outputs),
        "producer": PRODUCER,
        "schemaURL": f"{SPEC}#/$defs/JobEvent",
    }


def run_pair(
    job: str,
    run: str,
    start: float,
    end: float,
    state: str = "COMPLETE",
    *,
    inputs: Iterable[dict[str, Any]] = (),
    outputs: Iterable[dict[str, Any]] = (),
    error: str | None = None,
    skipped: str | None = None,
    owners: Iterable[str] | None = None,
    full_start: bool = False,
) -> list[dict[str, Any]]:
    """START and its terminal event for one run; START names the datasets bare, or with their facets
    (``full_start``, as the provider's START events of declared lineage do)."""
    inputs, outputs = list(inputs), list(outputs)
    facets: dict[str, Any] = {}
    if error is not None:
        facets.update(error_message(error))
    if skipped is not None:
        schema = SKIP_STATE if skipped in SKIP_REASONS else RUN_FACET
        facets["lineagePlus_skipState"] = facet(schema, skipped=True, reason=skipped)
    job_facets = (
        {"ownership": facet(JOB_OWNERSHIP, owners=[{"name": o} for o in owners])}
        if owners is not None
        else None
    )

    def bare(items: list[dict[str, Any]]) -> list[dict[str, Any]]:
        return items if full_start else [{"namespace": d["namespace"], "name": d["name"]} for d in items]

    return [
        event("START", job, run, start, inputs=bare(inputs), outputs=bare(outputs), job_facets=job_facets),
        event(state, job, run, end, inputs=inputs, outputs=outputs, run_facets=facets, job_facets=job_facets),
    ]


def error_message(message: str) -> dict[str, Any]:
    """The standard ``errorMessage`` run facet of a Python task's error."""
    return {"errorMessage": facet(ERROR_MESSAGE, message=message, programmingLanguage="python")}


def parent_facet(job: str, run: str, namespace: str = JOB_NS) -> dict[str, Any]:
    """The standard ``parent`` run facet naming ``job``'s run ``run`` (a label, see :func:`run_id`)."""
    return facet(PARENT, run={"runId": run_id(run)}, job={"namespace": namespace, "name": job})


def airflow_facets(
    dag_id: str, *, task_id: str | None = None, dag_run: str | None = None, try_number: int = 1
) -> dict[str, Any]:
    """The provider's facet carrying the DAG id: ``airflow`` for a task run, ``airflowDagRun`` for a DAG
    run (only the parts the graph reads, plus ids; ``dag_run``: the DAG run's Airflow ``run_id``)."""
    dag_run_ids = {"dag_id": dag_id, **({"run_id": dag_run} if dag_run is not None else {})}
    if task_id is None:
        return {"airflowDagRun": facet(RUN_FACET, dag={"dag_id": dag_id}, dagRun=dag_run_ids)}
    task_instance = {"try_number": try_number, **({"map_index": -1} if dag_run is not None else {})}
    facets = {"dag": {"dag_id": dag_id}, "task": {"task_id": task_id}, "taskInstance": task_instance}
    return {"airflow": facet(RUN_FACET, **facets, **({"dagRun": dag_run_ids} if dag_run is not None else {}))}


def with_run_facets(events: list[dict[str, Any]], facets: dict[str, Any]) -> list[dict[str, Any]]:
    """``events`` with ``facets`` added to each one's run facets."""
    for item in events:
        item["run"]["facets"].update(facets)
    return events


def write_log(path: Path, events: Iterable[dict[str, Any]]) -> Path:
    with open(path, "w") as handle:
        for item in events:
            handle.write(json.dumps(item) + "\n")
    return path


def dataset_node(name: str, namespace: str = DS_NS) -> str:
    return f"dataset:{namespace}:{name}"


def job_node(name: str, namespace: str = JOB_NS) -> str:
    return f"job:{namespace}:{name}"


def orders_pipeline(full_start: bool = False) -> list[dict[str, Any]]:
    """raw_orders -> load_orders -> stg_orders -> build_fct (FAILED latest) -> fct_daily_orders -> report."""
    raw = ds(
        "raw_orders",
        fields=[("order_id", "INTEGER"), ("amount", "DECIMAL"), ("ts", "TIMESTAMP")],
        owners=["team:ingest"],
    )
    stg_v1 = ds(
        "stg_orders",
        fields=[("order_id", "INTEGER"), ("amount", "DECIMAL")],
        owners=["team:analytics"],
        columns={
            "order_id": [("raw_orders", "order_id", "IDENTITY")],
            "amount": [("raw_orders", "amount", "IDENTITY")],
        },
    )
    stg_v2 = ds(
        "stg_orders",
        fields=[("order_id", "BIGINT"), ("amount_usd", "DECIMAL"), ("day", "DATE")],
        owners=["team:analytics"],
        columns={
            "order_id": [("raw_orders", "order_id", "IDENTITY")],
            "amount_usd": [("raw_orders", "amount", "TRANSFORMATION")],
            "day": [("raw_orders", "ts", "TRANSFORMATION")],
        },
    )
    fct = ds(
        "fct_daily_orders",
        fields=[("day", "DATE"), ("total_usd", "DECIMAL")],
        owners=["team:finance"],
        columns={
            "total_usd": [("stg_orders", "amount_usd", "AGGREGATION")],
            "day": [("stg_orders", "day", "IDENTITY")],
        },
    )
    report = ds(
        "orders_report",
        fields=[("day", "DATE"), ("total_usd", "DECIMAL")],
        columns={"total_usd": [("fct_daily_orders", "total_usd", "IDENTITY")]},
    )
    events: list[dict[str, Any]] = []
    events += run_pair(
        "orders.load_orders",
        "load-1",
        0,
        1,
        inputs=[raw],
        outputs=[stg_v1],
        owners=["team:data-eng"],
        full_start=full_start,
    )
    events += run_pair(
        "orders.load_orders",
        "load-2",
        10,
        11,
        inputs=[raw],
        outputs=[stg_v2],
        owners=["team:data-eng"],
        full_start=full_start,
    )
    events += run_pair(
        "orders.build_fct",
        "fct-1",
        2,
        3,
        inputs=[stg_v1],
        outputs=[fct],
        owners=["team:finance"],
        full_start=full_start,
    )
    events += run_pair(
        "orders.build_fct",
        "fct-2",
        12,
        13,
        "FAIL",
        inputs=[stg_v2],
        outputs=[fct],
        error="column amount does not exist",
        owners=["team:finance"],
        full_start=full_start,
    )
    events += run_pair(
        "orders.report",
        "report-1",
        4,
        5,
        inputs=[fct],
        outputs=[report],
        owners=["team:bi"],
        full_start=full_start,
    )
    return events


def varied_events() -> list[dict[str, Any]]:
    """The orders pipeline plus a skipped run, a late RUNNING event with an execution mode and an ABORT."""
    events = orders_pipeline()
    events += run_pair(
        "orders.report",
        "report-2",
        14,
        15,
        skipped="upstream failed",
        inputs=[ds("fct_daily_orders")],
        outputs=[ds("orders_report")],
    )
    events.append(
        event(
            "RUNNING",
            "orders.build_fct",
            "fct-2",
            12.5,
            outputs=[ds("fct_daily_orders")],
            run_facets={"lineagePlus_executionMode": facet(RUN_FACET, mode="cached")},
        )
    )
    events += run_pair(
        "orders.load_orders", "load-3", 30, 31, "ABORT", inputs=[ds("raw_orders")], outputs=[ds("stg_orders")]
    )
    return events


def retirement_events() -> list[dict[str, Any]]:
    """Jobs whose inputs change over time, so some edges retire:

    * ``etl.load`` read ``src_a`` (run 1), then ``src_b`` (run 2, completed: ``src_a`` is retired), then a
      run still going reads ``src_b`` and ``src_c`` (``src_c`` is current: reported after the latest
      completed run);
    * ``etl.report`` read ``loaded`` (completed), then ``loaded`` and ``extra`` in a run that failed
      (``extra`` is current: newer than the latest completed run).
    """
    src_a, src_b, src_c = ds("src_a"), ds("src_b"), ds("src_c")
    loaded = ds("loaded", fields=[("id", "INT"), ("v", "TEXT")], owners=["team:etl"])
    report = ds(
        "report_table",
        fields=[("id", "INT"), ("v", "TEXT")],
        columns={"v": [("loaded", "v", "IDENTITY")]},
    )
    events: list[dict[str, Any]] = []
    events += run_pair("etl.load", "etl-load-1", 50, 51, inputs=[src_a], outputs=[loaded])
    events += run_pair(
        "etl.report", "etl-report-1", 52, 53, inputs=[loaded], outputs=[report], owners=["team:bi"]
    )
    events += run_pair("etl.load", "etl-load-2", 60, 61, inputs=[src_b], outputs=[loaded])
    events.append(event("START", "etl.load", "etl-load-3", 70, inputs=[src_b, src_c], outputs=[loaded]))
    events += run_pair(
        "etl.report",
        "etl-report-2",
        72,
        73,
        "FAIL",
        inputs=[loaded, ds("extra")],
        outputs=[report],
        error="x",
    )
    return events


def tie_events() -> list[dict[str, Any]]:
    """Facts that only tie-breaking rules decide: equal event times with different content, a DAG run
    whose tasksState changes, parent facets, a run whose events carry different skip reasons (one of them
    upstream failed, with the DAG its provider facet names); and
    declarations (JobEvents): two of one job that never runs (the later drops an input), one of a job
    that also ran (its runs' facts win)."""
    parent = {"namespace": "pipeline", "name": "orders"}
    dag_run = {"parent": facet(PARENT, run={"runId": run_id("dag-1")}, job=parent)}
    tie_a = ds("tie_ds", fields=[("a", "INT")], owners=["team:a"])
    tie_b = ds("tie_ds", fields=[("a", "BIGINT")], owners=["team:b"])
    skip = {"lineagePlus_skipState": facet(RUN_FACET, skipped=True, reason="r-b")}
    skip_other = {"lineagePlus_skipState": facet(RUN_FACET, skipped=True, reason="r-a")}
    upstream_failed = {
        "lineagePlus_skipState": facet(
            SKIP_STATE, skipped=True, reason="TRIGGER_RULE", state="upstream_failed"
        )
    }
    airflow = {"airflow": facet(RUN_FACET, dag={"dag_id": "orders"}), **dag_run}
    declared_v1 = [ds("stg_orders"), ds("fx_rates")]
    return [
        job_event("orders.planned", 20, inputs=declared_v1, outputs=[ds("plan", fields=[("a", "INT")])]),
        job_event(
            "orders.planned", 21, inputs=[ds("stg_orders")], outputs=[ds("plan", fields=[("b", "INT")])]
        ),
        job_event("orders.tie_job", 60, outputs=[ds("tie_ds", fields=[("a", "VARCHAR")], owners=["team:c"])]),
        event("START", "orders", "dag-1", 0),
        event("START", "orders.load_orders", "load-1", 0.5, run_facets=dag_run),
        event("COMPLETE", "orders.tie_job", "tie-1", 40, outputs=[tie_a]),
        event("COMPLETE", "orders.tie_job", "tie-2", 40, outputs=[tie_b]),
        event("COMPLETE", "orders.skippy", "skip-1", 41, run_facets=skip),
        event("COMPLETE", "orders.skippy", "skip-1", 41, run_facets=skip_other),
        event("COMPLETE", "orders.skippy", "skip-1", 41),
        event("ABORT", "orders.after", "after-1", 43, run_facets=upstream_failed),
        event("ABORT", "orders.after", "after-1", 43, run_facets=skip),
        event("START", "orders.after", "after-1", 42.5, run_facets=airflow),
        event("FAIL", "orders.erring", "err-1", 42, run_facets=error_message("b")),
        event("FAIL", "orders.erring", "err-1", 42, run_facets=error_message("a")),
        event(
            "RUNNING",
            "orders",
            "dag-1",
            50,
            run_facets={
                "airflowState": facet(RUN_FACET, dagRunState="running", tasksState={"report": "skipped"})
            },
        ),
        event(
            "COMPLETE",
            "orders",
            "dag-1",
            51,
            run_facets={
                "airflowState": facet(
                    RUN_FACET,
                    dagRunState="success",
                    tasksState={"report": "success", "x": "skipped", "y": "upstream_failed"},
                )
            },
        ),
    ]


def daily_runs(days: int, *, retried_day: int = 1) -> list[dict[str, Any]]:
    """``days`` daily DAG runs of ``nightly`` (Airflow run_id ``scheduled__2024-01-DD``), each with its
    ``load`` task: one try a day, two on ``retried_day`` (the first FAIL, then COMPLETE), newest last."""
    events: list[dict[str, Any]] = []
    for day in range(1, days + 1):
        dag_run = f"scheduled__2024-01-{day:02d}"
        start = day * 60.0
        events += with_run_facets(
            run_pair("nightly", f"nightly-{day}", start, start + 10),
            airflow_facets("nightly", dag_run=dag_run),
        )
        tries = [("FAIL", 1), ("COMPLETE", 2)] if day == retried_day else [("COMPLETE", 1)]
        for state, number in tries:
            label = f"nightly.load-{day}-try{number}"
            parent = parent_facet("nightly", f"nightly-{day}")
            ids = airflow_facets("nightly", task_id="load", dag_run=dag_run, try_number=number)
            pair = run_pair("nightly.load", label, start + number, start + number + 0.5, state)
            events += with_run_facets(pair, {**ids, "parent": parent})
    return events


def _task(dag: str, task: str, run: str, start: float, *state: str, **kwargs: Any) -> list[dict[str, Any]]:
    events = run_pair(f"{dag}.{task}", run, start, start + 1, *state, **kwargs)
    return with_run_facets(
        events, {**airflow_facets(dag, task_id=task), "parent": parent_facet(dag, f"{dag}-run")}
    )


def _dag_run(dag: str, start: float) -> list[dict[str, Any]]:
    return with_run_facets(run_pair(dag, f"{dag}-run", start, start + 5), airflow_facets(dag))


def _child(
    job: str, run: str, parent_job: str, parent_run: str, start: float, **kwargs: Any
) -> list[dict[str, Any]]:
    return with_run_facets(
        run_pair(job, run, start, start + 0.5, **kwargs), {"parent": parent_facet(parent_job, parent_run)}
    )


def permissions_world() -> list[dict[str, Any]]:
    """Two DAGs and what hangs off them, for per-DAG visibility (tests/graph/test_visibility.py).

    DAG ``alpha`` publishes a report from ``scores``; DAG ``beta`` computes ``scores`` from a private table,
    with SQL and an error, and starts a dbt-like child run that starts a grandchild; a Spark job of no DAG
    reads ``scores``; one job runs under both DAGs, and a child of its alpha run; a child whose parent run is
    not in the log and one whose parent job is unknown; a dataset no job touches."""
    events = [*_dag_run("alpha", 0), *_dag_run("beta", 0)]
    events += _task(
        "beta",
        "score",
        "beta-score",
        1,
        "FAIL",
        inputs=[ds("beta_private")],
        outputs=[ds("scores")],
        error="beta secret boom",
    )
    events[-1]["job"]["facets"] = {"sql": facet(SQL, query="SELECT secret FROM beta_private")}
    events += _task(
        "alpha", "publish", "alpha-publish", 2, inputs=[ds("scores")], outputs=[ds("alpha_report")]
    )
    events += _child(
        "dbt-run-beta", "dbt-beta", "beta.score", "beta-score", 1.2, outputs=[ds("beta_child_out")]
    )
    events += _child(
        "beta_model.x",
        "model-x",
        "dbt-run-beta",
        "dbt-beta",
        1.3,
        inputs=[ds("beta_child_out")],
        outputs=[ds("beta_model_out")],
    )
    events += _child(
        "dbt-run-alpha", "dbt-alpha", "alpha.publish", "alpha-publish", 2.2, outputs=[ds("alpha_child_out")]
    )
    events += run_pair("spark_app", "spark-1", 3, 4, inputs=[ds("scores")], outputs=[ds("spark_out")])
    events += _child(
        "shared_model", "shared-a", "alpha.publish", "alpha-publish", 2.3, outputs=[ds("shared_out")]
    )
    events += _child("shared_model", "shared-b", "beta.score", "beta-score", 1.4, outputs=[ds("shared_out")])
    # a child of the shared job's alpha run: its run's chain says alpha, even though its job is shared
    events += _child(
        "shared_child", "shared-child", "shared_model", "shared-a", 2.4, outputs=[ds("alpha_extra")]
    )
    events += _child(
        "late_child", "late", "beta.score", "beta-score-not-logged", 1.5, outputs=[ds("late_out")]
    )
    events += _child("stray_child", "stray", "ghost.task", "ghost-run", 1.6, outputs=[ds("stray_out")])
    lonely = {"eventTime": at(9), "dataset": ds("lonely_ds"), "producer": PRODUCER}  # no job at all
    events.append({**lonely, "schemaURL": f"{SPEC}#/$defs/DatasetEvent"})
    return events


def job_dependencies(*upstream: tuple[str, str | None]) -> dict[str, Any]:
    """The provider's ``jobDependencies`` run facet of an asset-triggered DAG run: one upstream entry per
    (task job, task run label or None) whose asset event started it."""
    entries = []
    for job, run in upstream:
        entry: dict[str, Any] = {"job": {"namespace": JOB_NS, "name": job}}
        if run is not None:
            entry["run"] = {"runId": run_id(run)}
        entry["dependency_type"] = "IMPLICIT_ASSET_DEPENDENCY"
        entries.append(entry)
    return {"jobDependencies": facet(JOB_DEPENDENCIES, upstream=entries, downstream=[])}


def cross_dag_world(*, orders_fail: bool = True, rerun: bool = False) -> list[dict[str, Any]]:
    """Two DAGs linked by an asset, as a real run of ``tests/dags/cross_dag.py`` reports them: ``xdag_orders``
    (minutes 0-5) writes ``orders`` in ``extract``, then fails in ``check`` (``orders_fail``); the asset
    event starts ``xdag_report`` (minutes 3-8), whose ``summarize`` reads ``orders`` and writes ``report``.
    ``rerun``: a later DAG run of ``xdag_orders`` (minutes 10-11, run ``xdag_orders-rerun``) completes and
    starts nothing yet."""
    state = "FAIL" if orders_fail else "COMPLETE"
    events = with_run_facets(
        run_pair("xdag_orders", "xdag_orders-run", 0, 5, state), airflow_facets("xdag_orders")
    )
    events += _task("xdag_orders", "extract", "orders-extract", 1, outputs=[ds("orders")])
    events += _task("xdag_orders", "check", "orders-check", 2.5, state)
    events += with_run_facets(
        run_pair("xdag_report", "xdag_report-run", 3, 8),
        {**airflow_facets("xdag_report"), **job_dependencies(("xdag_orders.extract", "orders-extract"))},
    )
    events += _task(
        "xdag_report", "summarize", "report-summarize", 4, inputs=[ds("orders")], outputs=[ds("report")]
    )
    if rerun:
        events += with_run_facets(
            run_pair("xdag_orders", "xdag_orders-rerun", 10, 11), airflow_facets("xdag_orders")
        )
    return events
