"""Paths: cleaning object keys and file paths, and reducing a partition path to its dataset's root.

The reduction applies the OpenLineage client's own trimmers (``openlineage.client.dataset.trimmers``) to a
fixed point, then two rules of this package: a file inside a partition names the partition's dataset, and a
file whose stem is a date is a daily (or monthly) partition of its folder.
"""

from __future__ import annotations

import posixpath
import re
from functools import cache
from typing import TYPE_CHECKING

from airflow_lineage_plus.datasets.identity import FILE_NAMESPACE, Identity
from airflow_lineage_plus.datasets.platforms import check_bucket
from airflow_lineage_plus.exceptions import DatasetNameError

if TYPE_CHECKING:
    from openlineage.client.dataset.trimmers import DatasetNameTrimmer

_FILE_RE = re.compile(r"(?:[^=/]*\.[A-Za-z][A-Za-z0-9]{0,9}|part-\d+[^=/]*)")
_YEAR_MONTH_RE = re.compile(r"\d{4}-?\d{2}")


@cache
def _trimmers() -> tuple[DatasetNameTrimmer, ...]:
    from openlineage.client.dataset.trimmers import (
        DateTrimmer,
        KeyValueTrimmer,
        MultiDirDateTrimmer,
        YearMonthTrimmer,
    )

    return (KeyValueTrimmer(), DateTrimmer(), MultiDirDateTrimmer(), YearMonthTrimmer())


def _trim_partitions(path: str) -> tuple[str, str]:
    """Apply the client's built-in trimmers to a fixed point: (root, removed partition suffix)."""
    current = path
    for _ in range(64):
        trimmed = current
        for trimmer in _trimmers():
            trimmed = trimmer.trim(trimmed)
        if trimmed == current or len(trimmed) >= len(current):
            break
        current = trimmed
    removed = path[len(current) :].strip("/")
    return current, removed


def _is_file_name(segment: str) -> bool:
    return bool(_FILE_RE.fullmatch(segment))


def _looks_like_date(segment: str) -> bool:
    from openlineage.client.dataset.trimmers import DateTrimmer

    return DateTrimmer().trim(f"_/{segment}") == "_"


def _reduce_once(path: str) -> tuple[str, str]:
    """One reduction step: (shorter path, partition fragment removed), or the path unchanged."""
    lead = "/" if path.startswith("/") else ""
    segments = path.strip("/").split("/")
    if len(segments) >= 2 and _is_file_name(segments[-1]):
        parent = lead + "/".join(segments[:-1])
        # Is the file inside a partition? Test under a stand-in root, so a partition at the top counts too.
        _, parent_partition = _trim_partitions(f"{lead}_/{parent.lstrip('/')}")
        if parent_partition:
            return parent, ""  # one object of a partition: the partition's root is the dataset
        stem = segments[-1].split(".", 1)[0]
        if _looks_like_date(stem) or _YEAR_MONTH_RE.fullmatch(stem):
            return parent, stem  # a daily (or monthly) file: a partition of its folder
        return path, ""  # a file under an ordinary prefix is its own dataset
    return _trim_partitions(path)


def _reduce_path(path: str) -> tuple[str, str]:
    """Reduce a cleaned path (no empty segments) to (dataset root, partition path), to a fixed point."""
    removed: list[str] = []
    for _ in range(64):
        shorter, partition = _reduce_once(path)
        if shorter == path:
            break
        if partition:
            removed.insert(0, partition)
        path = shorter
    return path, "/".join(removed)


def _partition_dimensions(partition_path: str) -> dict[str, str]:
    dims: dict[str, str] = {}
    plain: list[str] = []

    def flush() -> None:
        if not plain:
            return
        if len(plain) in (2, 3) and all(p.isdigit() for p in plain):
            dims.update(zip(("year", "month", "day"), plain, strict=False))
        elif len(plain) == 1 and _YEAR_MONTH_RE.fullmatch(plain[0]) and not _looks_like_date(plain[0]):
            dims["year_month"] = plain[0]
        elif len(plain) == 1:
            dims["date"] = plain[0]
        else:
            for i, value in enumerate(plain):
                dims[f"level_{i}"] = value
        plain.clear()

    for segment in partition_path.split("/"):
        if not segment:
            continue
        if segment.count("=") == 1:
            flush()
            key, value = segment.split("=")
            dims[key] = value
        else:
            plain.append(segment)
    flush()
    return dims


def clean_path(path: str, field: str, uri: str) -> str:
    """Collapse doubled slashes and drop the trailing one; reject whitespace and control characters."""
    if any(ch.isspace() for ch in path):
        raise DatasetNameError(
            f"{field} in {uri!r} contains whitespace: percent-encode it (%20) or remove it"
        )
    return re.sub(r"/{2,}", "/", path).rstrip("/") if path.strip("/") else path[:1]


def with_reduction(namespace: str, path: str) -> Identity:
    """The identity of ``path`` in ``namespace``, its partition reduced to the dataset root and kept."""
    root, partition_path = _reduce_path(path)
    if not partition_path:
        return Identity(namespace, root)
    return Identity(namespace, root, _partition_dimensions(partition_path), partition_path)


def object_store_identity(scheme: str, bucket: str, key: str, uri: str | None = None) -> Identity:
    """An object in S3 (``scheme="s3"``) or GCS (``"gs"``): namespace ``<scheme>://<bucket>``, name the
    key; the bucket root is ``/``."""
    bucket = check_bucket(scheme, bucket.strip())
    shown = uri or f"{scheme}://{bucket}/{key}"
    key = clean_path(key.strip(), "object key", shown).strip("/")
    if not key:
        return Identity(f"{scheme}://{bucket}", "/")
    return with_reduction(f"{scheme}://{bucket}", key)


def file_identity(host: str, path: str) -> Identity:
    """A file or folder by absolute path: namespace ``file`` (``file://<host>`` for a remote host)."""
    if not path.startswith("/"):
        raise DatasetNameError(
            f"path {path!r} is relative; a local file dataset needs an absolute path: "
            f"build it from a known root (Path(__file__).parent / ...) or os.path.abspath()"
        )
    path = clean_path(path, "path", path)
    path = posixpath.normpath(path)
    if path.startswith("//"):
        path = "/" + path.lstrip("/")
    host = host.lower()
    namespace = f"file://{host}" if host and host != "localhost" else FILE_NAMESPACE
    if path == "/":
        return Identity(namespace, "/")
    return with_reduction(namespace, path)
