"""Schema changes between two versions of a dataset: COLUMN_REMOVED, TYPE_CHANGED, COLUMN_ADDED."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

REMOVED, TYPE_CHANGED, ADDED = "COLUMN_REMOVED", "TYPE_CHANGED", "COLUMN_ADDED"
#: Changes that break a reader of the dataset (a query naming the column, a typed consumer); an added
#: column is compatible.
BREAKING_KINDS = frozenset({REMOVED, TYPE_CHANGED})


def diff_fields(
    before: Iterable[tuple[str, str | None]], after: Iterable[tuple[str, str | None]]
) -> list[dict[str, Any]]:
    """Changes from ``before`` to ``after``: removals, then type changes, then additions (schema order)."""
    old = dict(before)
    new = dict(after)
    changes: list[dict[str, Any]] = []
    changes += [{"kind": REMOVED, "column": c, "from": t, "to": None} for c, t in old.items() if c not in new]
    changes += [
        {"kind": TYPE_CHANGED, "column": c, "from": t, "to": new[c]}
        for c, t in old.items()
        if c in new and _norm(new[c]) != _norm(t)
    ]
    changes += [{"kind": ADDED, "column": c, "from": None, "to": t} for c, t in new.items() if c not in old]
    return changes


def parse_proposed(value: Any) -> list[tuple[str, str | None]]:
    """A proposed schema: ``[{"name", "type"}]``, a schema facet ``{"fields": [...]}`` or ``{name: type}``."""
    if isinstance(value, dict) and isinstance(value.get("fields"), list):
        value = value["fields"]
    if isinstance(value, dict):
        return [(str(k), None if v is None else str(v)) for k, v in value.items()]
    if isinstance(value, list):
        out: list[tuple[str, str | None]] = []
        for item in value:
            if isinstance(item, dict) and "name" in item:
                out.append((str(item["name"]), None if item.get("type") is None else str(item["type"])))
            elif isinstance(item, (list, tuple)) and len(item) == 2:
                out.append((str(item[0]), None if item[1] is None else str(item[1])))
            else:
                raise ValueError(f"cannot read proposed field {item!r}: expected {{'name', 'type'}}")
        return out
    raise ValueError("a proposed schema is a list of {'name', 'type'}, a schema facet or a {name: type} map")


def _norm(kind: str | None) -> str | None:
    return kind.strip().upper() if isinstance(kind, str) else None
