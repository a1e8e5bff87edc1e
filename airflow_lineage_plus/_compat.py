"""Every use of Airflow's and the OpenLineage provider's internal APIs, in one module.

The rest of the package calls the functions here instead of importing private or internal names
(``_TaskDecorator``, ``DagContext``, the secrets masker, ORM models, the provider's ``utils.utils`` and
its listener's process pool), so a new Airflow or provider release is adapted to in one place, the way the
provider's own ``version_compat.py`` works. Public, documented APIs (``airflow.sdk``, the provider's
``api`` module and macros) are imported where they are used. Everything is imported on first call:
importing this module imports neither Airflow nor the provider.
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Iterable
from datetime import datetime
from functools import cache
from typing import Any


def task_decorator_class() -> type:
    """The class of what ``@task`` returns (``airflow.sdk.bases.decorator._TaskDecorator``)."""
    from airflow.sdk.bases.decorator import _TaskDecorator

    return _TaskDecorator


def current_dag() -> Any | None:
    """The DAG of the enclosing ``with DAG(...)`` block, if any."""
    try:
        from airflow.sdk.definitions._internal.contextmanager import DagContext
    except ImportError:
        return None
    return DagContext.get_current()


@cache
def openlineage_method_names() -> tuple[str, str, str]:
    """The provider's operator lineage contract: (on_start, on_complete, on_failure) method names."""
    from airflow.providers.openlineage.extractors.base import (
        OL_METHOD_NAME_COMPLETE,
        OL_METHOD_NAME_FAIL,
        OL_METHOD_NAME_START,
    )

    return OL_METHOD_NAME_START, OL_METHOD_NAME_COMPLETE, OL_METHOD_NAME_FAIL


_MASKER_MODULES = ("airflow.sdk._shared.secrets_masker", "airflow._shared.secrets_masker")


def _masker_modules() -> list[Any]:
    """Airflow's secrets-masker modules this process has imported. One not imported holds no secret
    (``mask_secret`` lives there), and importing Airflow to find that out would cost far more than the
    lookup."""
    return [module for name in _MASKER_MODULES if (module := sys.modules.get(name)) is not None]


def _secrets_maskers() -> list[Any]:
    """Airflow's secrets maskers loaded in this process: the task SDK's (what a worker registers:
    connections and variables a task fetched) and the core one (what the scheduler, the API server and
    the DAG processor register when they load connections and variables). Either may be absent."""
    maskers = []
    for module in _masker_modules():
        try:
            maskers.append(module._secrets_masker())
        except AttributeError:
            continue
    return maskers


#: Secrets (``re.escape``-d) handed in by another process's masker: the task's, for the ``dbt-ol`` it runs.
_handed_in: set[str] = set()


def add_secret_patterns(patterns: Iterable[str]) -> None:
    """Treat ``patterns`` (as :func:`registered_secret_patterns` gives them) as registered in this process:
    ``dbt-ol`` gets the secrets of the task's masker this way, without loading Airflow's."""
    _handed_in.update(str(p) for p in patterns if p)


def registered_secret_patterns() -> list[str]:
    """The regex-escaped secrets Airflow's maskers hold in this process (``re.escape`` of each value), and
    those handed in (:func:`add_secret_patterns`)."""
    patterns: set[str] = set(_handed_in)
    for masker in _secrets_maskers():
        if getattr(masker, "replacer", None) is not None:
            patterns.update(str(p) for p in getattr(masker, "patterns", ()) or ())
    return sorted(patterns)


def secrets_redactor() -> Callable[[str], str] | None:
    """Airflow's secrets maskers as one string function, or None when nothing is registered here."""
    replacers = [
        masker.replacer for masker in _secrets_maskers() if getattr(masker, "replacer", None) is not None
    ]
    if _handed_in:
        import re

        replacers.append(re.compile("|".join(sorted(_handed_in, key=len, reverse=True))))
    if not replacers:
        return None

    def redact(text: str) -> str:
        for replacer in replacers:
            text = replacer.sub("***", text)
        return text

    return redact


def sensitive_field_names() -> tuple[str, ...]:
    """Names Airflow's masker treats as secret-looking keys: its ``DEFAULT_SENSITIVE_FIELDS`` plus
    ``[core] sensitive_var_conn_names`` as configured in this process; empty where Airflow's masker
    is not loaded."""
    names: set[str] = set()
    for module in _masker_modules():
        names.update(getattr(module, "DEFAULT_SENSITIVE_FIELDS", ()))
        masker = getattr(module, "_secrets_masker", None)
        if masker is not None:
            names.update(getattr(masker(), "sensitive_variables_fields", None) or ())
    return tuple(sorted(str(n) for n in names))


