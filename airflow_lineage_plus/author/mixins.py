"""``LineageMixin``: declared lineage for classic operators, carried by the provider's operator contract.

The OpenLineage provider calls ``get_openlineage_facets_on_start/complete/failure`` on an operator that
has them (its ``DefaultExtractor``) and puts the result on its own START and COMPLETE/FAIL events of
the task instance: same runId, same job. The mixin implements those three methods. When the operator
underneath already reports lineage (SQL operators and others implementing the same methods), what it
reports is kept and the declaration is merged in: declared datasets it did not report are added, and
for datasets both name, the operator's facets win and declared facets only fill gaps.

.. code-block:: python

    class LoadOrders(LineageMixin, SQLExecuteQueryOperator): ...


    LoadOrders(task_id="load", sql="...", lineage_inputs=[RAW], lineage_outputs=[Output(STG, schema=[...])])
"""

from __future__ import annotations

import inspect
from collections.abc import Iterable
from typing import Any

import attr

from airflow_lineage_plus import _compat, conf, datasets
from airflow_lineage_plus.author import build, contracts, runtime, validation
from airflow_lineage_plus.author.spec import Input, LineageSpec, Output, failing_field
from airflow_lineage_plus.containment import contained, report
from airflow_lineage_plus.deliver.serialize import plain
from airflow_lineage_plus.emit.self_skip import state_name
from airflow_lineage_plus.exceptions import LineageDeclarationError

# The provider's operator lineage contract: its DefaultExtractor calls on_start, on_complete, on_failure.
_START, _COMPLETE, _FAILURE = 0, 1, 2

# The provider's own extractors win over operator methods for these task types (PythonExtractor,
# BashExtractor), so a declaration on them would be silently ignored.
_EXTRACTOR_TASK_TYPES = frozenset({"PythonOperator", "BashOperator"})

SPEC_ATTRIBUTE = "_lineage_plus_spec"
RESOLVED_ATTRIBUTE = "_lineage_plus_resolved"
_DOC_FIELDS = ("doc", "doc_md", "doc_rst", "doc_json", "doc_yaml")


def spec_from_kwargs(kwargs: dict[str, Any]) -> LineageSpec | None:
    """The declaration in operator keywords (``lineage=`` or ``lineage_*``), removed from ``kwargs``."""
    spec = kwargs.pop("lineage", None)
    parts = {
        name: kwargs.pop(f"lineage_{name}")
        for name in ("inputs", "outputs", "owners", "description", "sql", "sql_dialect", "tags", "facets")
        if f"lineage_{name}" in kwargs
    }
    if spec is not None and parts:
        raise TypeError("pass either lineage=LineageSpec(...) or lineage_* keywords, not both")
    if spec is None and parts:
        try:
            spec = LineageSpec(**parts)
        except (TypeError, ValueError) as exc:
            field = failing_field(parts)
            raise type(exc)(f"lineage field {f'lineage_{field}'!r}: {exc}" if field else str(exc)) from exc
    if spec is not None and not isinstance(spec, LineageSpec):
        raise TypeError(f"lineage= takes a LineageSpec, got {type(spec).__name__}")
    return spec


def _with_assets(existing: Any, assets: list[Any]) -> list[Any]:
    current = [] if existing is None else list(existing) if isinstance(existing, list | tuple) else [existing]
    uris = {getattr(a, "uri", None) for a in current}
    return current + [a for a in assets if a.uri not in uris]


def _dag_file(operator: Any) -> str | None:
    dag = getattr(operator, "dag", None) if getattr(operator, "has_dag", lambda: False)() else None
    return getattr(dag, "fileloc", None)


def _defining_dag_file(kwargs: dict[str, Any]) -> str | None:
    """The file of the DAG an operator is being created in (``dag=`` or the ``with DAG`` context)."""
    dag = kwargs.get("dag")
    if dag is None:
        try:
            dag = _compat.current_dag()
        except Exception:  # only for a better message: never fail the declaration because of it
            return None
    return getattr(dag, "fileloc", None)


def _source_path(operator: Any) -> str | None:
    function = getattr(operator, "python_callable", None)
    try:
        return inspect.getsourcefile(function or type(operator))
    except TypeError:
        return None


