"""What dbt-ol is told and how its dataset names are read, without running dbt (the real run is in
test_dbt_child_runs.py): the parent variables as openlineage-dbt itself parses them, and the identity rules
for the names dbt-ol builds from a profile."""

from __future__ import annotations

import json

import attr
import pytest
from openlineage.common.provider.dbt.utils import get_parent_run_metadata

from airflow_lineage_plus.dbt import TaskRunIds, dataset_identity, dbt_lineage_env_templates

IDS = TaskRunIds(
    namespace="prod-airflow",
    job_name="shop.dbt_build",
    run_id="01900000-0000-7000-8000-000000000001",
    root_namespace="prod-airflow",
    root_job_name="shop",
    root_run_id="01900000-0000-7000-8000-0000000000aa",
)


def _parsed(monkeypatch: pytest.MonkeyPatch, env: dict[str, str]) -> tuple[str, str, str, str, str]:
    for name in ("OPENLINEAGE_CONTEXT", "OPENLINEAGE_PARENT_ID", "OPENLINEAGE_ROOT_PARENT_ID"):
        monkeypatch.delenv(name, raising=False)
    for name, value in env.items():
        monkeypatch.setenv(name, value)
    parent = get_parent_run_metadata()
    assert parent is not None
    return (
        parent.job_namespace,
        parent.job_name,
        parent.run_id,
        parent.root_parent_job_name,
        parent.root_parent_run_id,
    )


def test_openlineage_dbt_reads_the_task_run_as_parent_and_the_dag_run_as_root(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    env = IDS.parent_env()
    assert env["OPENLINEAGE_PARENT_ID"] == "prod-airflow/shop.dbt_build/01900000-0000-7000-8000-000000000001"
    assert env["OPENLINEAGE_ROOT_PARENT_ID"] == "prod-airflow/shop/01900000-0000-7000-8000-0000000000aa"
    assert env["OPENLINEAGE_NAMESPACE"] == "prod-airflow"
    expected = ("prod-airflow", "shop.dbt_build", IDS.run_id, "shop", IDS.root_run_id)
    assert _parsed(monkeypatch, env) == expected
    # the /-separated variables alone (what older dbt-ol versions read) say the same
    legacy = {k: v for k, v in env.items() if k != "OPENLINEAGE_CONTEXT"}
    assert _parsed(monkeypatch, legacy) == expected


def test_a_namespace_with_a_slash_keeps_its_parent_through_the_json_context(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    slashed = attr.evolve(IDS, namespace="team/airflow", root_namespace="team/airflow")
    env = slashed.parent_env()
    parsed = _parsed(monkeypatch, env)
    assert parsed == ("team/airflow", "shop.dbt_build", IDS.run_id, "shop", IDS.root_run_id)
    assert json.loads(env["OPENLINEAGE_CONTEXT"])["parent"]["job"]["namespace"] == "team/airflow"


@pytest.mark.parametrize(
    ("namespace", "name", "expected"),
    [
        # a profile path relative to dbt's working directory, and one with ./ and ../
        (
            "duckdb://wh/analytics.duckdb",
            "analytics.marts.x",
            ("duckdb:///srv/dbt/wh/analytics.duckdb", "analytics.marts.x"),
        ),
        (
            "duckdb:///srv/./a/../wh/analytics.duckdb",
            "analytics.marts.x",
            ("duckdb:///srv/wh/analytics.duckdb", "analytics.marts.x"),
        ),
        # DuckDB keeps a model's case; the identity folds it, as the Airflow side does
        (
            "duckdb:///srv/wh/analytics.duckdb",
            "analytics.marts.Daily_UC",
            ("duckdb:///srv/wh/analytics.duckdb", "analytics.marts.daily_uc"),
        ),
        ("sqlite://db/shop.db", "main.orders", ("sqlite:///srv/dbt/db/shop.db", "main.orders")),
        # servers: host case and default port; names as the engine folded them
        (
            "postgres://DB.Example.com:5432",
            "shop.public.orders",
            ("postgres://db.example.com:5432", "shop.public.orders"),
        ),
        # in-memory and MotherDuck databases are not files: kept
        ("duckdb://:memory:", "memory.main.t", ("duckdb://:memory:", "memory.main.t")),
        ("duckdb://md:shop", "shop.main.t", ("duckdb://md:shop", "shop.main.t")),
    ],
)
def test_dbt_names_are_read_with_the_dataset_identity_rules(
    namespace: str, name: str, expected: tuple[str, str]
) -> None:
    assert dataset_identity(namespace, name, "/srv/dbt") == expected


def test_a_source_is_named_by_its_table_not_its_logical_name() -> None:
    tables = {"analytics.staging.orders": "analytics.staging.stg_orders"}
    got = dataset_identity("duckdb:///srv/wh/analytics.duckdb", "analytics.staging.orders", "/srv", tables)
    assert got == ("duckdb:///srv/wh/analytics.duckdb", "analytics.staging.stg_orders")


def test_bash_operator_templates_fall_back_to_what_dbt_ol_assumes_without_them() -> None:
    templates = dbt_lineage_env_templates(target_path="/tmp/t", job_name="nightly")
    assert set(templates) == {
        "OPENLINEAGE_PARENT_ID",
        "OPENLINEAGE_ROOT_PARENT_ID",
        "OPENLINEAGE_CONTEXT",
        "OPENLINEAGE_NAMESPACE",
        "OPENLINEAGE__TRANSPORT",
        "OPENLINEAGE_DBT_JOB_NAME",
    }
    call = "macros.lineage_plus.dbt_lineage_env(task_instance, target_path='/tmp/t', job_name='nightly')"
    assert templates["OPENLINEAGE_NAMESPACE"] == "{{ " + call + ".get('OPENLINEAGE_NAMESPACE', 'dbt') }}"
    transport = templates["OPENLINEAGE__TRANSPORT"]
    assert '{"type": "airflow_lineage_plus.dbt.DbtLineageTransport"}' in transport