def skipmixin_xcom_keys() -> tuple[str, str, str]:
    """(XCom key, "skipped" field, "followed" field) that SkipMixin (short circuit, branches) writes."""
    try:
        from airflow.sdk.bases.skipmixin import (
            XCOM_SKIPMIXIN_FOLLOWED,
            XCOM_SKIPMIXIN_KEY,
            XCOM_SKIPMIXIN_SKIPPED,
        )
    except ImportError:  # the values every Airflow 3 release writes
        return "skipmixin_key", "skipped", "followed"
    return XCOM_SKIPMIXIN_KEY, XCOM_SKIPMIXIN_SKIPPED, XCOM_SKIPMIXIN_FOLLOWED


def metadata_models() -> tuple[Any, Any, Any]:
    """Airflow's ORM models (Log, TaskInstance, XComModel) the skip records read."""
    from airflow.models.log import Log
    from airflow.models.taskinstance import TaskInstance
    from airflow.models.xcom import XComModel

    return Log, TaskInstance, XComModel


def dag_run_model() -> Any:
    """Airflow's ORM model of a DAG run."""
    from airflow.models.dagrun import DagRun

    return DagRun


def thread_session() -> Any | None:
    """Airflow's scoped session of this thread if it has one (what ``@provide_session`` code shares)."""
    from airflow import settings

    scoped: Any = getattr(settings, "Session", None)
    registry = getattr(scoped, "registry", None)
    if registry is None or not registry.has():
        return None
    return scoped()


def metadata_engine() -> Any:
    """The SQLAlchemy engine of Airflow's metadata database."""
    from airflow import settings

    return settings.engine


def dag_for_run(dag_run: Any, session: Any) -> Any | None:
    """The (serialized) DAG a DAG run ran, as the scheduler knows it."""
    dag = getattr(dag_run, "dag", None)
    if dag is not None:
        return dag
    from airflow.models.dagbag import DBDagBag

    return DBDagBag().get_dag_for_run(dag_run=dag_run, session=session)


def task_run_id(dag_id: str, task_id: str, try_number: int, logical_date: datetime, map_index: int) -> str:
    """The runId the provider gives a task instance try (its deterministic UUIDv7)."""
    from airflow.providers.openlineage.plugins.adapter import OpenLineageAdapter

    return str(
        OpenLineageAdapter.build_task_instance_run_id(
            dag_id=dag_id,
            task_id=task_id,
            try_number=try_number,
            logical_date=logical_date,
            map_index=map_index,
        )
    )


def dag_run_id(dag_id: str, logical_date: datetime, clear_number: int) -> str:
    """The runId the provider gives a DAG run."""
    from airflow.providers.openlineage.plugins.adapter import OpenLineageAdapter

    return str(
        OpenLineageAdapter.build_dag_run_id(
            dag_id=dag_id, logical_date=logical_date, clear_number=clear_number
        )
    )


def task_parent_run_facet(
    parent_run_id: str, parent_job_name: str, dr_conf: dict[str, Any]
) -> dict[str, Any]:
    """The provider's ``parent`` facet of a task run (with ``root`` from the DAG run's conf)."""
    from airflow.providers.openlineage.utils.utils import get_task_parent_run_facet

    return dict(
        get_task_parent_run_facet(
            parent_run_id=parent_run_id, parent_job_name=parent_job_name, dr_conf=dr_conf
        )
    )


def processing_engine_facet() -> dict[str, Any]:
    """The provider's ``processing_engine`` run facet."""
    from airflow.providers.openlineage.utils.utils import get_processing_engine_facet

    return dict(get_processing_engine_facet())


def translate_asset(asset: Any) -> Any | None:
    """The OpenLineage dataset the provider makes of an Airflow Asset (None for schemes it cannot name)."""
    from airflow.providers.openlineage.utils.utils import translate_airflow_asset

    return translate_airflow_asset(asset, None)


def runtime_outlet_assets(task_instance: Any) -> list[Any]:
    """The Airflow Assets a running task attached to its outlets at run time (``outlet_events[alias].add``,
    ``outlet_events[asset].extra``), as the provider's inlets/outlets fallback reads them (2.16.0+)."""
    try:
        from airflow.providers.openlineage.utils.utils import get_runtime_outlet_assets
    except ImportError:  # every provider from the floor (2.20.0) up has it; a later one may not
        return []
    return [asset for asset, _alias in get_runtime_outlet_assets(task_instance)]


def task_events_allowed(task: Any, dag_id: str, task_id: str) -> bool:
    """Whether the provider's emission policy lets task-level events out for this task."""
    try:
        from airflow.providers.openlineage.utils.emission_policy import resolve_task_emission_policy
    except ImportError:  # providers before 2.19.0 have no emission policy
        return True
    controls = resolve_task_emission_policy(operator=task, dag_id=dag_id, task_id=task_id)
    return bool(getattr(controls, "emit", True)) and bool(getattr(controls, "emit_task_events", True))


def task_metadata_allowed(task: Any, dag_id: str, task_id: str) -> bool:
    """Whether the provider's emission policy lets this task's events carry its lineage metadata
    (``extract_operator_metadata``: off means a minimal event, without datasets)."""
    try:
        from airflow.providers.openlineage.utils.emission_policy import resolve_task_emission_policy
    except ImportError:  # providers before 2.19.0 have no emission policy
        return True
    controls = resolve_task_emission_policy(operator=task, dag_id=dag_id, task_id=task_id)
    return bool(getattr(controls, "extract_operator_metadata", True))


