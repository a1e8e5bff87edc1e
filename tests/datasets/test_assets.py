"""Airflow Assets: real URIs round-trip, and the providers' own OpenLineage converters agree with us."""

from __future__ import annotations

import pytest

from airflow_lineage_plus import datasets as ds
from airflow_lineage_plus.datasets import DatasetRef
from tests.datasets.dataset_support import WAREHOUSE_DB

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
