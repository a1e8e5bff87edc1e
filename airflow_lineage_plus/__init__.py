"""airflow-lineage-plus: lineage you can trust for Airflow 3, on top of the OpenLineage provider.

Declare a task's lineage with :func:`lineage` (TaskFlow) or :class:`LineageMixin` (classic
operators); record facts inside a running task with :mod:`airflow_lineage_plus.runtime`; name datasets
with :mod:`airflow_lineage_plus.datasets`.

Public names are imported on first use, so importing a submodule (Airflow imports the plugin and
the config reader in every process) stays cheap.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

from airflow_lineage_plus.__about__ import __version__

if TYPE_CHECKING:
    from airflow_lineage_plus import datasets, runtime
    from airflow_lineage_plus.declare import (
        ColumnFrom,
        Field,
        Input,
        LineageDeclarationError,
        LineageSpec,
        Output,
    )
    from airflow_lineage_plus.decorators import lineage
    from airflow_lineage_plus.facets import DataContract, OwningTeam, SloTier
    from airflow_lineage_plus.mixins import LineageMixin

_EXPORTS = {
    "ColumnFrom": "airflow_lineage_plus.declare",
    "Field": "airflow_lineage_plus.declare",
    "Input": "airflow_lineage_plus.declare",
    "LineageDeclarationError": "airflow_lineage_plus.declare",
    "LineageSpec": "airflow_lineage_plus.declare",
    "Output": "airflow_lineage_plus.declare",
    "lineage": "airflow_lineage_plus.decorators",
    "DataContract": "airflow_lineage_plus.facets",
    "OwningTeam": "airflow_lineage_plus.facets",
    "SloTier": "airflow_lineage_plus.facets",
    "LineageMixin": "airflow_lineage_plus.mixins",
}
_MODULES = {"datasets", "runtime"}

__all__ = [
    "ColumnFrom",
    "DataContract",
    "Field",
    "Input",
    "LineageDeclarationError",
    "LineageMixin",
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
        value = importlib.import_module(f"airflow_lineage_plus.{name}")
    else:
        raise AttributeError(f"module 'airflow_lineage_plus' has no attribute {name!r}")
    globals()[name] = value
    return value
