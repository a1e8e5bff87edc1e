"""Dataset identity: the ways authors really spell one dataset give one OpenLineage identity.

Everything here uses the real pieces: Airflow's ``Asset`` (with the providers' URI normalisers), the Amazon
and common-io providers' asset-to-OpenLineage converters, the provider's ``translate_airflow_asset``, real
Airflow connections defined through ``AIRFLOW_CONN_<ID>`` environment variables, the Amazon provider's
``RedshiftSQLHook``, and the official OpenLineage JSON Schemas for the subset facet.
"""

from __future__ import annotations

import subprocess
import sys
import uuid
from collections.abc import Callable
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

import attrs
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from openlineage_spec import validate_event

from airflow_lineage_plus import datasets as ds
from airflow_lineage_plus.datasets import ConnectionTableRef, DatasetNameError, DatasetRef

WAREHOUSE_DB = "/srv/demo/warehouse.db"

# The connections the table of spellings and the connection tests use, exactly as an operator would define
# them for Airflow: one environment variable per connection, URI or JSON form.
CONNECTIONS = {
    "AIRFLOW_CONN_WAREHOUSE": f"sqlite:///{WAREHOUSE_DB}",
    "AIRFLOW_CONN_WAREHOUSE_JSON": '{"conn_type": "sqlite", "host": "/srv/demo/./warehouse.db"}',
    "AIRFLOW_CONN_SHOP_PG": "postgresql://etl:secret@DB.Example.com/shop",
    "AIRFLOW_CONN_SHOP_PG_PORT": "postgres://etl:secret@db.example.com:5432/shop",
    "AIRFLOW_CONN_SNOW": (
        '{"conn_type": "snowflake", "login": "etl", "schema": "staging",'
        ' "extra": {"account": "MyOrg-MyAccount", "database": "analytics"}}'
    ),
    "AIRFLOW_CONN_RS": (
        '{"conn_type": "redshift", "host": "examplecluster.abc123xyz789.us-west-2.redshift.amazonaws.com",'
        ' "schema": "dev", "login": "etl", "password": "x"}'
    ),
    "AIRFLOW_CONN_SHOP_MYSQL": "mysql://etl:secret@mysql.example.com/shop",
    # The demo warehouse's form: a DuckDB file named for the database, through the DuckDB provider's hook.
    "AIRFLOW_CONN_DUCK": (
        '{"conn_type": "duckdb", "host": "localhost", "extra": {"database": "/srv/demo/analytics.duckdb"}}'
    ),
}


@pytest.fixture
def connections(monkeypatch: pytest.MonkeyPatch) -> None:
    for key, value in CONNECTIONS.items():
        monkeypatch.setenv(key, value)


def identity(ref: Any) -> tuple[str, str]:
    resolved = ds.resolve(ref)
    return resolved.namespace, resolved.name


# --------------------------------------------------------------------------------------------------------
# The table of spellings: (expected namespace, expected name, spelling). Rows with the same expected pair
# are one dataset written differently.
# --------------------------------------------------------------------------------------------------------

ORDERS = ("s3://raw-data-lake", "orders")
EVENTS = ("gs://events-lake", "clicks")
LOCAL = ("file", "/srv/data/exports/orders")
PG_ORDERS = ("postgres://db.example.com:5432", "shop.public.orders")
SF_STG = ("snowflake://myorg-myaccount", "ANALYTICS.STAGING.STG_ORDERS")
BQ = ("bigquery", "my-project.sales.Orders")
RS = ("redshift://examplecluster.us-west-2:5439", "dev.public.orders")
SQLITE_STG = (f"sqlite://{WAREHOUSE_DB}", "analytics.staging.stg_orders")
MYSQL = ("mysql://mysql.example.com:3306", "shop.orders")
DUCK = ("duckdb:///srv/demo/analytics.duckdb", "analytics.staging.stg_orders")

RS_HOST = "examplecluster.abc123xyz789.us-west-2.redshift.amazonaws.com"
SF_URL = "https://MyOrg-MyAccount.snowflakecomputing.com"


@attrs.frozen
class Spelling:
    """One way an author writes a dataset: a helper of the datasets module and its arguments."""

    helper: str
    args: tuple[Any, ...]
    kwargs: dict[str, Any]

    def build(self) -> Any:
        if self.helper == "parse_node_id":
            return DatasetRef.parse(*self.args)
        return getattr(ds, self.helper)(*self.args, **self.kwargs)

    def __str__(self) -> str:
        arguments = [repr(a) for a in self.args] + [f"{k}={v!r}" for k, v in self.kwargs.items()]
        return f"{self.helper}({', '.join(arguments)})"


