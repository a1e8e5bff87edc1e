"""Partitions are reduced to the dataset root, kept on the ref and emitted as the spec's subset facet."""

from __future__ import annotations

import uuid
from datetime import datetime, timezone

import pytest

from airflow_lineage_plus import datasets as ds
from airflow_lineage_plus.datasets import DatasetRef
from tests.support.openlineage_spec import validate_event


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
