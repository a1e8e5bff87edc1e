"""Who reads an alert: each recipient matched to an Airflow user, and the DAGs that user may read.

An alert tells its reader only what the Lineage view would show them (docs/alerts.md). A recipient (an
address from ``[lineage_plus] alert_recipients``, or an owner that is an address) is matched to an Airflow
user by ``[lineage_plus] alert_users`` (recipient -> user name), else by the e-mail of a FAB user. The
user's rights are the auth manager's own (``get_authorized_dag_ids``), turned into the view's
:class:`~airflow_lineage_plus.graph.visibility.DagAccess`. A recipient with no user (none matched, or an
auth manager that cannot look users up) is :data:`NO_USER`: they get their own datasets' names and that
an upstream failed, nothing else.
"""

from __future__ import annotations

from collections.abc import Iterable

from airflow_lineage_plus import _compat, conf
from airflow_lineage_plus.containment import report
from airflow_lineage_plus.graph.visibility import DagAccess

#: The access of a recipient matched to no Airflow user.
NO_USER = None


def access_of(recipients: Iterable[str]) -> dict[str, DagAccess | None]:
    """recipient -> the DAGs its Airflow user may read (:data:`NO_USER`: no user, or none could be read)."""
    wanted = sorted(set(recipients))
    if not wanted:
        return {}
    users = conf.alert_users()
    try:
        known = frozenset(_compat.known_dag_ids())
    except Exception as exc:  # fail closed: no DAG list, nobody is a reader
        report("the Airflow users of alert recipients (alerts say only that an upstream failed)", exc)
        return dict.fromkeys(wanted, NO_USER)
    found: dict[str, DagAccess | None] = {}
    for recipient in wanted:
        name = users.get(recipient)
        try:
            readable = _compat.readable_dag_ids_of(name, None if name else _address(recipient))
        except Exception as exc:
            report(f"the Airflow user of the alert recipient {recipient!r} (treated as no user)", exc)
            readable = None
        found[recipient] = NO_USER if readable is None else DagAccess(frozenset(readable), known)
    return found


def _address(recipient: str) -> str | None:
    return recipient if "@" in recipient else None
