"""The records of jobs and datasets in the graph, and the shapes of the schema and column-lineage facts
they keep (what the folded state says of them: :mod:`airflow_lineage_plus.store.fold`)."""

from __future__ import annotations

from airflow_lineage_plus import node_ids as ids
from airflow_lineage_plus.graph.declared import is_declared_time
from airflow_lineage_plus.graph.runs import RunRecord

Fields = tuple[tuple[str, str | None], ...]
Transform = tuple[str | None, str | None, str | None]
ColumnInput = tuple[str, str, str, tuple[Transform, ...]]  # (namespace, name, field, transformations)
Edge = tuple[str, str]


class JobRecord:
    __slots__ = (
        "current_cache",
        "declared",
        "id",
        "io_sets",
        "latest_cache",
        "name",
        "namespace",
        "owners",
        "ref",
        "runs",
        "slo_minutes",
    )

    def __init__(self, namespace: str, name: str) -> None:
        self.id = ids.job_id(namespace, name)
        self.namespace = namespace
        self.name = name
        self.runs: list[RunRecord] = []
        self.owners: tuple[str, ...] = ()
        self.ref: int | None = None  # latest event of this job (for facets shown in details)
        self.latest_cache: tuple[int, RunRecord | None] | None = None
        self.current_cache: tuple[int, frozenset[Edge] | None] | None = None
        self.io_sets: dict[frozenset[Edge], frozenset[Edge]] = {}  # equal edge sets of runs, shared
        #: the latest declaration (JobEvent): ((declared time, tie), its edges); see :mod:`.declared`
        self.declared: tuple[tuple[int, str], frozenset[tuple[str, str]]] | None = None
        # freshness target of its outputs (``lineagePlus_sloTier.freshnessMinutes``), latest by event time
        self.slo_minutes: int | None = None

    def shared_io(self, edges: frozenset[Edge]) -> frozenset[Edge]:
        """``edges``, as the one object every run of this job reporting them holds."""
        known = self.io_sets.get(edges)
        if known is None:
            known = self.io_sets[edges] = edges
        return known


class DatasetRecord:
    __slots__ = (
        "columns",
        "fields",
        "id",
        "name",
        "namespace",
        "owners",
        "ref",
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
        self.owners: tuple[str, ...] = ()
        self.columns: dict[str, tuple[ColumnInput, ...]] = {}
        self.ref: int | None = None
        self.write_ref: int | None = None  # latest event that wrote it (quality figures)
        self.write_time = -1

    def schema_versions(self) -> list[Fields]:
        """Distinct schemas, newest first (ordered by the last time each was seen). Schemas only declared
        in DAG code count only while no run reported one (:mod:`.declared`)."""
        seen = sorted(self.schemas.items(), key=lambda kv: (kv[1], kv[0]), reverse=True)
        reported = [schema for schema, micros in seen if not is_declared_time(micros)]
        return reported or [schema for schema, _ in seen]
