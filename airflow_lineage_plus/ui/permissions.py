"""Who may read which lineage: the permission model of the Lineage view, in one module.

Two questions, both asked of Airflow's configured auth manager (SimpleAuthManager, FAB, Keycloak...):

1. **May the user open the view at all?** (:func:`may_read_lineage`) They must be allowed to read DAGs
   (``is_authorized_dag(method="GET")``: under FAB, any one DAG is enough), task instances and assets.
   Otherwise every route answers 403.
2. **Which DAGs' lineage may they read?** (:func:`dag_access`) The DAGs Airflow's own DAG list shows
   them: ``get_authorized_dag_ids(user=..., method="GET")``, among the DAGs of the metadata database.

:class:`DagAccess` (beside the graph's filter, so the alerts share it) turns the answer into the
predicate the Airflow-free graph filters with
(:mod:`airflow_lineage_plus.graph.visibility` decides which DAG each job and run belongs to, following
``parent`` facets, and what a reader sees of it):

* lineage of a DAG the user may read: shown;
* lineage of a DAG Airflow knows and the user may not read: hidden;
* lineage that belongs to no DAG (jobs of other systems with no parent chain into a DAG), or to a DAG id
  the metadata database does not hold (a deleted DAG, another Airflow): shown only to users who may read
  every DAG Airflow knows.

A user who may read every DAG gets no filter at all (:meth:`DagAccess.predicate` is ``None``): they see
everything, exactly as without per-DAG rights. Assets: FAB has no per-asset rights and Airflow 3 offers no
asset filter, so a dataset follows its jobs, as Airflow's own asset-event list follows the source DAG.

Nothing here depends on the web layer: the CLI can build a :class:`DagAccess` for a user the same way.
"""

from __future__ import annotations

from typing import Any

from airflow_lineage_plus import _compat
from airflow_lineage_plus.graph.visibility import DagAccess

__all__ = ["DagAccess", "dag_access", "may_read_lineage"]


def may_read_lineage(user: Any) -> bool:
    """Whether the auth manager lets ``user`` read DAGs, task instances and assets (what lineage shows)."""
    from airflow.api_fastapi.app import get_auth_manager
    from airflow.api_fastapi.auth.managers.models.resource_details import DagAccessEntity

    manager = get_auth_manager()
    return bool(
        manager.is_authorized_dag(method="GET", user=user)
        and manager.is_authorized_dag(method="GET", access_entity=DagAccessEntity.TASK_INSTANCE, user=user)
        and manager.is_authorized_asset(method="GET", user=user)
    )


def dag_access(user: Any) -> DagAccess:
    """The DAGs ``user`` may read, as Airflow's own DAG list decides (two metadata-database reads)."""
    return DagAccess(
        readable=frozenset(_compat.readable_dag_ids(user)), known=frozenset(_compat.known_dag_ids())
    )