def spell(helper: str, *args: Any, **kwargs: Any) -> Spelling:
    return Spelling(helper, args, kwargs)


SPELLINGS: list[tuple[tuple[str, str], Spelling]] = [
    # S3: trailing and doubled slashes, scheme aliases and case, bucket/key split, every partition layout.
    (ORDERS, spell("s3", "s3://raw-data-lake/orders/")),
    (ORDERS, spell("s3", "s3://raw-data-lake/orders")),
    (ORDERS, spell("s3", "raw-data-lake", "orders")),
    (ORDERS, spell("s3", "raw-data-lake", "/orders/")),
    (ORDERS, spell("s3", "raw-data-lake/orders/")),
    (ORDERS, spell("s3", "s3://raw-data-lake/", "orders/")),
    (ORDERS, spell("dataset", "s3a://raw-data-lake/orders/")),
    (ORDERS, spell("dataset", "s3n://raw-data-lake/orders")),
    (ORDERS, spell("dataset", "S3://raw-data-lake/orders/")),
    (ORDERS, spell("dataset", "s3://raw-data-lake//orders//")),
    (ORDERS, spell("s3", "s3://raw-data-lake/orders/date=2024-01-15/")),
    (ORDERS, spell("s3", "s3://raw-data-lake/orders/dt=2024-01-15")),
    (ORDERS, spell("s3", "s3://raw-data-lake/orders/year=2024/month=01/day=15/")),
    (ORDERS, spell("s3", "s3://raw-data-lake/orders/2024/01/15/")),
    (ORDERS, spell("s3", "s3://raw-data-lake/orders/2024/01")),
    (ORDERS, spell("s3", "s3://raw-data-lake/orders/2024-01-15/")),
    (ORDERS, spell("s3", "s3://raw-data-lake/orders/20240115")),
    (ORDERS, spell("s3", "s3://raw-data-lake/orders/date=2024-01-15/part-0000.json")),
    (ORDERS, spell("s3", "s3a://raw-data-lake/orders/dt=2024-01-15/part-00000-c000.snappy.parquet")),
    (ORDERS, spell("s3", "s3://raw-data-lake/orders/2024-01-15.json")),
    (ORDERS, spell("s3", "s3://raw-data-lake/orders/dt=2024-01-15/region=eu/")),
    # GCS
    (EVENTS, spell("gcs", "gs://events-lake/clicks/")),
    (EVENTS, spell("dataset", "gcs://events-lake//clicks/date=2024-01-15/")),
    (EVENTS, spell("gcs", "events-lake", "clicks/2024/01/15/events.avro")),
    # Local files
    (LOCAL, spell("local_file", "/srv/data/exports/orders")),
    (LOCAL, spell("local_file", "/srv/data//exports/orders/")),
    (LOCAL, spell("local_file", "/srv/data/./tmp/../exports/orders")),
    (LOCAL, spell("local_file", Path("/srv/data/exports/orders"))),
    (LOCAL, spell("dataset", "file:///srv/data/exports/orders/")),
    (LOCAL, spell("dataset", "file:/srv/data/exports/orders")),
    (LOCAL, spell("dataset", "file://localhost/srv/data/exports/orders")),
    (LOCAL, spell("local_file", "/srv/data/exports/orders/dt=2024-01-15/a.csv")),
    # Postgres: host case, default port, identifier case, user info, postgresql alias, connections
    (PG_ORDERS, spell("postgres", "db.example.com", "shop", "public", "orders")),
    (PG_ORDERS, spell("postgres", "DB.Example.com", "SHOP", "Public", "Orders")),
    (PG_ORDERS, spell("dataset", "postgres://etl:pw@db.example.com/shop/public/orders")),
    (PG_ORDERS, spell("dataset", "postgresql://db.example.com:5432/shop/public/orders")),
    (PG_ORDERS, spell("sql_table", "shop_pg", "orders")),
    (PG_ORDERS, spell("sql_table", "shop_pg", "Public.Orders")),
    (PG_ORDERS, spell("sql_table", "shop_pg_port", "shop.public.orders")),
    # Snowflake: account case and URL form, identifiers upper-cased, connection
    (SF_STG, spell("snowflake", "myorg-myaccount", "analytics", "staging", "stg_orders")),
    (SF_STG, spell("snowflake", SF_URL, "ANALYTICS", "Staging", "STG_ORDERS")),
    (SF_STG, spell("dataset", "snowflake://MyOrg-MyAccount/analytics/staging/stg_orders")),
    (SF_STG, spell("sql_table", "snow", "stg_orders")),
    (SF_STG, spell("sql_table", "snow", "Analytics.Staging.Stg_Orders")),
    # BigQuery: case-sensitive dataset/table names kept
    (BQ, spell("bigquery", "my-project", "sales", "Orders")),
    (BQ, spell("dataset", "bigquery://my-project/sales/Orders")),
    (BQ, spell("parse_node_id", "dataset:bigquery:my-project.sales.Orders")),
    # Redshift: endpoint host or cluster + region, asset URI, connection (through the provider's hook)
    (RS, spell("redshift", RS_HOST, "dev", "public", "orders")),
    (RS, spell("redshift", "ExampleCluster", "DEV", "public", "Orders", region="us-west-2")),
    (RS, spell("dataset", "redshift://examplecluster.us-west-2:5439/dev/public/orders")),
    (RS, spell("sql_table", "rs", "public.orders")),
    (RS, spell("sql_table", "rs", "ORDERS")),
    # The embedded SQLite warehouse: 3-part names kept, URI and JSON connections agree
    (SQLITE_STG, spell("sql_table", "warehouse", "analytics.staging.stg_orders")),
    (SQLITE_STG, spell("sql_table", "warehouse", "Analytics.Staging.STG_ORDERS")),
    (SQLITE_STG, spell("sql_table", "warehouse_json", " analytics.staging.stg_orders ")),
    (SQLITE_STG, spell("dataset", "x-sql-conn://warehouse/analytics.staging.stg_orders")),
    # MySQL: two-level names, database from the connection
    (MYSQL, spell("sql_table", "shop_mysql", "Orders")),
    (MYSQL, spell("dataset", "mysql://MySQL.example.com:3306/shop/orders")),
    # DuckDB (the demo warehouse): database file from the connection extra, 3-part names kept
    (DUCK, spell("sql_table", "duck", "analytics.staging.stg_orders")),
    (DUCK, spell("sql_table", "duck", "ANALYTICS.staging.Stg_Orders")),
    (DUCK, spell("dataset", "duckdb:///srv/demo/analytics.duckdb/analytics.staging.stg_orders")),
    (DUCK, spell("dataset", "x-sql-conn://duck/analytics.staging.stg_orders")),
]


