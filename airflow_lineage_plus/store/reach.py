"""What a walk from a node may reach: the nodes within a depth of it, up- or downstream, by every edge an
event ever reported or declared (one recursive query), so that a graph can read their records at once
instead of a level of the walk at a time.

It is more than the walk reaches (a retired edge counts, and so does a node the reader may not see) and
less than it may (the ``triggered`` edges of cross-DAG lineage are not edges of the store): the walk
still decides, and reads what this did not.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import sqlalchemy as sa

from airflow_lineage_plus.store import facts as f
from airflow_lineage_plus.store import schema
from airflow_lineage_plus.store.database import LineageStore

_edge = schema.edge
#: the most levels one query follows: a deeper walk (the CLI takes any depth, and lineage may have
#: cycles, which the query follows round again at each level) reads the rest a level at a time
MAX_DEPTH = 24


def _reach() -> Any:
    """``WITH RECURSIVE``: (key, id, whether a job, level) from the start, each step one edge: from a job
    to the datasets on its side ``job_side`` (0: the inputs, upstream), from a dataset to the jobs on its
    other side."""
    start = sa.select(  # cast: the recursive step's columns must have these types exactly (PostgreSQL)
        sa.cast(sa.bindparam("key"), sa.BigInteger()).label("node_key"),
        sa.cast(sa.bindparam("id"), sa.Text()).label("node_id"),
        sa.cast(sa.bindparam("is_job"), sa.Integer()).label("is_job"),
        sa.cast(sa.literal(0), sa.Integer()).label("level"),
    ).cte("lineage_plus_reach", recursive=True)
    side = sa.bindparam("job_side", type_=sa.SmallInteger())
    from_job = sa.and_(start.c.is_job == 1, _edge.c.job_key == start.c.node_key, _edge.c.output == side)
    from_dataset = sa.and_(
        start.c.is_job == 0, _edge.c.dataset_key == start.c.node_key, _edge.c.output == 1 - side
    )
    step = (
        sa.select(
            sa.case((start.c.is_job == 1, _edge.c.dataset_key), else_=_edge.c.job_key),
            sa.case((start.c.is_job == 1, _edge.c.dataset_id), else_=_edge.c.job_id),
            1 - start.c.is_job,
            start.c.level + 1,
        )
        .select_from(start.join(_edge, sa.or_(from_job, from_dataset)))
        .where(start.c.level < sa.bindparam("depth"))
    )
    walk = start.union(step)
    return sa.select(walk.c.node_id).distinct().limit(sa.bindparam("limit"))


_REACH = _reach()


def reach(store: LineageStore, node_id: str, depth: int, *, upstream: bool, limit: int) -> list[str] | None:
    """The ids of the nodes within ``depth`` edges (at most :data:`MAX_DEPTH`) of ``node_id`` (itself
    included), up- or downstream; None when there are more than ``limit``."""
    parameters = {
        "key": f.key_of(node_id),
        "id": node_id,
        "is_job": int(node_id.startswith("job:")),
        "job_side": 0 if upstream else 1,
        "depth": min(depth, MAX_DEPTH),
        "limit": limit + 1,
    }
    with store.read() as connection:
        rows: Sequence[Any] = connection.execute(_REACH, parameters).all()
    return None if len(rows) > limit else [str(found) for (found,) in rows]
