"""A column among a list of keys given when the statement runs: ``key_in(column)``, bound as ``keys``.

On SQLite and MySQL it is ``column IN (?, ?, ...)``, the list spread over one parameter per key. On
PostgreSQL it is ``column = ANY(%(keys)s::BIGINT[])``, the list one array parameter, so the statement's text
is the same however many keys are asked: SQLAlchemy renders it once, and where the store lets psycopg
prepare statements (``[lineage_plus] store_prepared_statements``) PostgreSQL plans it once instead of at
every execution (docs/graph.md has what that saves per question).

    statement = sa.select(schema.node.c.node_id).where(key_in(schema.node.c.node_key))
    connection.execute(statement, {"keys": [1, 2, 3]})
"""

from __future__ import annotations

from typing import Any

import sqlalchemy as sa
from sqlalchemy.ext.compiler import compiles
from sqlalchemy.sql import ColumnElement
from sqlalchemy.sql.visitors import InternalTraversal


class _KeyIn(ColumnElement[bool]):
    """``column`` among the list bound as ``name`` (compiled per engine below)."""

    inherit_cache = True
    type = sa.Boolean()
    #: a condition of its own: SQLite gets ``column IN (...)``, not ``(column IN (...)) = 1``, which no
    #: index serves
    _is_implicitly_boolean = True
    _traverse_internals = [
        ("column", InternalTraversal.dp_clauseelement),
        ("name", InternalTraversal.dp_string),
    ]

    def __init__(self, column: sa.ColumnElement[Any], name: str) -> None:
        self.column = column
        self.name = name


def key_in(column: sa.ColumnElement[Any], name: str = "keys") -> sa.ColumnElement[bool]:
    """``column`` among the keys bound as ``name`` (a list of values of the column's type)."""
    return _KeyIn(column, name)


@compiles(_KeyIn)
def _spread(element: _KeyIn, compiler: Any, **kw: Any) -> str:
    text: str = compiler.process(element.column.in_(sa.bindparam(element.name, expanding=True)), **kw)
    return text


@compiles(_KeyIn, "postgresql")
def _array(element: _KeyIn, compiler: Any, **kw: Any) -> str:
    from sqlalchemy.dialects import postgresql  # loaded already where this compiles; not on SQLite

    keys = sa.bindparam(element.name, type_=postgresql.ARRAY(element.column.type))
    text: str = compiler.process(element.column == sa.any_(keys), **kw)
    return text