@pytest.mark.usefixtures("connections")
@pytest.mark.parametrize(("expected", "spelling"), SPELLINGS, ids=[str(sp) for _, sp in SPELLINGS])
def test_spelling_gives_the_canonical_identity(expected: tuple[str, str], spelling: Spelling) -> None:
    assert identity(spelling.build()) == expected


@pytest.mark.usefixtures("connections")
def test_table_of_spellings_collapses_to_one_node_per_dataset() -> None:
    assert len(SPELLINGS) >= 25
    nodes = {ds.resolve(spelling.build()) for _, spelling in SPELLINGS}
    assert {(n.namespace, n.name) for n in nodes} == {expected for expected, _ in SPELLINGS}
    assert len(nodes) == 10
    assert ds.s3("s3://raw-data-lake/orders/").id == "dataset:s3://raw-data-lake:orders"


def test_a_file_directly_under_a_prefix_is_its_own_dataset() -> None:
    folder = ds.s3("s3://raw-data-lake/orders/")
    single_file = ds.s3("s3://raw-data-lake/orders/orders.json")
    assert single_file.name == "orders/orders.json"
    assert single_file != folder
    assert single_file.partition is None


def test_names_from_events_keep_their_case_and_only_the_namespace_is_normalised() -> None:
    from_event = DatasetRef.of("postgresql://DB.Example.com", "shop.public.MixedCase")
    assert (from_event.namespace, from_event.name) == (
        "postgres://db.example.com:5432",
        "shop.public.MixedCase",
    )
    assert from_event == ds.postgres("db.example.com", "shop", "public", '"MixedCase"')
    assert DatasetRef.parse(from_event.id) == from_event
    assert ds.dataset(from_event.uri) == from_event
    snow = DatasetRef.of("snowflake://MyOrg-MyAccount", "ANALYTICS.STAGING.STG_ORDERS")
    assert snow == ds.snowflake("myorg-myaccount", "analytics", "staging", "stg_orders")


def test_different_datasets_stay_different() -> None:
    assert ds.s3("s3://raw-data-lake/orders/") != ds.s3("s3://raw-data-lake/order/")
    assert ds.s3("s3://raw-data-lake/orders/") != ds.gcs("gs://raw-data-lake/orders/")
    # S3 keys and BigQuery names are case-sensitive; quoted SQL identifiers keep their case.
    assert ds.s3("s3://raw-data-lake/Orders/") != ds.s3("s3://raw-data-lake/orders/")
    assert ds.bigquery("p-1", "sales", "Orders") != ds.bigquery("p-1", "sales", "orders")
    assert ds.postgres("h", "db", "public", '"Orders"') != ds.postgres("h", "db", "public", "Orders")
    assert ds.postgres("h", "db", "public", '"Orders"').name == "db.public.Orders"
    assert ds.postgres("h", "db", "public", "orders", port=5433) != ds.postgres("h", "db", "public", "orders")


