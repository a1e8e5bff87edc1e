"""Searching the store's jobs and datasets by any part of their names, ranked by the engine."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import sqlalchemy as sa

from airflow_lineage_plus.store import schema
from airflow_lineage_plus.store.database import LineageStore

_node = schema.node


def search_nodes(store: LineageStore, text: str, limit: int) -> list[tuple[int, str, str]]:
    """(kind, namespace, name) of the ``limit`` nodes whose namespace or name contains ``text`` (in
    any case of ASCII letters; other letters as written, or as PostgreSQL's locale folds them) that
    rank first: the name equal to it, then starting with it, then containing it, then the rest; the
    shorter name first, then by name, namespace and kind (:func:`~airflow_lineage_plus.graph.answers.
    rank_search`, which puts these in its exact order). Ranked by the engine: every match counts,
    however many there are."""
    escaped = text.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")
    name, namespace = _node.c.name, _node.c.namespace
    sqlite = store.dialect == "sqlite"  # its LIKE folds ASCII letters (what its lower() folds)

    def folded(value: Any) -> Any:  # elsewhere LIKE is case-sensitive: both sides folded by lower()
        return value if sqlite else sa.func.lower(value)

    contains, starts = folded(sa.literal(f"%{escaped}%")), folded(sa.literal(f"{escaped}%"))
    rank = sa.case(
        (sa.func.lower(name) == folded(sa.literal(text.lower() if sqlite else text)), 0),
        (folded(name).like(starts, escape="\\"), 1),
        (folded(name).like(contains, escape="\\"), 2),
        else_=3,
    )
    matches = sa.or_(folded(name).like(contains, escape="\\"), folded(namespace).like(contains, escape="\\"))
    order: list[Any] = [name, namespace]
    if store.dialect == "postgresql":  # by code point, as Python orders the names
        order = [column.collate("C") for column in order]
    statement = (
        sa.select(_node.c.kind, _node.c.namespace, _node.c.name)
        .where(matches)
        .order_by(rank, sa.func.length(name), *order, _node.c.kind.desc())
        .limit(limit)
    )
    with store.read() as connection:
        rows: Sequence[Any] = connection.execute(statement).all()
    return [(int(k), str(ns), str(n)) for k, ns, n in rows]
