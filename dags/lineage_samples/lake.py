"""The raw data lake: JSON-lines files in date partitions of an S3 bucket, through the Amazon provider.

Where the bucket lives is the Airflow connection's business (``aws_default``: real S3 in production, a
local S3-compatible endpoint in the demo through the connection's ``endpoint_url``), never this code's.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from datetime import date
from typing import Any

from airflow.providers.amazon.aws.hooks.s3 import S3Hook

AWS_CONN_ID = "aws_default"


def partition_prefix(root: str, day: date) -> str:
    """``s3://bucket/orders/`` and 2024-06-01 -> ``orders/date=2024-06-01/`` (the key prefix)."""
    _bucket, prefix = S3Hook.parse_s3_url(root)
    return f"{prefix.rstrip('/')}/date={day.isoformat()}/"


@dataclass(frozen=True)
class WrittenFile:
    """One object written to the lake: where, and how many bytes."""

    url: str
    size: int


def write_partition(root: str, day: date, records: list[dict[str, Any]], file_name: str) -> WrittenFile:
    """Replace the date partition under ``root`` with one JSON-lines file."""
    hook = S3Hook(aws_conn_id=AWS_CONN_ID)
    bucket, _prefix = S3Hook.parse_s3_url(root)
    prefix = partition_prefix(root, day)
    stale = hook.list_keys(bucket_name=bucket, prefix=prefix) or []
    if stale:
        hook.delete_objects(bucket=bucket, keys=stale)
    body = "".join(json.dumps(record, sort_keys=True) + "\n" for record in records).encode()
    key = prefix + file_name
    hook.load_bytes(body, key=key, bucket_name=bucket, replace=True)
    return WrittenFile(url=f"s3://{bucket}/{key}", size=len(body))


def read_partition(root: str, day: date) -> list[dict[str, Any]]:
    """Every record in the date partition under ``root`` (none if the partition is empty or missing)."""
    hook = S3Hook(aws_conn_id=AWS_CONN_ID)
    bucket, _prefix = S3Hook.parse_s3_url(root)
    records: list[dict[str, Any]] = []
    for key in sorted(hook.list_keys(bucket_name=bucket, prefix=partition_prefix(root, day)) or []):
        text = hook.read_key(key, bucket_name=bucket)
        records.extend(json.loads(line) for line in text.splitlines() if line.strip())
    return records