# --------------------------------------------------------------------------------------------------------
# Partitions and the subset facet
# --------------------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("uri", "dimensions", "identifier"),
    [
        ("s3://raw-data-lake/orders/date=2024-01-15/", {"date": "2024-01-15"}, "date=2024-01-15"),
        ("s3://raw-data-lake/orders/dt=2024-01-15/part-0000.json", {"dt": "2024-01-15"}, "dt=2024-01-15"),
        (
            "s3://raw-data-lake/orders/year=2024/month=01/day=15",
            {"year": "2024", "month": "01", "day": "15"},
            "year=2024/month=01/day=15",
        ),
        ("s3://raw-data-lake/orders/2024/01/15/", {"year": "2024", "month": "01", "day": "15"}, "2024/01/15"),
        ("s3://raw-data-lake/orders/2024-01-15", {"date": "2024-01-15"}, "2024-01-15"),
        ("s3://raw-data-lake/orders/202401/", {"year_month": "202401"}, "202401"),
        ("s3://raw-data-lake/orders/2024-01-15.csv", {"date": "2024-01-15"}, "2024-01-15"),
        (
            "gs://events-lake/clicks/dt=2024-01-15/hour=03/",
            {"dt": "2024-01-15", "hour": "03"},
            "dt=2024-01-15/hour=03",
        ),
    ],
)
def test_partition_is_kept_on_the_ref_and_exposed_as_subset_facet(
    uri: str, dimensions: dict[str, str], identifier: str
) -> None:
    ref = ds.dataset(uri)
    assert isinstance(ref, DatasetRef)
    assert ref.partition == dimensions
    assert ref.partition_path == identifier
    facet = ref.subset_facet("input")
    assert facet is not None
    partition = facet.inputCondition.partitions[0]  # type: ignore[union-attr]
    assert (partition.dimensions, partition.identifier) == (dimensions, identifier)


def test_partition_is_outside_equality_and_hash() -> None:
    plain = ds.s3("s3://raw-data-lake/orders/")
    jan = ds.s3("s3://raw-data-lake/orders/date=2024-01-15/")
    feb = plain.with_partition(date="2024-02-01")
    assert plain == jan == feb
    assert len({plain, jan, feb}) == 1
    assert plain.partition is None and plain.subset_facet() is None
    assert feb.partition == {"date": "2024-02-01"} and feb.partition_path == "date=2024-02-01"


def test_subset_facets_validate_against_the_official_schema() -> None:
    from openlineage.client.event_v2 import Job, Run, RunEvent, RunState
    from openlineage.client.serde import Serde

    source = ds.s3("s3://raw-data-lake/orders/year=2024/month=01/day=15/part-1.json")
    target = ds.postgres("db.example.com", "shop", "public", "orders").with_partition(
        {"order_date": "2024-01-15"}
    )
    event = RunEvent(
        eventType=RunState.COMPLETE,
        eventTime=datetime.now(timezone.utc).isoformat(),
        run=Run(runId=str(uuid.uuid4())),
        job=Job(namespace="test", name="load_orders"),
        producer="https://github.com/airflow-lineage-plus",
        inputs=[source.as_input()],
        outputs=[target.as_output()],
    )
    payload = Serde.to_dict(event)
    validate_event(payload)
    assert payload["inputs"][0]["inputFacets"]["subset"]["inputCondition"] == {
        "type": "partition",
        "partitions": [
            {
                "identifier": "year=2024/month=01/day=15",
                "dimensions": {"year": "2024", "month": "01", "day": "15"},
            }
        ],
    }
    assert payload["outputs"][0]["outputFacets"]["subset"]["outputCondition"]["partitions"][0][
        "dimensions"
    ] == {"order_date": "2024-01-15"}


def test_sql_table_partition_travels_through_resolution(connections: None) -> None:
    ref = ds.sql_table("warehouse", "analytics.staging.stg_orders").with_partition(order_date="2024-01-15")
    resolved = ds.resolve(ref)
    assert resolved.partition == {"order_date": "2024-01-15"}
    assert resolved == ds.resolve(ds.sql_table("warehouse", "analytics.staging.stg_orders"))


# --------------------------------------------------------------------------------------------------------
# Airflow Assets: real URIs, round trips, the providers' own OpenLineage converters
# --------------------------------------------------------------------------------------------------------

