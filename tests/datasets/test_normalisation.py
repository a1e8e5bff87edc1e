"""Normalisation is idempotent, over generated spellings (hypothesis)."""

from __future__ import annotations

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from airflow_lineage_plus import datasets as ds
from airflow_lineage_plus.datasets import DatasetRef

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
