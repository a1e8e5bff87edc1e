"""Two DAGs of two teams that share one table, for the per-DAG permission tests.

``perm_beta`` (the team a one-DAG user may NOT read) scores customers from a private table into the shared
``analytics.shared.customer_scores`` and a private audit table, both with a freshness target (``SloTier``,
zero minutes, the least the schema allows: any age is past it, so no test waits for a target to pass;
never written, both are stale), with SQL, a description and an owning team, starts a child run of its own
(a dbt-like ``beta_scoring_model`` job whose ``parent`` facet is the task's run), then fails; its
``notify_beta`` task never runs (upstream_failed). ``perm_alpha`` (the DAG they may read) publishes a
report from the shared table and starts a child run too. Every name of beta says "beta", so a
test can look for any of it in what an alpha reader gets.
"""

from __future__ import annotations

import os

import pendulum
from airflow.sdk import dag, get_current_context, task

from airflow_lineage_plus import OwningTeam, SloTier, lineage
from airflow_lineage_plus import datasets as ds

PRIVATE = ds.postgres("warehouse", "analytics", "beta_vault", "private_customers")
SCORES = ds.postgres("warehouse", "analytics", "shared", "customer_scores")
REPORT = ds.postgres("warehouse", "analytics", "alpha_reports", "customer_report")
AUDIT = ds.postgres("warehouse", "analytics", "beta_vault", "score_audit")
BETA_SQL = "SELECT id, beta_secret_formula(spend) AS score FROM beta_vault.private_customers"
BETA_ERROR = "beta-secret-error: the scoring model diverged"


def emit_child_run(job_name: str, output: str) -> None:
    """A run of ``job_name`` started by this task's run (its ``parent`` facet), as dbt or Spark would
    emit it: straight to the event log, through the OpenLineage client."""
    from airflow.providers.openlineage.plugins.macros import lineage_job_namespace, lineage_run_id
    from openlineage.client import OpenLineageClient
    from openlineage.client.event_v2 import Job, OutputDataset, Run, RunEvent, RunState
    from openlineage.client.facet_v2 import parent_run
    from openlineage.client.transport.file import FileConfig, FileTransport
    from openlineage.client.uuid import generate_new_uuid

    context = get_current_context()
    ti = context["ti"]
    namespace = lineage_job_namespace()
    parent = parent_run.ParentRunFacet(
        run=parent_run.Run(runId=lineage_run_id(ti)),
        job=parent_run.Job(namespace=namespace, name=f"{ti.dag_id}.{ti.task_id}"),
    )
    log = os.environ["AIRFLOW__LINEAGE_PLUS__EVENT_LOG_PATH"]
    client = OpenLineageClient(transport=FileTransport(FileConfig(log_file_path=log, append=True)))
    run = Run(runId=str(generate_new_uuid()), facets={"parent": parent})
    outputs = [OutputDataset(namespace="postgres://warehouse:5432", name=output)]
    for state in (RunState.START, RunState.COMPLETE):
        client.emit(
            RunEvent(
                eventType=state,
                eventTime=pendulum.now("UTC").isoformat(),
                run=run,
                job=Job(namespace=namespace, name=job_name),
                producer="https://example.com/perm-dags-child",
                outputs=outputs,
            )
        )


@dag(schedule=None, start_date=pendulum.datetime(2024, 1, 1, tz="UTC"), catchup=False, tags=["test"])
def perm_beta() -> None:
    @lineage(
        inputs=[PRIVATE],
        outputs=[SCORES, AUDIT],
        sql=BETA_SQL,
        description="beta-confidential scoring of private customers",
        facets=[
            OwningTeam(name="beta-secret-team", contact="#beta-secret-channel"),
            SloTier(tier="gold", freshnessMinutes=0),
        ],
    )
    @task
    def score_customers() -> None:
        emit_child_run("beta_scoring_model", "analytics.beta_vault.model_output")
        raise RuntimeError(BETA_ERROR)

    @task
    def notify_beta() -> None:
        pass

    score_customers() >> notify_beta()


@dag(schedule=None, start_date=pendulum.datetime(2024, 1, 1, tz="UTC"), catchup=False, tags=["test"])
def perm_alpha() -> None:
    @lineage(inputs=[SCORES], outputs=[REPORT], sql="SELECT * FROM analytics.shared.customer_scores")
    @task
    def publish_customer_report_for_the_board() -> None:
        emit_child_run("alpha_report_model", "analytics.alpha_reports.model_output")

    publish_customer_report_for_the_board()


perm_beta()
perm_alpha()
