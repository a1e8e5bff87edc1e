"""airflow-lineage-plus: lineage you can trust for Airflow 3, on top of the OpenLineage provider.

Declare a task's lineage with :func:`lineage` (TaskFlow) or :class:`LineageMixin` (classic
operators); record facts inside a running task with ``airflow_lineage_plus.runtime``
(:mod:`airflow_lineage_plus.author.runtime`); name datasets with :mod:`airflow_lineage_plus.datasets`.
``docs/architecture.md`` shows where everything lives.

Public names are imported on first use, so importing a submodule (Airflow imports the plugin and
the config reader in every process) stays cheap.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

from airflow_lineage_plus.__about__ import __version__

if TYPE_CHECKING:
    from airflow_lineage_plus import datasets
    from airflow_lineage_plus.author import runtime
    from airflow_lineage_plus.author.decorators import lineage
    from airflow_lineage_plus.author.mixins import LineageMixin
    from airflow_lineage_plus.author.spec import ColumnFrom, Field, Input, LineageSpec, Output
    from airflow_lineage_plus.custom_facets import DataContract, OwningTeam, SloTier
    from airflow_lineage_plus.exceptions import LineageDeclarationError, LineagePlusError

_EXPORTS = {
    "ColumnFrom": "airflow_lineage_plus.author.spec",
    "Field": "airflow_lineage_plus.author.spec",
    "Input": "airflow_lineage_plus.author.spec",
    "LineageSpec": "airflow_lineage_plus.author.spec",
    "Output": "airflow_lineage_plus.author.spec",
    "lineage": "airflow_lineage_plus.author.decorators",
    "LineageMixin": "airflow_lineage_plus.author.mixins",
    "LineageDeclarationError": "airflow_lineage_plus.exceptions",
    "LineagePlusError": "airflow_lineage_plus.exceptions",
    "DataContract": "airflow_lineage_plus.custom_facets",
    "OwningTeam": "airflow_lineage_plus.custom_facets",
    "SloTier": "airflow_lineage_plus.custom_facets",
}
_MODULES = {"datasets": "airflow_lineage_plus.datasets", "runtime": "airflow_lineage_plus.author.runtime"}

__all__ = [
    "ColumnFrom",
    "DataContract",
    "Field",
    "Input",
    "LineageDeclarationError",
    "LineageMixin",
    "LineagePlusError",
    "LineageSpec",
    "Output",
    "OwningTeam",
    "SloTier",
    "__version__",
    "datasets",
    "lineage",
    "runtime",
]


def __getattr__(name: str) -> Any:
    if name in _EXPORTS:
        value = getattr(importlib.import_module(_EXPORTS[name]), name)
    elif name in _MODULES:
        value = importlib.import_module(_MODULES[name])
    else:
        raise AttributeError(f"module 'airflow_lineage_plus' has no attribute {name!r}")
    globals()[name] = value
    return value
