"""The statements that find the jobs next to a dataset that ran last (read by
:meth:`.folded.FoldedState.newest_adjacent`).

A dataset's history is its newest writes (for a source, its newest reads) and its latest assertions come
from the jobs next to it that ran last, so those questions read its jobs newest latest event first. For a
dataset with few jobs next to it, every job with its latest event's time is read; for a source every job
reads, the newest latest events of all nodes are read through ``lineage_plus_fact_ref_idx`` and those of
its jobs kept, then its jobs with a later skip record (``lineage_plus_skipped_task_time_idx``).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import sqlalchemy as sa

from airflow_lineage_plus.store import facts as f
from airflow_lineage_plus.store import schema
from airflow_lineage_plus.store.keys import key_in

#: the jobs next to a dataset by more edges than this are found newest first by the index: in the newest
#: latest events of all nodes, ``SCAN`` per job asked for (at least ``READ_WHOLE``)
READ_WHOLE = 1_000
SCAN = 50

_edge, _fact, _skip, _node = schema.edge, schema.fact, schema.skipped_task, schema.node
#: the edges a run reported on some sides of a dataset (writers: output 1, readers: 0)
_SIDES = _edge.c.output.in_(sa.bindparam("sides", expanding=True))
_REPORTED = _edge.c.first_reported.is_not(None)
_NEXT_TO = sa.and_(_edge.c.dataset_key == sa.bindparam("dataset"), _SIDES, _REPORTED)

#: every job next to the datasets ``keys``, with its latest event's time
ADJACENT = (
    sa.select(_edge.c.job_id, _edge.c.dataset_id, _fact.c.event_time, _edge.c.job_key)
    .outerjoin(_fact, sa.and_(_fact.c.subject_key == _edge.c.job_key, _fact.c.fact == f.JOB_REF))
    .where(key_in(_edge.c.dataset_key), _SIDES, _REPORTED)
)
_past_whole = (
    sa.select(sa.literal(1))
    .where(_edge.c.dataset_key == _node.c.node_key, _SIDES)
    .limit(1)
    .offset(sa.bindparam("whole"))
    .scalar_subquery()
)
#: the datasets ``keys`` with more than ``whole`` edges on those sides (whether the index has an entry past
#: the first ``whole``: at most that many read, not every edge counted)
CROWDED = sa.select(_node.c.node_key).where(key_in(_node.c.node_key), _past_whole.is_not(None))
_NEWEST_REFS = (
    sa.select(_fact.c.subject_key, _fact.c.event_time)
    .where(_fact.c.fact == f.JOB_REF)
    .order_by(_fact.c.event_time.desc())
    .limit(sa.bindparam("scan"))
    .subquery()
)
#: the jobs next to ``dataset`` among the nodes with the newest ``scan`` latest events
NEWEST_ADJACENT = (
    sa.select(_edge.c.job_id, _edge.c.dataset_id, _NEWEST_REFS.c.event_time)
    .join(_edge, _edge.c.job_key == _NEWEST_REFS.c.subject_key)
    .where(_NEXT_TO)
)
#: the skip records since ``since``; then which of their jobs ``keys`` are next to ``dataset``
SKIPPED_SINCE = sa.select(_skip.c.job_key, _skip.c.event_time).where(
    _skip.c.event_time >= sa.bindparam("since")
)
JOBS_NEXT_TO = sa.select(_edge.c.job_id, _edge.c.dataset_id, _edge.c.job_key).where(
    key_in(_edge.c.job_key), _NEXT_TO
)


def latest_times(rows: Sequence[Any], dataset_id: str) -> dict[str, int | None]:
    """{job id: the latest time} of (job id, dataset id, time or None, ...) rows of ``dataset_id`` (the
    rows of another id with its key are left out)."""
    found: dict[str, int | None] = {}
    for job_id, row_dataset, at, *_ in rows:
        if row_dataset == dataset_id:
            found[str(job_id)] = later(found.get(str(job_id)), None if at is None else int(at))
    return found


def later(one: int | None, other: int | None) -> int | None:
    """The later of two times, either of which may be unknown (None)."""
    return other if one is None else one if other is None else max(one, other)
