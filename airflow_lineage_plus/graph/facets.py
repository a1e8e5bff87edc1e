"""What the graph keeps of a dataset's facets: its schema, owners and column lineage.

Each facet is decoded only when its bytes differ from the last ones seen for that dataset, and what it
decodes to is shared between datasets (equal schema fields and column-lineage inputs are one object in
memory, and an exported graph writes each once).
"""

from __future__ import annotations

import hashlib
from typing import Any

import msgspec

from airflow_lineage_plus.graph import wire as w
from airflow_lineage_plus.graph.records import (
    ColumnInput,
    DatasetFacts,
    DatasetRecord,
    Fields,
    FullFields,
    cached_facet,
)


class FacetReader:
    """Reads datasets' facets for one graph, sharing what they decode to."""

    def __init__(self) -> None:
        self.shared: dict[Any, Any] = {}
        self.shared_schemas: dict[FullFields, tuple[Fields, FullFields]] = {}

    def facts(self, record: DatasetRecord, raw: msgspec.Raw) -> DatasetFacts:
        """What the graph keeps of ``record``'s facets ``raw``, cached on the record with the bytes they
        came from. ``bad``: the facets are not a JSON object."""
        data = bytes(raw)
        facets = w.decode_dataset_facets(data)
        if facets is None:
            facts: DatasetFacts = (None, None, None, True)
        else:
            cache = record.raw_cache
            facts = (
                cached_facet(cache, "schema", facets.schema, self._schema) if len(facets.schema) else None,
                cached_facet(cache, "ownership", facets.ownership, w.decode_owner_names)
                if len(facets.ownership)
                else None,
                cached_facet(cache, "columnLineage", facets.columnLineage, self._columns)
                if len(facets.columnLineage)
                else None,
                False,
            )
        record.facets_raw, record.facts = msgspec.Raw(data), facts
        return facts

    def _schema(self, raw: bytes) -> tuple[Fields, FullFields] | None:
        schema = w.decode_schema(raw)
        if schema is None or schema.fields is None:
            return None
        full = tuple([(f.name, f.type, f.description) for f in schema.fields])
        known = self.shared_schemas.get(full)
        if known is None:  # a schema no dataset had yet: share its fields with the other schemas
            share = self.shared.setdefault
            full = tuple([share(field, field) for field in full])
            names = tuple([share(pair, pair) for pair in [(name, kind) for name, kind, _ in full]])
            known = self.shared_schemas[full] = (share(names, names), full)
        return known

    def _columns(self, raw: bytes) -> tuple[dict[str, tuple[ColumnInput, ...]], str] | None:
        """The column lineage, and a digest of its bytes that breaks ties between lineages of one time."""
        lineage = w.decode_column_lineage(raw)
        if lineage is None or lineage.fields is None:
            return None
        share = self.shared.setdefault
        columns = {column: share(inputs, inputs) for column, inputs in w.column_inputs(lineage).items()}
        return columns, hashlib.blake2b(raw, digest_size=16).hexdigest()
