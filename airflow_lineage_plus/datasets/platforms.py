"""Where datasets live: host names, ports, S3/GCS bucket rules, Snowflake accounts, Redshift clusters."""

from __future__ import annotations

import ipaddress
import re
import urllib.parse
from typing import Any

from airflow_lineage_plus.datasets.identity import require_text
from airflow_lineage_plus.exceptions import DatasetNameError

_S3_BUCKET_RE = re.compile(r"[a-z0-9][a-z0-9.\-]{1,61}[a-z0-9]")
_GCS_BUCKET_RE = re.compile(r"[a-z0-9][a-z0-9.\-_]{1,220}[a-z0-9]")


def ol_naming() -> Any:
    """The OpenLineage client's ``naming.dataset`` module, imported on first use."""
    from openlineage.client.naming import dataset as naming

    return naming


def host(value: str, field: str) -> str:
    """A host name (or bracketed IP literal), lower-cased, without the trailing dot."""
    name = require_text(value, field).lower().rstrip(".")
    if not re.fullmatch(r"[a-z0-9]([a-z0-9\-_.]*[a-z0-9])?|\[[0-9a-f:.]+\]", name):
        raise DatasetNameError(
            f"{field} {value!r} is not a host name: give the host alone, without scheme or port"
        )
    return name


def port(value: int | str | None) -> int:
    """A TCP port number; DatasetNameError for anything that is not one."""
    try:
        number = int(value)  # type: ignore[arg-type]
    except (TypeError, ValueError):
        raise DatasetNameError(f"port {value!r} is not a number: give the port as an int (5432)") from None
    if not 0 < number < 65536:
        raise DatasetNameError(f"port {number} is out of range: give a TCP port between 1 and 65535")
    return number


def check_bucket(scheme: str, bucket: str) -> str:
    """``bucket`` when it is a valid S3 (``scheme="s3"``) or GCS bucket name; the error lists every rule
    it breaks."""
    label = "S3" if scheme == "s3" else "GCS"
    if not bucket:
        raise DatasetNameError(f"{label} bucket is empty: write {scheme}://<bucket>/<key>")
    if bucket != bucket.lower():
        raise DatasetNameError(
            f"{label} bucket {bucket!r} has upper-case letters; bucket names are lower-case: "
            f"write {bucket.lower()!r}"
        )
    pattern = _S3_BUCKET_RE if scheme == "s3" else _GCS_BUCKET_RE
    problems = []
    if not pattern.fullmatch(bucket):
        problems.append(
            "use 3-63 characters: lower-case letters, digits, '.' and '-', a letter or digit at both ends"
        )
    if ".." in bucket or ".-" in bucket or "-." in bucket:
        problems.append("do not put '.' next to '.' or '-'")
    try:
        ipaddress.IPv4Address(bucket)
        problems.append("a bucket name must not look like an IP address")
    except ValueError:
        pass
    if scheme == "s3" and (
        bucket.startswith(("xn--", "sthree-", "amzn-s3-demo-"))
        or bucket.endswith(("-s3alias", "--ol-s3", "--x-s3", "--table-s3"))
    ):
        problems.append("reserved S3 prefix or suffix (xn--, sthree-, -s3alias, --ol-s3, --x-s3)")
    if problems:
        raise DatasetNameError(f"{label} bucket {bucket!r} is not a valid bucket name: {'; '.join(problems)}")
    return bucket


def snowflake_account(value: str) -> str:
    """The account as OpenLineage names it: ``org-account`` or ``locator.region.cloud``, lower-case."""
    account = require_text(value, "account").lower()
    if "://" in account:
        account = urllib.parse.urlsplit(account).hostname or ""
    for suffix in (".snowflakecomputing.com", ".privatelink"):
        if account.endswith(suffix):
            account = account[: -len(suffix)]
    if not re.fullmatch(r"[a-z0-9][a-z0-9_\-.]*", account or ""):
        raise DatasetNameError(
            f"Snowflake account {value!r} is not an account identifier: write <org>-<account> (myorg-myacct) "
            f"or a locator (xy12345.us-east-1)"
        )
    parts = account.split(".")
    if "-" in parts[0]:  # <organization>-<account>: the region is implied.
        org, _, acct = parts[0].partition("-")
        naming = ol_naming().Snowflake(
            organization_name=org, account_name=acct, database="_", schema="_", table="_"
        )
        return naming.get_namespace().removeprefix("snowflake://")
    if len(parts) == 1:  # bare legacy locator: AWS us-west-1.
        return f"{parts[0]}.us-west-1.aws"
    if len(parts) == 2:
        return f"{parts[0]}.{parts[1]}.aws"
    return ".".join(parts[:3])


def redshift_identifier(value: str, region: str | None) -> str:
    """``<cluster>.<region>`` from an endpoint host, a cluster identifier plus region, or that form itself."""
    name = host(value, "cluster_identifier_or_host")
    parts = name.split(".")
    if (name.endswith(".amazonaws.com") and len(parts) == 6) or (
        name.endswith(".amazonaws.com.cn") and len(parts) == 7
    ):
        return f"{parts[0]}.{parts[2]}"
    if region:
        return f"{name}.{host(region, 'region')}"
    if len(parts) == 2:  # already <cluster>.<region>
        return name
    raise DatasetNameError(
        f"cluster_identifier_or_host {value!r}: a Redshift cluster identifier needs region= "
        f"(redshift('{name}', ..., region='us-east-1')) or pass the endpoint host"
    )
