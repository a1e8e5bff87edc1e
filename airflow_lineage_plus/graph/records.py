"""The records of jobs and datasets in the graph, and the shapes of the schema and column-lineage facts
they keep.

Like runs (:mod:`.runs`), every fact carries the event time it came from and the later one wins, ties
broken by content.
"""

from __future__ import annotations

from array import array
from collections.abc import Callable
from typing import Any, TypeVar

import msgspec

from airflow_lineage_plus import node_ids as ids
from airflow_lineage_plus.graph.declared import NEVER, is_declared_time
from airflow_lineage_plus.graph.runs import RunRecord

_T = TypeVar("_T")

Fields = tuple[tuple[str, str | None], ...]
FullFields = tuple[tuple[str, str | None, str | None], ...]  # with descriptions
Transform = tuple[str | None, str | None, str | None]
ColumnInput = tuple[str, str, str, tuple[Transform, ...]]  # (namespace, name, field, transformations)
# (schema, owners, column lineage and its tie-breaker, bad) of a dataset's facets
DatasetFacts = tuple[
    tuple[Fields, FullFields] | None,
    tuple[str, ...] | None,
    tuple[dict[str, tuple[ColumnInput, ...]], str] | None,
    bool,
]


#: an inputs or outputs list of a job already folded: [its edges, the earliest time it was seen]
ListEntry = list[Any]
Edge = tuple[str, str]


class JobRecord:
    __slots__ = (
        "current_cache",
        "declared",
        "decoded",
        "id",
        "io_sets",
        "last_inputs",
        "last_outputs",
        "latest_cache",
        "lists",
        "name",
        "namespace",
        "owners",
        "owners_key",
        "raw_cache",
        "ref",
        "ref_time",
        "refs",
        "runs",
        "slo_key",
        "slo_minutes",
        "sources",
        "targets",
    )

    def __init__(self, namespace: str, name: str) -> None:
        self.id = ids.job_id(namespace, name)
        self.namespace = namespace
        self.name = name
        self.runs: list[RunRecord] = []
        self.owners: tuple[str, ...] = ()
        self.owners_key: tuple[int, tuple[str, ...]] | None = None
        self.ref: int | None = None  # latest event of this job (for facets shown in details)
        self.ref_time = NEVER  # (a declaration's event is shown only until a run's: :mod:`.declared`)
        self.latest_cache: tuple[int, RunRecord | None] | None = None
        self.current_cache: tuple[int, frozenset[Edge] | None] | None = None
        self.raw_cache: dict[str, tuple[msgspec.Raw, Any]] = {}
        #: bare inputs/outputs lists already folded, per direction (False: inputs, True: outputs)
        self.lists: dict[tuple[bool, bytes], ListEntry] = {}
        self.last_inputs: tuple[msgspec.Raw, ListEntry] | None = None  # the last of them, per direction
        self.last_outputs: tuple[msgspec.Raw, ListEntry] | None = None
        self.io_sets: dict[frozenset[Edge], frozenset[Edge]] = {}  # equal edge sets of runs, shared
        #: per direction (False: inputs, True: outputs), the datasets of the last list that had to be
        #: decoded (one with facets: a terminal event's outputs carry new statistics each run) and its
        #: ListEntry; the next such list usually names the same datasets
        self.decoded: list[tuple[tuple[DatasetRecord, ...], ListEntry] | None] = [None, None]
        self.sources: set[str] = set()  # input dataset ids already linked
        self.targets: set[str] = set()  # output dataset ids already linked
        self.refs = array("Q")  # every event of the job (offset << 32 | length), in log order
        #: the latest declaration (JobEvent): ((declared time, tie), its edges); see :mod:`.declared`
        self.declared: tuple[tuple[int, str], frozenset[tuple[str, str]]] | None = None
        # freshness target of its outputs (``lineagePlus_sloTier.freshnessMinutes``), latest by event time
        self.slo_minutes: int | None = None
        self.slo_key: tuple[int, int] | None = None

    def shared_io(self, edges: frozenset[Edge]) -> frozenset[Edge]:
        """``edges``, as the one object every run of this job reporting them holds."""
        known = self.io_sets.get(edges)
        if known is None:
            known = self.io_sets[edges] = edges
        return known


class DatasetRecord:
    __slots__ = (
        "columns",
        "columns_key",
        "dataset_refs",
        "facets_raw",
        "facts",
        "fields",
        "fields_key",
        "id",
        "name",
        "namespace",
        "owners",
        "owners_key",
        "raw_cache",
        "ref",
        "ref_time",
        "schemas",
        "write_ref",
        "write_time",
    )

    def __init__(self, namespace: str, name: str) -> None:
        self.id = ids.dataset_id(namespace, name)
        self.namespace = namespace
        self.name = name
        self.schemas: dict[Fields, int] = {}  # distinct (name, type) schema -> last time seen
        self.fields: tuple[tuple[str, str | None, str | None], ...] = ()  # latest schema, with descriptions
        self.fields_key: tuple[int, Fields] | None = None
        self.owners: tuple[str, ...] = ()
        self.owners_key: tuple[int, tuple[str, ...]] | None = None
        self.columns: dict[str, tuple[ColumnInput, ...]] = {}
        self.columns_key: tuple[int, str] | None = None
        self.ref: int | None = None
        self.ref_time = NEVER
        self.write_ref: int | None = None  # latest event that wrote it (quality figures)
        self.write_time = -1
        self.raw_cache: dict[str, tuple[msgspec.Raw, Any]] = {}  # facet -> (last raw bytes, decoded)
        self.facets_raw: msgspec.Raw | None = None  # the last facets seen, and what was kept of them
        self.facts: DatasetFacts = (None, None, None, False)
        #: events naming it as their ``dataset`` (dataset events): they belong to no job's ``refs``
        self.dataset_refs: list[int] = []

    def schema_versions(self) -> list[Fields]:
        """Distinct schemas, newest first (ordered by the last time each was seen). Schemas only declared
        in DAG code count only while no run reported one (:mod:`.declared`)."""
        seen = sorted(self.schemas.items(), key=lambda kv: (kv[1], kv[0]), reverse=True)
        reported = [schema for schema, micros in seen if not is_declared_time(micros)]
        return reported or [schema for schema, _ in seen]


def cached_facet(
    cache: dict[str, tuple[msgspec.Raw, Any]], facet: str, raw: Any, decode: Callable[[bytes], _T]
) -> _T:
    """The decoded facet, decoding only when its bytes differ from the last ones seen for this record
    (compared in place; copied only when they differ)."""
    hit = cache.get(facet)
    if hit is not None and hit[0] == raw:
        return hit[1]  # type: ignore[no-any-return]
    data = bytes(raw)
    value = decode(data)
    cache[facet] = (msgspec.Raw(data), value)
    return value
