"""The fixed limits on what an event carries, and the count of everything cut to respect them.

One cutter for SQL text and one for schema fields, used both when a declaration is turned into facets
(:mod:`airflow_lineage_plus.author.build`) and when a whole event is checked before it leaves
(:mod:`airflow_lineage_plus.deliver.event_budget`). Nothing is cut silently: each cut is counted here
(:func:`cut_counts`) and reported by its caller.
"""

from __future__ import annotations

import threading
from collections import Counter
from collections.abc import Sequence
from typing import TypeVar

from airflow_lineage_plus.deliver import catalogue, redaction

T = TypeVar("T")

#: Characters after a cut that are read to recognise a secret the cut runs through.
CUT_CONTEXT = 4096

#: Appended to SQL text that was cut; ``{hidden}`` is the number of characters left out.
SQL_CUT_MARKER = "\n-- [cut by airflow-lineage-plus: {hidden} more characters]"
SQL_CUT = "SQL characters beyond sql_max_length"
SCHEMA_CUT = "schema fields beyond schema_max_columns"

_cuts: Counter[str] = Counter()
_cuts_lock = threading.Lock()


def cut_sql(query: str, limit: int) -> tuple[str, int]:
    """(``query`` cut to ``limit`` characters with :data:`SQL_CUT_MARKER`, characters left out).

    What is kept is redacted here already, so that a secret cut in two is not kept half: the part
    before the cut is compared with the redacted text around the cut (:data:`CUT_CONTEXT` characters
    on), and a secret the cut runs through is masked whole. The cut happens before the event's
    redaction scan, which then reads ``limit`` characters, not the whole query.
    """
    if len(query) <= limit:
        return query, 0
    hidden = len(query) - limit
    return _kept_part(query, limit) + SQL_CUT_MARKER.format(hidden=hidden), hidden


def _kept_part(query: str, limit: int) -> str:
    kept = redaction.scrub(query[:limit])
    around = redaction.scrub(query[: limit + CUT_CONTEXT])
    if around.startswith(kept):
        return kept
    same = next((i for i, (a, b) in enumerate(zip(kept, around, strict=False)) if a != b), len(kept))
    return kept[:same] + catalogue.MASK


def cut_fields(fields: Sequence[T], limit: int) -> tuple[list[T], int]:
    """(the first ``limit`` schema fields, how many were left out)."""
    if len(fields) <= limit:
        return list(fields), 0
    return list(fields[:limit]), len(fields) - limit


def count_cut(what: str, count: int) -> None:
    """Count ``count`` items cut as ``what``."""
    if count > 0:
        with _cuts_lock:
            _cuts[what] += count


def cut_counts() -> dict[str, int]:
    """How many items each kind of cut removed in this process (for tests and diagnostics)."""
    with _cuts_lock:
        return dict(_cuts)
