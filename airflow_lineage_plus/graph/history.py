"""The per-run history of a node: what each of its recent runs recorded, as plain records.

This is the one thing ``what-changed`` (:mod:`.changes`, :mod:`.what_changed`) asks of a lineage source,
through :meth:`LineageSource.run_history <airflow_lineage_plus.graph.source.LineageSource.run_history>`.
For each node id asked for that the source knows, a :class:`History` holding the node's newest runs (a
job's ``runs``, a dataset's ``dataset_runs``, default ``runs``) that started at or before ``as_of``
(epoch microseconds; ``None``: now), **newest first**:

* a job (``job:NS:NAME``): one :class:`JobRun` per run of the job, whatever its state;
* a dataset (``dataset:NS:NAME``): one :class:`DatasetRun` per COMPLETED run of a job that wrote it
  (reported it among its outputs); for a dataset no job writes (a source), per completed run of a job
  that read it, with the figures that run recorded of its input. ``slo_minutes`` is the smallest
  ``lineagePlus_sloTier.freshnessMinutes`` of its writers.

Every field is what the run's events recorded, ``None`` (or empty) where they recorded nothing; a source
never guesses. Times are epoch microseconds. The records are plain values: a SQL store builds them from
its rows exactly as the event log builds them from its events (:mod:`.run_history`).
"""

from __future__ import annotations

import hashlib

import attrs

from airflow_lineage_plus.graph.records import Fields

#: (column, null count) pairs
Nulls = tuple[tuple[str, int], ...]
#: (assertion, column or None, success) triples
Assertions = tuple[tuple[str, str | None, bool], ...]


@attrs.frozen
class JobRun:
    """One run of a job.

    ``state``: COMPLETED, FAILED, ABORTED, SKIPPED, UPSTREAM_FAILED or RUNNING; ``tries``: the Airflow
    try number (1 for a first try; None outside Airflow); ``execution_mode``: the
    ``lineagePlus_executionMode`` facet's mode (full, incremental, cached, partial ...); ``sql`` and
    ``source_code``: a version of the job's SQL (the ``sql`` facet's query) and of its code (the
    ``sourceCodeLocation`` facet's version, else a digest of the ``sourceCode`` facet), see
    :func:`digest`."""

    run_id: str
    state: str
    started: int | None = None
    ended: int | None = None
    tries: int | None = None
    execution_mode: str | None = None
    sql: str | None = None
    source_code: str | None = None

    @property
    def duration(self) -> float | None:
        """Seconds from start to end (None without both)."""
        if self.started is None or self.ended is None:
            return None
        return (self.ended - self.started) / 1_000_000

    @property
    def at(self) -> int | None:
        return self.ended if self.ended is not None else self.started


@attrs.frozen
class DatasetRun:
    """What one completed run recorded about one dataset.

    ``at``: when the run ended (the write); ``rows``: ``outputStatistics.rowCount``, else
    ``dataQualityMetrics.rowCount``; ``bytes``: ``outputStatistics.size``, else
    ``dataQualityMetrics.bytes``; ``nulls``: ``dataQualityMetrics.columnMetrics.*.nullCount``;
    ``fields``: the ``schema`` facet ((name, type) pairs; None: no schema recorded); ``assertions``:
    ``dataQualityAssertions``; ``partition``: the ``subset`` facet's partition identifier and
    ``dimensions`` its (dimension, value) pairs."""

    run_id: str
    job_id: str
    at: int
    rows: int | None = None
    bytes: int | None = None
    nulls: Nulls = ()
    fields: Fields | None = None
    assertions: Assertions = ()
    partition: str | None = None
    dimensions: tuple[tuple[str, str], ...] = ()

    @property
    def has_figures(self) -> bool:
        """Whether the run recorded anything a change can be measured on."""
        return bool(
            self.rows is not None
            or self.bytes is not None
            or self.nulls
            or self.assertions
            or self.partition is not None
        )


@attrs.frozen
class History:
    """The newest runs of one node, newest first (see the module docstring)."""

    node_id: str
    runs: tuple[JobRun, ...] | tuple[DatasetRun, ...] = ()
    slo_minutes: int | None = None


@attrs.frozen
class LatestAssertions:
    """The ``dataQualityAssertions`` one job's latest finished run recorded on a dataset (as an output it
    wrote or an input it checked: GX, dbt tests, ``runtime.assertion``): what a source's
    ``latest_assertions`` gives per dataset, one per such job, newest first. ``at``: when the run ended
    (epoch microseconds)."""

    dataset_id: str
    job_id: str
    run_id: str
    at: int
    assertions: Assertions = ()


def digest(text: str | None) -> str | None:
    """A short version of a text (the first 12 hex digits of its SHA-256), None for None: what a run's SQL
    or code is compared by, and shown as."""
    if text is None:
        return None
    return hashlib.sha256(text.encode("utf-8", "replace")).hexdigest()[:12]