ASSET_REFS = [
    ds.s3("s3://raw-data-lake/orders/date=2024-01-15/"),
    ds.s3("s3://raw-data-lake/"),
    ds.s3("s3://raw-data-lake/orders/orders.json"),
    ds.gcs("gs://events-lake/clicks/"),
    ds.local_file("/srv/data/exports/orders/"),
    ds.postgres("db.example.com", "shop", "public", "orders"),
    ds.postgres("db.example.com", "shop", "public", '"MixedCase"'),
    ds.snowflake("myorg-myaccount", "analytics", "staging", "stg_orders"),
    ds.bigquery("my-project", "sales", "Orders"),
    ds.redshift("examplecluster", "dev", "public", "orders", region="us-west-2"),
    ds.dataset("hdfs://namenode:8020/warehouse/events/"),
    ds.dataset("kafka://broker:9092/orders"),
    ds.dataset("mysql://mysql.example.com/shop/orders"),
    DatasetRef(f"sqlite://{WAREHOUSE_DB}", "analytics.staging.stg_orders"),
    DatasetRef("duckdb:///srv/demo/analytics.duckdb", "analytics.staging.stg_orders"),
    DatasetRef("custom-namespace", "some/dataset"),
]


@pytest.mark.parametrize("ref", ASSET_REFS, ids=lambda r: r.id)
def test_asset_uri_is_accepted_by_airflow_and_round_trips(ref: DatasetRef) -> None:
    from airflow.sdk import Asset

    asset = Asset(uri=ref.uri)
    assert asset.uri == ref.uri, "Airflow's URI normalisation must leave our canonical URI unchanged"
    assert ds.from_asset(asset) == ref
    assert ds.from_asset(ref.uri) == ref
    built = ref.to_asset()
    assert (built.name, built.uri) == (ref.uri, ref.uri)


def test_connection_table_asset_is_deterministic_and_resolves_back(connections: None) -> None:
    from airflow.sdk import Asset

    ref = ds.sql_table("warehouse", 'Analytics.Staging."MixedCase"')
    asset = ref.to_asset()
    assert asset.uri == "x-sql-conn://warehouse/analytics.staging.%22MixedCase%22"
    assert asset == ds.sql_table("warehouse", 'analytics.STAGING."MixedCase"').to_asset()
    assert Asset(uri=asset.uri).uri == asset.uri
    assert ds.parse_ref(asset) == ref
    resolved = ds.from_asset(asset)
    assert resolved == DatasetRef(f"sqlite://{WAREHOUSE_DB}", "analytics.staging.MixedCase")


def test_from_asset_returns_none_for_what_names_no_dataset() -> None:
    from airflow.sdk import Asset

    assert ds.from_asset(Asset(name="only_a_name")) is None
    assert ds.from_asset("x-sql-conn://no_such_connection_here/orders") is None
    assert ds.from_asset("not a uri") is None
    assert ds.from_asset(42) is None


@pytest.mark.parametrize(
    "spelling",
    [
        "s3://raw-data-lake/orders/",
        "s3a://raw-data-lake//orders/date=2024-01-15/part-0000.json",
        "S3://raw-data-lake/orders/2024/01/15/",
        "s3://raw-data-lake/",
        "s3://raw-data-lake/crm/contacts/orders.json",
        "s3://raw-data-lake/crm//contacts/dt=2024-01-15",
    ],
)
def test_s3_identity_matches_the_amazon_providers_openlineage_converter(spelling: str) -> None:
    from airflow.providers.amazon.aws.assets.s3 import convert_asset_to_openlineage
    from airflow.providers.openlineage.utils.utils import translate_airflow_asset

    ref = ds.s3(spelling)
    asset = ref.to_asset()
    converted = convert_asset_to_openlineage(asset, None)
    assert (converted.namespace, converted.name) == (ref.namespace, ref.name)
    translated = translate_airflow_asset(asset, None)
    assert translated is not None, "the OpenLineage provider found no converter for our s3 asset"
    assert (translated.namespace, translated.name) == (ref.namespace, ref.name)


@pytest.mark.parametrize(
    "ref",
    [
        ds.redshift(
            "examplecluster.abc123xyz789.us-west-2.redshift.amazonaws.com", "dev", "public", "orders"
        ),
        ds.local_file("/srv/data/exports/orders/"),
        ds.dataset("file://fileserver/srv/exports/orders"),
    ],
    ids=["redshift", "local-file", "remote-file"],
)
def test_other_provider_converters_agree_with_our_identity(ref: DatasetRef) -> None:
    from airflow.providers.openlineage.utils.utils import translate_airflow_asset

    translated = translate_airflow_asset(ref.to_asset(), None)
    assert translated is not None
    assert (translated.namespace, translated.name) == (ref.namespace, ref.name)


