"""``@lineage``: declare a TaskFlow task's lineage; it rides on the provider's own events of that task.

Put it above ``@task`` (or ``@task.short_circuit``, ``@task.branch``, ...). The task keeps its
operator class name, so Airflow's UI and the provider see the same task type; the class underneath
gains :class:`~airflow_lineage_plus.author.mixins.LineageMixin`, and the declaration travels as an operator
argument, so it survives ``.override()``, ``.partial()`` and ``.expand()`` (mapped tasks).

.. code-block:: python

    @lineage(inputs=[RAW_ORDERS], outputs=[Output(STG_ORDERS, schema=[...])], owners=["team:analytics"])
    @task
    def load_stg_orders(): ...
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any, TypeVar

import attr
from openlineage.client.facet_v2 import BaseFacet

from airflow_lineage_plus import _compat
from airflow_lineage_plus.author.mixins import LineageMixin
from airflow_lineage_plus.author.spec import DatasetLike, Input, LineageSpec, Output, failing_field
from airflow_lineage_plus.exceptions import LineageDeclarationError

T = TypeVar("T")

_classes: dict[type, type] = {}


def with_mixin(operator_class: type) -> type:
    """``operator_class`` with :class:`LineageMixin` in front, under the same name (so the same task type)."""
    if issubclass(operator_class, LineageMixin):
        return operator_class
    if operator_class not in _classes:
        _classes[operator_class] = type(
            operator_class.__name__,
            (LineageMixin, operator_class),
            {"__module__": __name__, "__qualname__": operator_class.__qualname__},
        )
    return _classes[operator_class]


def lineage(
    *,
    inputs: Iterable[Input | DatasetLike] = (),
    outputs: Iterable[Output | DatasetLike] = (),
    owners: Iterable[str] = (),
    description: str | None = None,
    sql: str | None = None,
    sql_dialect: str | None = None,
    tags: Iterable[str] = (),
    facets: Iterable[BaseFacet] = (),
) -> Callable[[T], T]:
    """Declare inputs, outputs, schema, column lineage and facets of a ``@task``; see the module doc.

    Dataset-level details go on :class:`Input`/:class:`Output`; ``owners``, ``description``, ``sql``,
    ``tags`` and ``facets`` (job or run facets, such as ``OwningTeam``) describe the task's job.
    """

    def decorate(decorated: T) -> T:
        if not isinstance(decorated, _compat.task_decorator_class()):
            name = getattr(decorated, "__name__", type(decorated).__name__)
            raise LineageDeclarationError(
                f"@lineage was applied to {name!r}, which is not a TaskFlow task. Fix: put @lineage above "
                f"@task (@lineage(...) then @task then def {name}...), or use LineageMixin on an "
                "operator class."
            )
        target: Any = decorated
        task_id = target.kwargs.get("task_id") or target.function.__name__
        try:
            spec = LineageSpec(
                inputs=tuple(inputs),
                outputs=tuple(outputs),
                owners=tuple(owners),
                description=description,
                sql=sql,
                sql_dialect=sql_dialect,
                tags=tuple(tags),
                facets=tuple(facets),
            )
        except (TypeError, ValueError) as exc:
            parts = {"inputs": inputs, "outputs": outputs, "owners": owners, "tags": tags, "facets": facets}
            field = failing_field({k: tuple(v) for k, v in parts.items()})
            where = f"lineage field {field!r}: " if field else ""
            raise LineageDeclarationError(
                f"{target.function.__code__.co_filename}: task {task_id!r}: {where}{exc}"
            ) from exc
        kwargs = {**target.kwargs, "lineage": spec}
        return attr.evolve(target, operator_class=with_mixin(target.operator_class), kwargs=kwargs)  # type: ignore[no-any-return]

    return decorate
