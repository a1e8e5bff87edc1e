"""The table of spellings: the ways authors really spell one dataset give one OpenLineage identity."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import attrs
import pytest

from airflow_lineage_plus import datasets as ds
from airflow_lineage_plus.datasets import DatasetRef
from tests.datasets.dataset_support import WAREHOUSE_DB, identity

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
