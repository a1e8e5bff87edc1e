"""The provider's newer APIs beside declared lineage: emit_dataset_lineage, runtime assets, emission_policy.

Run with ``[openlineage] execute_in_thread = True`` and an ``emission_policy`` (test_provider_apis.py) that
turns off task events for ``excluded`` (by name) and for every task matching ``quiet_.*`` (a regex).

* ``declared_and_api``: declares lineage, records figures, calls the provider's ``emit_dataset_lineage``
  and attaches an asset at run time through an ``AssetAlias`` (``outlet_events``).
* ``excluded``: the same calls, but the policy says no lineage; it also builds dbt's lineage environment
  (``dbt_lineage_env``) and writes it to ``$PROVIDER_APIS_OUT`` for the test to read.
* ``gate`` closes: ``quiet_skipped`` (policy: no events), ``bare_skipped`` (policy: no operator metadata)
  and ``loud_skipped`` (no rule) never run.
"""

from __future__ import annotations

import json
import os
from typing import Any

import pendulum
from airflow.providers.openlineage.api import emit_dataset_lineage
from airflow.sdk import Asset, AssetAlias, dag, get_current_context, task
from openlineage.client.event_v2 import InputDataset, OutputDataset

from airflow_lineage_plus import Field, Output, datasets, lineage, runtime
from airflow_lineage_plus.dbt import dbt_lineage_env

SOURCE = datasets.s3("s3://provider-apis/source/")
TARGET = datasets.s3("s3://provider-apis/target/")
HIDDEN_SOURCE = datasets.s3("s3://provider-apis/hidden-source/")
HIDDEN_TARGET = datasets.s3("s3://provider-apis/hidden-target/")
ALIAS = AssetAlias("provider_apis_exports")
ATTACHED_URI = "s3://provider-apis/attached/export.parquet"
ROWS = [{"id": 1, "name": "a"}, {"id": 2, "name": None}, {"id": 3, "name": "c"}]


def _api_datasets(prefix: str) -> dict[str, Any]:
    return {
        "inputs": [InputDataset(namespace="s3://provider-apis", name=f"{prefix}-api-in")],
        "outputs": [OutputDataset(namespace="s3://provider-apis", name=f"{prefix}-api-out")],
    }


@dag(dag_id="provider_apis", schedule=None, start_date=pendulum.datetime(2024, 1, 1, tz="UTC"), catchup=False)
def provider_apis() -> None:
    @lineage(inputs=[SOURCE], outputs=[Output(TARGET, schema=[Field("id", "BIGINT"), Field("name")])])
    @task(outlets=[ALIAS])
    def declared_and_api() -> None:
        emit_dataset_lineage(**_api_datasets("declared"), raise_on_error=True)
        runtime.record(TARGET, ROWS)
        runtime.assertion(TARGET, "id_not_null", success=True, column="id")
        get_current_context()["outlet_events"][ALIAS].add(Asset(ATTACHED_URI))

    @lineage(inputs=[HIDDEN_SOURCE], outputs=[HIDDEN_TARGET])
    @task
    def excluded() -> None:
        emit_dataset_lineage(**_api_datasets("excluded"))
        runtime.record(HIDDEN_TARGET, ROWS)
        with open(os.environ["PROVIDER_APIS_OUT"], "w") as out:
            json.dump(dbt_lineage_env(), out)

    @task.short_circuit
    def gate() -> bool:
        return False

    @lineage(inputs=[HIDDEN_SOURCE])
    @task
    def quiet_skipped() -> None:
        pass

    @lineage(inputs=[SOURCE])
    @task
    def loud_skipped() -> None:
        pass

    @lineage(inputs=[HIDDEN_SOURCE])
    @task
    def bare_skipped() -> None:
        pass

    declared_and_api() >> excluded()
    gate() >> [quiet_skipped(), loud_skipped(), bare_skipped()]


provider_apis()
