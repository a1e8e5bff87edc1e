"""Every custom OpenLineage facet of airflow-lineage-plus, each with a JSON Schema shipped in ``schemas/``.

They follow the client's pattern (``openlineage.client.facet_v2``): thin attrs subclasses of the base
facet classes whose ``_get_schema()`` names the shipped schema file. Keys (``key``, from
:mod:`airflow_lineage_plus.facet_keys`) are prefixed ``lineagePlus_`` so they never collide with standard
or provider facets.

Declared by authors:

- :class:`DataContract` (dataset facet ``lineagePlus_dataContract``): the data contract a dataset follows.
- :class:`OwningTeam` (job facet ``lineagePlus_owningTeam``): the team that owns a task's output.
- :class:`SloTier` (job facet ``lineagePlus_sloTier``): the service level a task is held to.

Written by the package:

- :class:`SkipStateRunFacet` (``lineagePlus_skipState``): the task instance was skipped, why, by what.
- :class:`ExecutionModeRunFacet` (``lineagePlus_executionMode``): a run that did no real work, or only part
  of it.
- :class:`TrimmedRunFacet` (``lineagePlus_trimmed``): what was cut from an event to fit the limits.
- :class:`FoldedFromRunFacet` (``lineagePlus_foldedFrom``): the run a self-emitted event was folded from.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, ClassVar

import attr
from openlineage.client.facet_v2 import DatasetFacet, JobFacet, RunFacet

from airflow_lineage_plus import facet_keys as keys

SCHEMA_DIR = Path(__file__).parent / "schemas"
SCHEMA_BASE_URL = "https://raw.githubusercontent.com/airflow-lineage-plus/airflow-lineage-plus/main/airflow_lineage_plus/schemas"


def schema_url(name: str, version: str | None = None) -> str:
    """The ``_schemaURL`` of the facet defined as ``$defs/<name>`` in ``schemas/<name>.json`` or, for a later
    version of its schema, ``schemas/<version>/<name>.json`` (``version`` as OpenLineage writes it:
    ``"1-1-0"``). An earlier version's file is never changed, so the events that name it stay valid."""
    folder = f"{version}/" if version else ""
    return f"{SCHEMA_BASE_URL}/{folder}{name}.json#/$defs/{name}"


@attr.define
class DataContract(DatasetFacet):
    """The data contract a dataset is published under.

    Attributes:
        version: contract version, semantic versioning recommended (``"2.1.0"``).
        name: contract name, when it differs from the dataset name.
        url: where the contract is documented.
        status: ``ACTIVE``, ``DEPRECATED`` or ``DRAFT``.
    """

    key: ClassVar[str] = keys.DATA_CONTRACT
    version: str
    name: str | None = attr.field(default=None)
    url: str | None = attr.field(default=None)
    status: str | None = attr.field(default=None)

    @staticmethod
    def _get_schema() -> str:
        return schema_url("DataContractDatasetFacet")


@attr.define
class OwningTeam(JobFacet):
    """The team that owns a task and answers for its outputs.

    Attributes:
        name: team name (``"analytics-engineering"``).
        contact: where to reach the team (channel, e-mail, pager).
    """

    key: ClassVar[str] = keys.OWNING_TEAM
    name: str
    contact: str | None = attr.field(default=None)

    @staticmethod
    def _get_schema() -> str:
        return schema_url("OwningTeamJobFacet")


@attr.define
class SloTier(JobFacet):
    """The service level a task is held to.

    Attributes:
        tier: tier name (``"gold"``, ``"tier-1"``).
        freshnessMinutes: how stale its outputs may become before the SLO is breached.
    """

    key: ClassVar[str] = keys.SLO_TIER
    tier: str
    freshnessMinutes: int | None = attr.field(default=None)

    @staticmethod
    def _get_schema() -> str:
        return schema_url("SloTierJobFacet")