def submit_to_openlineage_pool(func: Callable[..., Any], *args: Any) -> None:
    """Run ``func(*args)`` in the provider's DAG-event process pool (raises when there is none)."""
    from airflow.providers.openlineage.plugins.listener import get_openlineage_listener

    get_openlineage_listener().submit_callable(func, *args)


def trusted_middleware_marker() -> Any | None:
    """The marker Airflow (3.3+) sets on ``request.state`` when its own middleware built the user."""
    try:
        from airflow.api_fastapi.core_api.security import USER_INJECTED_BY_TRUSTED_MIDDLEWARE
    except ImportError:
        return None
    return USER_INJECTED_BY_TRUSTED_MIDDLEWARE


def connection_password(conn_id: str) -> str | None:
    """The password of Airflow connection ``conn_id`` (secrets backends, environment, database), or None
    when there is no such connection."""
    from airflow.exceptions import AirflowNotFoundException
    from airflow.models.connection import Connection

    try:
        return Connection.get_connection_from_secrets(conn_id).password or None
    except AirflowNotFoundException:
        return None


def known_dag_ids() -> set[str]:
    """Ids of every DAG in Airflow's metadata database (the ``dag`` table Airflow's own views list)."""
    from airflow.models.dag import DagModel
    from airflow.utils.session import create_session
    from sqlalchemy import select

    with create_session() as session:
        return set(session.scalars(select(DagModel.dag_id)))


def openlineage_client_config() -> dict[str, Any] | None:
    """The OpenLineage client config the provider uses (``[openlineage] config_conn_id``, ``config_path``
    or ``transport``, connection auth resolved), or None when it falls back to the client's own discovery
    (``OPENLINEAGE_URL``, ``openlineage.yml``, ``OPENLINEAGE__*``)."""
    from airflow.providers.openlineage.plugins.adapter import OpenLineageAdapter

    config = OpenLineageAdapter().get_openlineage_config()
    return dict(config) if config else None


def dag_bag(dag_folder: str) -> Any:
    """Airflow's DagBag of the DAG files under ``dag_folder``, parsed in this process (no database)."""
    try:
        from airflow.dag_processing import dagbag
    except ImportError:  # Airflow 3.1 keeps it in airflow.models
        from airflow.models import dagbag  # type: ignore[no-redef]
    return dagbag.DagBag(dag_folder=dag_folder)


def task_documentation(task: Any, dag: Any) -> tuple[str | None, str | None]:
    """(documentation, MIME type) the provider puts on a task's job: the task's doc, else the DAG's."""
    from airflow.providers.openlineage.utils.utils import get_dag_documentation, get_task_documentation

    doc, doc_type = get_task_documentation(task)
    if not doc:
        doc, doc_type = get_dag_documentation(dag)
    return doc, doc_type


def openlineage_client() -> Any:
    """The OpenLineage client of the provider's ``[openlineage]`` configuration (its transport)."""
    from airflow.providers.openlineage.plugins.adapter import OpenLineageAdapter

    return OpenLineageAdapter().get_or_create_openlineage_client()


def readable_dag_ids(user: Any) -> set[str]:
    """The DAGs the configured auth manager lets ``user`` read (what Airflow's own DAG list shows them)."""
    from airflow.api_fastapi.app import create_auth_manager

    return set(create_auth_manager().get_authorized_dag_ids(user=user, method="GET"))


def readable_dag_ids_of(name: str | None, email: str | None) -> set[str] | None:
    """The DAGs the Airflow user called ``name`` (else the one whose e-mail is ``email``) may read, or None
    when the auth manager holds no such user or cannot look one up (only FAB's and the simple one can)."""
    from airflow.api_fastapi.app import get_auth_manager_cls

    manager = get_auth_manager_cls()
    if manager.__name__ == "SimpleAuthManager":  # users in [core] simple_auth_manager_users, no e-mail
        for user in manager.get_users():  # type: ignore[attr-defined]
            if isinstance(user, dict):  # Airflow 3.1 lists the users as {"username", "role"}
                from airflow.api_fastapi.auth.managers.simple.user import SimpleAuthManagerUser

                user = SimpleAuthManagerUser(username=user["username"], role=user.get("role"))
            if name is not None and user.username == name:
                return readable_dag_ids(user)
        return None
    if manager.__name__ != "FabAuthManager":
        return None
    from airflow.providers.fab.auth_manager.models import User
    from airflow.utils.session import create_session
    from sqlalchemy import func, select

    with create_session() as session:  # the user's roles are read lazily: inside this session
        if name is not None:
            query = select(User).where(User.username == name)
        elif email is not None:
            query = select(User).where(func.lower(User.email) == email.lower())
        else:
            return None
        found = list(session.scalars(query))
        if len(found) != 1 or not found[0].is_active:
            return None
        return readable_dag_ids(found[0])