class LineageMixin:
    """Declares a task's lineage; put it before the operator class: ``class X(LineageMixin, SomeOperator)``.

    Keywords: ``lineage=LineageSpec(...)``, or ``lineage_inputs``, ``lineage_outputs``,
    ``lineage_owners``, ``lineage_description``, ``lineage_sql``, ``lineage_sql_dialect``,
    ``lineage_tags``, ``lineage_facets`` (the fields of :class:`LineageSpec`).
    """

    _lineage_plus_spec: LineageSpec | None

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        if "__init__" not in cls.__dict__:
            # Airflow's operator metaclass wraps ``__init__`` only where a class defines one, and the
            # outermost ``__init__`` must be wrapped; give each subclass its own so it gets wrapped.
            def __init__(self: Any, *args: Any, **init_kwargs: Any) -> None:  # noqa: N807
                super(cls, self).__init__(*args, **init_kwargs)

            cls.__init__ = __init__  # type: ignore[method-assign]

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        try:
            spec = spec_from_kwargs(kwargs)
        except (TypeError, ValueError) as exc:
            dag_file = _defining_dag_file(kwargs)
            where = f"{dag_file}: " if dag_file else ""
            raise LineageDeclarationError(f"{where}task {kwargs.get('task_id')!r}: {exc}") from exc
        if spec is not None:
            inlets, outlets = spec.assets()
            kwargs["inlets"] = _with_assets(kwargs.get("inlets"), inlets)
            kwargs["outlets"] = _with_assets(kwargs.get("outlets"), outlets)
            # The provider builds the job's ownership and documentation facets from the task's owner and
            # doc fields (overwriting operator job facets), so the declaration is routed through them.
            if spec.owners and not kwargs.get("owner"):
                kwargs["owner"] = ", ".join(spec.owners)
            if spec.description and not any(kwargs.get(k) for k in _DOC_FIELDS):
                kwargs["doc_md"] = spec.description
        super().__init__(*args, **kwargs)
        if spec is not None:
            spec = _finish(self, spec)
        self._lineage_plus_spec = spec

    def render_template_fields(self, context: Any, jinja_env: Any = None) -> None:
        """Render as usual, then resolve connection-derived dataset names in the task process.

        Airflow renders templates before the ``running`` listeners fire, in the task's own process;
        the provider builds events later in a forked emitter, where a connection lookup may block.
        Resolving here means the emitter only reads the result.
        """
        super().render_template_fields(context, jinja_env)  # type: ignore[misc]
        spec = getattr(self, SPEC_ATTRIBUTE, None)
        if spec is None:
            return
        resolved: dict[Any, Any] = {}
        for ref in spec.connection_refs():
            with contained(f"the identity of {ref} (connection {ref.conn_id!r})"):
                resolved[ref] = ref.resolve()
        object.__setattr__(self, RESOLVED_ATTRIBUTE, resolved)

    def post_execute(self, context: Any, result: Any = None) -> None:
        """After ``execute()``: hold the declared outputs' data contracts (:mod:`.contracts`).

        The last point where the task's outcome can change (the provider builds COMPLETE later, in a
        fork); only a breach with ``[lineage_plus] contract_mode = fail`` fails the task, anything else
        going wrong here is contained.
        """
        super().post_execute(context, result)  # type: ignore[misc]
        breaches: list[contracts.Breach] = []
        with contained(f"the data-contract check of task {getattr(self, 'task_id', '?')!r}"):
            breaches = _contract_breaches(self, context)
        contracts.enforce(getattr(self, "task_id", "?"), breaches)

    def get_openlineage_facets_on_start(self) -> Any:
        own = _own(self, super(), (_START,))
        return _lineage(self, own, None)

    def get_openlineage_facets_on_complete(self, task_instance: Any) -> Any:
        own = _own(self, super(), (_COMPLETE, _START), task_instance)
        return _lineage(self, own, task_instance)

    def get_openlineage_facets_on_failure(self, task_instance: Any) -> Any:
        own = _own(self, super(), (_FAILURE, _COMPLETE, _START), task_instance)
        return _lineage(self, own, task_instance)


def _finish(operator: Any, spec: LineageSpec) -> LineageSpec:
    """Validate ``spec`` for ``operator`` at parse time and fill in what only the operator knows."""
    task_type = getattr(operator, "task_type", type(operator).__name__)
    if task_type in _EXTRACTOR_TASK_TYPES and not isinstance(operator, LineageMixin):
        raise LineageDeclarationError(
            f"{_dag_file(operator)}: task {operator.task_id!r}: lineage on a plain {task_type} would be "
            f"ignored (the provider's {task_type} extractor wins). Fix: use @lineage above @task, or "
            f"class My{task_type}(LineageMixin, {task_type})."
        )
    validation.validate(spec, operator.task_id, _dag_file(operator))
    if spec.source_path is None:
        spec = attr.evolve(spec, source_path=_source_path(operator))
    return spec


