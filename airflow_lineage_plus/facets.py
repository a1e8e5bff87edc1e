"""Custom OpenLineage facets of airflow-lineage-plus, each with a JSON Schema shipped in ``schemas/``.

They follow the client's pattern (``openlineage.client.facet_v2``): thin attrs subclasses of the base
facet classes whose ``_get_schema()`` names the shipped schema file. Keys are prefixed ``lineagePlus_``
so they never collide with standard or provider facets.

- :class:`DataContract` (dataset facet ``lineagePlus_dataContract``): the data contract a dataset follows.
- :class:`OwningTeam` (job facet ``lineagePlus_owningTeam``): the team that owns a task's output.
- :class:`SloTier` (job facet ``lineagePlus_sloTier``): the service level a task is held to.
"""

from __future__ import annotations

from pathlib import Path
from typing import ClassVar

import attr
from openlineage.client.facet_v2 import DatasetFacet, JobFacet

SCHEMA_DIR = Path(__file__).parent / "schemas"
SCHEMA_BASE_URL = "https://raw.githubusercontent.com/airflow-lineage-plus/airflow-lineage-plus/main/airflow_lineage_plus/schemas"


def schema_url(name: str) -> str:
    """The ``_schemaURL`` of the facet defined as ``$defs/<name>`` in ``schemas/<name>.json``."""
    return f"{SCHEMA_BASE_URL}/{name}.json#/$defs/{name}"


@attr.define
class DataContract(DatasetFacet):
    """The data contract a dataset is published under.

    Attributes:
        version: contract version, semantic versioning recommended (``"2.1.0"``).
        name: contract name, when it differs from the dataset name.
        url: where the contract is documented.
        status: ``ACTIVE``, ``DEPRECATED`` or ``DRAFT``.
    """

    key: ClassVar[str] = "lineagePlus_dataContract"
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

    key: ClassVar[str] = "lineagePlus_owningTeam"
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

    key: ClassVar[str] = "lineagePlus_sloTier"
    tier: str
    freshnessMinutes: int | None = attr.field(default=None)

    @staticmethod
    def _get_schema() -> str:
        return schema_url("SloTierJobFacet")
