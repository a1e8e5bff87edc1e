"""Name lint: datasets whose names differ only in ways that usually mean one dataset.

Each dataset name is reduced step by step (scheme alias, trailing slash, file under a prefix,
partition suffix, case); datasets reducing to the same identity form a group, named by the reasons
that were needed and a suggested single name.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterable
from typing import Any

SCHEME_ALIASES = {
    "s3a": "s3",
    "s3n": "s3",
    "gcs": "gs",
    "postgresql": "postgres",
    "abfss": "abfs",
    "wasbs": "wasb",
    "hdfs": "hdfs",
}
_PARTITION = re.compile(r"(/[A-Za-z_][A-Za-z0-9_]*=[^/]*)+/?$")
_DATE_SUFFIX = re.compile(r"(/\d{4}(/\d{2}){0,2}|[_-]\d{8})/?$")
_FILE = re.compile(
    r"/[^/]+\.(parquet|csv|json|jsonl|avro|orc|txt|gz|snappy|zst|tsv|xlsx?|delta)$", re.IGNORECASE
)
_SCHEME = re.compile(r"^([A-Za-z][A-Za-z0-9+.\-]*)://")

REASONS = ("scheme alias", "trailing slash", "file under a prefix", "partition suffix", "case")


def _reduce(
    namespace: str, name: str, prefixes: set[tuple[str, str]] | None = None
) -> tuple[tuple[str, str], set[str]]:
    reasons: set[str] = set()
    match = _SCHEME.match(namespace)
    if match and match.group(1).lower() in SCHEME_ALIASES:
        canonical = SCHEME_ALIASES[match.group(1).lower()]
        if canonical != match.group(1):
            namespace = canonical + namespace[match.end(1) :]
            reasons.add("scheme alias")
    if len(name) > 1 and name.endswith("/"):
        name = name.rstrip("/") or name
        reasons.add("trailing slash")
    path = "/" + name
    file_match = _FILE.search(path)
    if (
        file_match
        and file_match.start() > 0
        and prefixes is not None
        and (namespace.lower(), _strip_partitions(path[: file_match.start()])[1:].lower()) in prefixes
    ):
        path = path[: file_match.start()]
        reasons.add("file under a prefix")
    stripped = _strip_partitions(path)
    if stripped != path:
        reasons.add("partition suffix")
    return (namespace, stripped[1:]), reasons


def _strip_partitions(path: str) -> str:
    while True:
        part = _PARTITION.search(path) or _DATE_SUFFIX.search(path)
        if not part or part.start() == 0:
            return path
        path = path[: part.start()]


def lint_names(datasets: Iterable[tuple[str, str]]) -> dict[str, Any]:
    """``{"groups": [{"datasets", "reason", "suggested"}]}`` for every identity with two or more names."""
    names = set(datasets)
    prefixes = {(r[0].lower(), r[1].lower()) for r, _ in (_reduce(ns, n) for ns, n in names)}
    groups: dict[tuple[str, str], list[tuple[tuple[str, str], tuple[str, str], set[str]]]] = {}
    for namespace, name in names:
        reduced, reasons = _reduce(namespace, name, prefixes)
        key = (reduced[0].lower(), reduced[1].lower())
        groups.setdefault(key, []).append(((namespace, name), reduced, reasons))
    out: list[dict[str, Any]] = []
    for members in groups.values():
        if len(members) < 2:
            continue
        reasons = set().union(*(m[2] for m in members))
        if len({m[1] for m in members}) > 1:
            reasons.add("case")
        suggested = _suggest(members)
        out.append(
            {
                "datasets": [{"namespace": ns, "name": n} for ns, n in sorted(m[0] for m in members)],
                "reason": ", ".join(r for r in REASONS if r in reasons),
                "suggested": {"namespace": suggested[0], "name": suggested[1]},
            }
        )
    out.sort(key=lambda g: (g["suggested"]["namespace"], g["suggested"]["name"]))
    return {"groups": out}


def _suggest(members: list[tuple[tuple[str, str], tuple[str, str], set[str]]]) -> tuple[str, str]:
    """The most common reduced spelling; on a tie the one that is an existing name, then lower case."""
    counts = Counter(reduced for _, reduced, _ in members)
    originals = {m[0] for m in members}
    return min(counts, key=lambda r: (-counts[r], r not in originals, r != (r[0].lower(), r[1].lower()), r))