def _contract_breaches(operator: Any, context: Any) -> list[contracts.Breach]:
    spec: LineageSpec | None = getattr(operator, SPEC_ATTRIBUTE, None)
    if spec is None or conf.is_disabled() or conf.contract_mode() == "off":
        return []
    facts = runtime.facts_for(context["ti"])
    return contracts.check(spec, facts, getattr(operator, RESOLVED_ATTRIBUTE, None) or {})


def _own(operator: Any, parent: Any, methods: Iterable[int], *args: Any) -> Any:
    """What the operator underneath reports, following the provider's fallback order."""
    names = _compat.openlineage_method_names()  # the provider is loaded: it is the caller
    for which in methods:
        name = names[which]
        method = getattr(parent, name, None)
        if callable(method):
            try:
                return method(*args) if which != _START else method()
            except Exception as exc:  # the provider would have contained it the same way
                report(f"lineage reported by {type(operator).__name__}.{name}", exc)
                return None
    return None


def _lineage(operator: Any, own: Any, task_instance: Any) -> Any:
    """The operator's own lineage merged with the declaration (and runtime facts once it has run)."""
    spec: LineageSpec | None = getattr(operator, SPEC_ATTRIBUTE, None)
    if spec is None or conf.is_disabled():
        return own
    try:
        facts = runtime.facts_for(task_instance) if task_instance is not None else None
        declared = build.to_operator_lineage(
            spec,
            facts,
            final=task_instance is not None,
            resolved_refs=getattr(operator, RESOLVED_ATTRIBUTE, None),
            attached=_attached_outlets(task_instance),
        )
    except Exception as exc:
        report(f"declared lineage of task {getattr(operator, 'task_id', '?')!r}", exc)
        return own
    _drop_broken_facets(operator, declared)
    result = declared if own is None else merge(own, declared)
    if _skipped(task_instance):
        # A skipped run wrote nothing: listing outputs on its COMPLETE would make consumers such as
        # Marquez record a new version of each output, as if it had been refreshed.
        result = attr.evolve(result, outputs=[])
    return result


def _attached_outlets(task_instance: Any) -> list[Any]:
    """Datasets of the assets the task attached at run time (``outlet_events[alias].add(asset)``, an
    ``outlet_events[asset].extra``), named as this package names them.

    The provider adds these in its inlets/outlets fallback only, which is never reached once operator
    methods report datasets, as a declaration does: without this they would be lost.
    """
    if task_instance is None:
        return []
    found: list[Any] = []
    with contained("the assets the task attached at run time (outlet_events)"):
        for asset in _compat.runtime_outlet_assets(task_instance):
            ref = datasets.from_asset(asset)  # None (logged at debug) for a URI that names no dataset
            if ref is not None:
                found.append(ref)
    return found


def _skipped(task_instance: Any) -> bool:
    return state_name(getattr(task_instance, "state", None)) == "skipped"


def _drop_broken_facets(operator: Any, declared: Any) -> None:
    """Remove (and report) facets that fail to serialise, so one broken facet costs only itself."""
    groups = [declared.job_facets, declared.run_facets]
    for dataset in [*declared.inputs, *declared.outputs]:
        groups += [getattr(dataset, g, None) for g in ("facets", "inputFacets", "outputFacets")]
    for facets in groups:
        for key, facet in list((facets or {}).items()):
            try:
                plain(facet)
            except Exception as exc:
                del facets[key]
                report(f"facet {key!r} of task {getattr(operator, 'task_id', '?')!r}", exc)


def merge(own: Any, declared: Any) -> Any:
    """``own`` with ``declared`` merged in, never replacing what ``own`` reports."""
    from airflow.providers.openlineage.extractors import OperatorLineage

    def datasets(mine: list[Any], extra: list[Any]) -> list[Any]:
        by_id = {(d.namespace, d.name): d for d in extra}
        result = []
        for dataset in mine:
            other = by_id.pop((dataset.namespace, dataset.name), None)
            if other is not None:
                dataset = _fill(dataset, other)
            result.append(dataset)
        return result + list(by_id.values())

    return OperatorLineage(
        inputs=datasets(list(own.inputs or []), list(declared.inputs)),
        outputs=datasets(list(own.outputs or []), list(declared.outputs)),
        run_facets={**declared.run_facets, **(own.run_facets or {})},
        job_facets={**declared.job_facets, **(own.job_facets or {})},
    )


def _fill(mine: Any, other: Any) -> Any:
    changes: dict[str, Any] = {"facets": {**(other.facets or {}), **(mine.facets or {})}}
    for group in ("inputFacets", "outputFacets"):
        if hasattr(mine, group):
            changes[group] = {**(getattr(other, group, None) or {}), **(getattr(mine, group) or {})}
    return attr.evolve(mine, **changes)


__all__ = ["Input", "LineageMixin", "LineageSpec", "Output", "merge"]