def test_local_file_naming_follows_the_openlineage_client() -> None:
    from openlineage.client.naming.dataset import S3, LocalFileSystem

    ref = ds.local_file("/srv/data/exports/orders/")
    naming = LocalFileSystem(path="/srv/data/exports/orders")
    assert (ref.namespace, ref.name) == (naming.get_namespace(), naming.get_name())
    s3_ref = ds.s3("s3://raw-data-lake/orders/")
    s3_naming = S3(bucket_name="raw-data-lake", object_key="orders")
    assert (s3_ref.namespace, s3_ref.name) == (s3_naming.get_namespace(), s3_naming.get_name())


# --------------------------------------------------------------------------------------------------------
# Connection-derived namespaces
# --------------------------------------------------------------------------------------------------------


def test_sql_table_is_lazy_and_only_reads_the_connection_when_resolved(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    ref = ds.sql_table("late_bound", "staging.orders")  # no such connection yet: parse time must not care
    assert isinstance(ref, ConnectionTableRef)
    assert ref.uri == "x-sql-conn://late_bound/staging.orders"
    with pytest.raises(DatasetNameError, match="AIRFLOW_CONN_LATE_BOUND"):
        ds.resolve(ref)
    monkeypatch.setenv("AIRFLOW_CONN_LATE_BOUND", "postgres://u:p@warehouse.internal:6432/analytics")
    assert identity(ref) == ("postgres://warehouse.internal:6432", "analytics.staging.orders")


def test_postgres_namespace_matches_the_sql_hooks_authority(connections: None) -> None:
    from airflow.providers.common.sql.hooks.sql import DbApiHook
    from airflow.sdk import BaseHook

    for conn_id in ("shop_pg", "shop_pg_port"):
        conn = BaseHook.get_connection(conn_id)
        authority = DbApiHook.get_openlineage_authority_part(conn, default_port=5432)
        assert ds.resolve(ds.sql_table(conn_id, "public.orders")).namespace == f"postgres://{authority}"


def test_redshift_connection_uses_the_providers_hook_and_agrees_with_the_helper(connections: None) -> None:
    from airflow.providers.amazon.aws.hooks.redshift_sql import RedshiftSQLHook
    from airflow.providers.openlineage.sqlparser import SQLParser
    from airflow.sdk import BaseHook

    conn = BaseHook.get_connection("rs")
    info = RedshiftSQLHook(redshift_conn_id="rs").get_openlineage_database_info(conn)
    resolved = ds.resolve(ds.sql_table("rs", "public.orders"))
    assert resolved.namespace == SQLParser.create_namespace(info)
    assert resolved.name == f"{info.database}.public.orders"
    assert resolved == ds.redshift(conn.host or "", "dev", "public", "orders")


def test_sqlite_warehouse_keeps_every_table_part(connections: None) -> None:
    three = identity(ds.sql_table("warehouse", "analytics.staging.stg_orders"))
    two = identity(ds.sql_table("warehouse", "staging.stg_orders"))
    one = identity(ds.sql_table("warehouse", "stg_orders"))
    assert three == (f"sqlite://{WAREHOUSE_DB}", "analytics.staging.stg_orders")
    assert two == (f"sqlite://{WAREHOUSE_DB}", "staging.stg_orders")
    assert one == (f"sqlite://{WAREHOUSE_DB}", "stg_orders")


def test_sqlite_relative_path_is_made_absolute_at_resolution(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("AIRFLOW_CONN_REL_DB", '{"conn_type": "sqlite", "host": "demo/warehouse.db"}')
    assert ds.resolve(ds.sql_table("rel_db", "orders")).namespace == f"sqlite://{tmp_path}/demo/warehouse.db"


def test_duckdb_connection_follows_the_hooks_database_precedence(monkeypatch: pytest.MonkeyPatch) -> None:
    from airflow.providers.duckdb.hooks.duckdb import DuckDBHook
    from airflow.sdk import BaseHook

    monkeypatch.setenv("AIRFLOW_CONN_DUCK", CONNECTIONS["AIRFLOW_CONN_DUCK"])
    hook = BaseHook.get_connection("duck").get_hook()
    assert isinstance(hook, DuckDBHook)
    assert hook.get_openlineage_database_info(BaseHook.get_connection("duck")) is None  # so our rules decide
    assert ds.resolve(ds.sql_table("duck", "stg_orders")).namespace == f"duckdb://{hook.get_database()}"
    monkeypatch.setenv("AIRFLOW_CONN_DUCK_HOST", '{"conn_type": "duckdb", "host": "/srv/demo/other.duckdb"}')
    assert identity(ds.sql_table("duck_host", "main.t")) == ("duckdb:///srv/demo/other.duckdb", "main.t")


def test_snowflake_connection_uses_account_database_and_schema(connections: None) -> None:
    assert identity(ds.sql_table("snow", "orders")) == (
        "snowflake://myorg-myaccount",
        "ANALYTICS.STAGING.ORDERS",
    )
    assert identity(ds.sql_table("snow", 'raw."events"')) == (
        "snowflake://myorg-myaccount",
        "ANALYTICS.RAW.events",
    )


def test_unknown_sql_engine_falls_back_to_conn_type_host_and_port(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("AIRFLOW_CONN_LAKEHOUSE", "trino://etl@Trino.Example.com:8443/hive")
    assert identity(ds.sql_table("lakehouse", "sales.orders")) == (
        "trino://trino.example.com:8443",
        "hive.sales.orders",
    )


# --------------------------------------------------------------------------------------------------------
# Errors name the field and the fix
# --------------------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("build", "expected"),
    [
        (lambda: ds.s3(""), "bucket is empty"),
        (lambda: ds.s3("   "), "bucket is empty"),
        (lambda: ds.dataset(""), "uri is empty"),
        (lambda: ds.s3("s3://Raw-Data-Lake/orders"), "write 'raw-data-lake'"),
        (lambda: ds.s3("s3://my_bucket/orders"), "is not a valid bucket name"),
        (lambda: ds.s3("s3://ab/orders"), "3-63 characters"),
        (lambda: ds.s3("s3://192.168.10.12/orders"), "IP address"),
        (lambda: ds.s3("s3://raw..lake/orders"), "'.' next to '.'"),
        (lambda: ds.s3("s3://xn--lake/orders"), "reserved S3 prefix"),
        (lambda: ds.s3("s3://raw-data-lake/my orders/"), "whitespace"),
        (lambda: ds.s3("gs://events-lake/x"), "use dataset()"),
        (lambda: ds.dataset("orders/2024"), "is not a URI"),
        (lambda: ds.dataset("s3:raw-data-lake/orders"), "malformed"),
        (lambda: ds.dataset("postgres://db:notaport/x/y/z"), "malformed"),
        (lambda: ds.dataset("weird://host"), "names no dataset"),
        (lambda: ds.dataset("weird:///path"), "no authority"),
        (lambda: ds.dataset("airflow://x/y"), "reserved"),
        (lambda: ds.dataset("postgres://db.example.com/shop/orders"), "/<database>/<schema>/<table>"),
        (lambda: ds.dataset("bigquery://proj/sales"), "bigquery://<project>/<dataset>/<table>"),
        (lambda: ds.local_file("data/orders.csv"), "absolute path"),
        (lambda: ds.postgres("db", "shop", "public", "sales.orders"), "pass one name per argument"),
        (lambda: ds.postgres("db", "shop", "", "orders"), "schema is empty"),
        (lambda: ds.postgres("db", "shop", "public", "my orders"), "whitespace"),
        (lambda: ds.postgres("db", "shop", "public", "orders", port=70000), "port 70000 is out of range"),
        (lambda: ds.postgres("https://db/", "shop", "public", "orders"), "not a host name"),
        (lambda: ds.bigquery("My-Project", "sales", "orders"), "write 'my-project'"),
        (lambda: ds.snowflake("my org", "a", "b", "c"), "not an account identifier"),
        (lambda: ds.redshift("examplecluster", "dev", "public", "orders"), "region="),
        (lambda: ds.sql_table("warehouse", "a.b.c.d"), "has 4 parts"),
        (lambda: ds.sql_table("warehouse", "a..b"), "empty part"),
        (lambda: ds.sql_table("warehouse", 'a."b'), "unterminated quote"),
        (lambda: ds.sql_table("ware house", "orders"), "conn_id 'ware house'"),
        (lambda: ds.sql_table("warehouse", ""), "table is empty"),
        (lambda: DatasetRef("", "orders"), "namespace is empty"),
        (lambda: DatasetRef("s3://lake", " orders"), "surrounding whitespace"),
        (lambda: DatasetRef.parse("dataset:"), "malformed"),
        (lambda: DatasetRef.from_uri("x-sql-conn://warehouse/orders"), "use parse_ref()/sql_table()"),
    ],
)
def test_bad_input_raises_dataset_name_error_naming_the_fix(build: Callable[[], Any], expected: str) -> None:
    with pytest.raises(DatasetNameError) as err:
        build()
    assert isinstance(err.value, ValueError)
    assert expected in str(err.value)


def test_connection_table_with_no_schema_and_no_default_fails_with_the_fix(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv(
        "AIRFLOW_CONN_SNOW_BARE", '{"conn_type": "snowflake", "extra": {"account": "myorg-acct"}}'
    )
    with pytest.raises(DatasetNameError, match=r"write schema\.table"):
        ds.resolve(ds.sql_table("snow_bare", "orders"))
    with pytest.raises(DatasetNameError, match="write the database into the table name"):
        ds.resolve(ds.sql_table("snow_bare", "raw.orders"))
    assert identity(ds.sql_table("snow_bare", "db.raw.orders")) == ("snowflake://myorg-acct", "DB.RAW.ORDERS")


# --------------------------------------------------------------------------------------------------------
# Normalisation is idempotent (hypothesis)
# --------------------------------------------------------------------------------------------------------

SEGMENTS = st.sampled_from(
    [
        "orders",
        "Orders",
        "crm",
        "contacts",
        "v2",
        "date=2024-01-15",
        "dt=2024-02-29",
        "year=2024",
        "month=01",
        "day=15",
        "2024",
        "01",
        "15",
        "2024-01-15",
        "20240115",
        "202401",
        "2024-01",
        "part-0000.json",
        "orders.json",
        "2024-01-15.csv",
        "data.csv.gz",
        "_SUCCESS",
        "..",
        ".",
    ]
)


@st.composite
def object_store_uris(draw: st.DrawFn) -> str:
    scheme = draw(st.sampled_from(["s3", "s3a", "S3", "s3n", "gs", "gcs", "hdfs"]))
    authority = draw(st.sampled_from(["raw-data-lake", "lake.example.com", "events-lake"]))
    if scheme == "hdfs":
        authority += ":8020"
    segments = draw(st.lists(SEGMENTS, min_size=0, max_size=6))
    separators = draw(
        st.lists(st.sampled_from(["/", "//", "///"]), min_size=len(segments), max_size=len(segments))
    )
    path = "".join(sep + seg for sep, seg in zip(separators, segments, strict=True))
    trailing = draw(st.sampled_from(["", "/", "//"]))
    if scheme == "hdfs" and not path.strip("/"):
        path = "/orders"
    return f"{scheme}://{authority}{path}{trailing}"


@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(object_store_uris())
def test_normalisation_is_idempotent_for_paths(uri: str) -> None:
    once = ds.normalize_uri(uri)
    assert ds.normalize_uri(once) == once
    assert ds.dataset(once) == ds.dataset(uri)


@st.composite
def table_uris(draw: st.DrawFn) -> str:
    ident = st.sampled_from(
        ["orders", "Orders", "ORDERS", "stg_orders", '"MixedCase"', "public", "Public", "shop"]
    )
    scheme = draw(st.sampled_from(["postgres", "postgresql", "redshift", "snowflake", "bigquery", "mysql"]))
    if scheme == "bigquery":
        parts = [draw(st.sampled_from(["my-project", "p-1"])), draw(ident), draw(ident)]
        return "bigquery://" + "/".join(p.replace('"', "%22") for p in parts)
    host = {
        "postgres": "DB.example.com",
        "postgresql": "db.example.com:5432",
        "redshift": "Cluster-1.abc.us-east-1.redshift.amazonaws.com",
        "snowflake": "MyOrg-MyAccount",
        "mysql": "mysql.example.com",
    }[scheme]
    parts = [draw(ident) for _ in range(2 if scheme == "mysql" else 3)]
    return f"{scheme}://{host}/" + "/".join(p.replace('"', "%22") for p in parts)


@settings(max_examples=300, deadline=None)
@given(table_uris())
def test_normalisation_is_idempotent_for_tables(uri: str) -> None:
    once = ds.normalize_uri(uri)
    assert ds.normalize_uri(once) == once
    assert ds.dataset(once) == ds.dataset(uri)


@settings(max_examples=200, deadline=None)
@given(object_store_uris())
def test_of_namespace_and_name_is_a_fixed_point_of_normalised_refs(uri: str) -> None:
    ref = ds.dataset(uri)
    assert isinstance(ref, DatasetRef)
    assert DatasetRef.of(ref.namespace, ref.name) == ref
    assert DatasetRef.parse(ref.id) == ref


def test_importing_the_module_imports_neither_airflow_nor_the_openlineage_client() -> None:

    probe = (
        "import sys, airflow_lineage_plus.datasets as d; "
        "print(sorted(m for m in ('airflow', 'openlineage.client') if m in sys.modules))"
    )
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True)
    assert done.stdout.strip() == "[]"