SELF_SKIP = "SELF_SKIP"
SHORT_CIRCUIT = "SHORT_CIRCUIT"
BRANCH_NOT_TAKEN = "BRANCH_NOT_TAKEN"
TRIGGER_RULE = "TRIGGER_RULE"
MANUAL = "MANUAL"
UNKNOWN = "UNKNOWN"
#: Values of :attr:`SkipStateRunFacet.reason` (the schema's enum).
SKIP_REASONS = (SELF_SKIP, SHORT_CIRCUIT, BRANCH_NOT_TAKEN, TRIGGER_RULE, MANUAL, UNKNOWN)
#: Values of :attr:`ExecutionModeRunFacet.mode` (the enum of its schema, version
#: :data:`EXECUTION_MODE_VERSION`; PARTIAL came with 1-1-0).
EXECUTION_MODES = ("RAN", "CACHED", "NO_OP", "PARTIAL")
#: The version of the execution mode facet's schema the package writes (``schemas/1-1-0/``); 1-0-0, without
#: PARTIAL, is ``schemas/ExecutionModeRunFacet.json``, which older events name.
EXECUTION_MODE_VERSION = "1-1-0"


@attr.define
class SkipStateRunFacet(RunFacet):
    """The task instance was skipped (did no work in this run), why, and what caused it.

    Attributes:
        skipped: True: the task instance did no work and wrote none of its outputs.
        reason: one of :data:`SKIP_REASONS`.
        message: human-readable explanation; for ``SELF_SKIP`` the exception message.
        causedBy: task_id of the task that caused it, where known.
        triggerRule: the task's trigger rule, for ``TRIGGER_RULE``.
        upstreamStates: state of each direct upstream task, for ``TRIGGER_RULE``.
        state: the Airflow state (``skipped`` or ``upstream_failed``).
        mapIndex: map index of the task instance (-1 when not mapped).
        tryNumber: the Airflow try number the record belongs to.
    """

    key: ClassVar[str] = keys.SKIP_STATE
    skipped: bool
    reason: str
    message: str | None = attr.field(default=None)
    causedBy: str | None = attr.field(default=None)
    triggerRule: str | None = attr.field(default=None)
    upstreamStates: dict[str, str] | None = attr.field(default=None)
    state: str | None = attr.field(default=None)
    mapIndex: int | None = attr.field(default=None)
    tryNumber: int | None = attr.field(default=None)

    @staticmethod
    def _get_schema() -> str:
        return schema_url("SkipStateRunFacet")


@attr.define
class ExecutionModeRunFacet(RunFacet):
    """How a run that ran went: ``RAN``, ``CACHED`` (reused an earlier result), ``NO_OP`` or ``PARTIAL`` (did
    only part of its work)."""

    key: ClassVar[str] = keys.EXECUTION_MODE
    mode: str
    reason: str | None = attr.field(default=None)

    @staticmethod
    def _get_schema() -> str:
        return schema_url("ExecutionModeRunFacet", EXECUTION_MODE_VERSION)


@attr.define
class TrimmedRunFacet(RunFacet):
    """What airflow-lineage-plus cut from this event to keep it within limits, and how much."""

    key: ClassVar[str] = keys.TRIMMED
    cuts: list[dict[str, Any]]
    budgetBytes: int | None = attr.field(default=None)
    originalBytes: int | None = attr.field(default=None)
    finalBytes: int | None = attr.field(default=None)

    @staticmethod
    def _get_schema() -> str:
        return schema_url("TrimmedRunFacet")


@attr.define
class FoldedFromRunFacet(RunFacet):
    """The job and run a folded event was originally emitted for."""

    key: ClassVar[str] = keys.FOLDED_FROM
    jobNamespace: str
    jobName: str
    runId: str
    eventType: str | None = attr.field(default=None)

    @staticmethod
    def _get_schema() -> str:
        return schema_url("FoldedFromRunFacet")
