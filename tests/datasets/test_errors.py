"""Bad dataset references raise DatasetNameError (a ValueError) naming the field and the fix."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

from airflow_lineage_plus import datasets as ds
from airflow_lineage_plus.datasets import DatasetNameError, DatasetRef
from tests.datasets.dataset_support import identity


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


@pytest.mark.parametrize("node_id", ["dataset:", "dataset:ns:", "dataset::orders", "dataset:/srv:orders"])
def test_a_malformed_node_id_names_the_form_to_write(node_id: str) -> None:
    for parse in (DatasetRef.parse, ds.parse_ref):
        with pytest.raises(DatasetNameError, match=r"malformed: write dataset:<namespace>:<name>"):
            parse(node_id)


@pytest.mark.parametrize("node_id", ["job:airflow:orders_dag.load", "job:airflow://host:orders_dag.load"])
def test_a_job_node_id_is_not_a_dataset(node_id: str) -> None:
    with pytest.raises(DatasetNameError):
        DatasetRef.parse(node_id)
    with pytest.raises(DatasetNameError):
        ds.parse_ref(node_id)
    assert ds.from_asset(node_id) is None
