"""Redaction and size limits applied to every event before it leaves the process.

:func:`check` turns an event (``openlineage.client`` attrs objects, or its JSON-ready dict) into the JSON
line that may leave, without changing the event; :class:`~airflow_lineage_plus.deliver.event_log_transport.
EventLogTransport` writes that line and forwards it, :class:`BudgetTransformer` hands it (decoded) to any
other transport of the client's ``transform`` transport. In order:

1. **Values policy.** Unless ``[lineage_plus] quality_include_values`` is on, column metrics keep
   counts only: ``min``, ``max`` and ``quantiles`` (values and value distributions) are removed.
2. **Fixed limits** (:mod:`.limits`). SQL job facets longer than ``[lineage_plus] sql_max_length``
   are cut with a marker (before the scan below, which then reads only what is kept); schemas wider
   than ``[lineage_plus] schema_max_columns`` keep their first columns and say how many were left out
   (``lineagePlus_omittedFields`` on the schema facet).
3. **Redaction** (:mod:`.redaction`): every kind of secret in the catalogue
   (:mod:`.catalogue`, docs/reliability.md), in every string, and every value under a secret-looking
   key, is replaced by ``***``; so is every secret Airflow's masker knows in this process.
4. **Event budget.** While the event's JSON is larger than ``[lineage_plus] event_size_budget``
   bytes, the following are removed, one step at a time, in :data:`TRIM_ORDER`:
   column-lineage transformation descriptions; column metrics; column lineage; schema fields beyond
   :data:`BUDGET_SCHEMA_COLUMNS`; SQL text beyond :data:`BUDGET_SQL_LENGTH` characters; then whole
   facets, largest first (never ``parent``, ``nominalTime``, ``processing_engine``, ``jobType``). An
   event still above budget after that is sent as it is, with a warning: an oversized event is
   better than a lost one.

Nothing is cut silently: each cut is counted (:func:`cut_counts`), logged as one warning per event,
and recorded in the event itself, in the run facet ``lineagePlus_trimmed``. An event that cannot be
checked raises: the callers send nothing then (fail closed).
"""

from __future__ import annotations

import logging
import secrets
from collections.abc import Callable
from typing import Any

import attr
import orjson
from openlineage.client.transport.transform.transform import EventTransformer

from airflow_lineage_plus import conf
from airflow_lineage_plus.containment import report
from airflow_lineage_plus.custom_facets import TrimmedRunFacet
from airflow_lineage_plus.deliver import limits
from airflow_lineage_plus.deliver.redaction import redact_json
from airflow_lineage_plus.deliver.serialize import (
    CLEANUP_MARKERS,
    describe,
    dumps,
    dumps_direct,
    dumps_exact,
    fields_of,
    plain,
)
from airflow_lineage_plus.facet_keys import KEPT_FACETS, OMITTED_FIELDS
from airflow_lineage_plus.provider_info import OPTIONS

log = logging.getLogger(__name__)

BUDGET_SCHEMA_COLUMNS = 100
BUDGET_SQL_LENGTH = 1000
VALUE_METRICS = ("min", "max", "quantiles")
VALUES_CUT = "column metric values (min/max/quantiles; quality_include_values is off)"


def cut_counts() -> dict[str, int]:
    """How many items each kind of cut removed in this process (for tests and diagnostics)."""
    return limits.cut_counts()


# -- access to events as objects or dicts -------------------------------------------------------------


def _get(obj: Any, name: str) -> Any:
    return obj.get(name) if isinstance(obj, dict) else getattr(obj, name, None)


def _set(obj: Any, name: str, value: Any) -> None:
    if isinstance(obj, dict):
        if value is None:
            obj.pop(name, None)
        else:
            obj[name] = value
    else:
        object.__setattr__(obj, name, value)


def _datasets(event: Any) -> list[Any]:
    return list(_get(event, "inputs") or []) + list(_get(event, "outputs") or [])


def _facet_maps(event: Any) -> list[tuple[str, dict[str, Any]]]:
    """(where, facets) for every facet dict of the event."""
    found: list[tuple[str, dict[str, Any]]] = []
    for part in ("run", "job"):
        facets = _get(_get(event, part), "facets")
        if isinstance(facets, dict):
            found.append((part, facets))
    for dataset in _datasets(event):
        label = f"{_get(dataset, 'namespace')}/{_get(dataset, 'name')}"
        for group in ("facets", "inputFacets", "outputFacets"):
            facets = _get(dataset, group)
            if isinstance(facets, dict):
                found.append((label, facets))
    return found


def _dataset_facets(event: Any, key: str) -> list[tuple[dict[str, Any], Any]]:
    return [(facets, facets[key]) for _, facets in _facet_maps(event) if facets.get(key) is not None]


def _size(event: Any) -> int:
    return len(dumps(event))


def _option(option: str) -> Any:
    """``[lineage_plus] <option>`` through :mod:`airflow_lineage_plus.conf` (which reads it once per
    process); its default without Airflow."""
    try:
        return getattr(conf, option)()
    except ImportError:  # the client used without Airflow
        default = OPTIONS[option]["default"]
        return conf.parse_bool(default) if OPTIONS[option]["type"] == "boolean" else int(default)


@attr.frozen
class Limits:
    """The ``[lineage_plus]`` values :func:`check` applies, read once.

    A process that must not import Airflow (``dbt-ol`` reporting to the task's transport) gets them
    passed in (:meth:`from_dict` of :meth:`as_dict`) from the task that read them.
    """

    sql_max_length: int
    schema_max_columns: int
    event_size_budget: int
    quality_include_values: bool

    @classmethod
    def configured(cls) -> Limits:
        """The configured values (the defaults where Airflow is not installed)."""
        return cls(
            sql_max_length=int(_option("sql_max_length")),
            schema_max_columns=int(_option("schema_max_columns")),
            event_size_budget=int(_option("event_size_budget")),
            quality_include_values=bool(_option("quality_include_values")),
        )

    @classmethod
    def from_dict(cls, values: dict[str, Any]) -> Limits:
        return cls(
            sql_max_length=int(values["sql_max_length"]),
            schema_max_columns=int(values["schema_max_columns"]),
            event_size_budget=int(values["event_size_budget"]),
            quality_include_values=conf.parse_bool(values["quality_include_values"]),
        )

    def as_dict(self) -> dict[str, Any]:
        return attr.asdict(self)


def _limit(settings: Limits | None, option: str) -> Any:
    """``option`` of ``settings`` when given, else as configured (:func:`_option`, cached)."""
    return _option(option) if settings is None else getattr(settings, option)


# -- fixed limits -------------------------------------------------------------------------------------


def _cut_sql(event: Any, limit: int) -> int:
    facets = _get(_get(event, "job"), "facets")
    sql = facets.get("sql") if isinstance(facets, dict) else None
    query = _get(sql, "query") if sql is not None else None
    if not isinstance(query, str):
        return 0
    cut, hidden = limits.cut_sql(query, limit)
    if hidden:
        _set(sql, "query", cut)
    return hidden


def _cut_schemas(event: dict[str, Any], limit: int) -> int:
    cut = 0
    for _facets, schema in _dataset_facets(event, "schema"):
        fields = schema.get("fields")
        if not isinstance(fields, list):
            continue
        kept, hidden = limits.cut_fields(fields, limit)
        if hidden:
            cut += hidden
            schema["fields"] = kept
            schema[OMITTED_FIELDS] = hidden + int(schema.get(OMITTED_FIELDS) or 0)
    return cut


# -- budget steps, in order -----------------------------------------------------------------------------


def _drop_descriptions(event: Any) -> int:
    cut = 0
    for _, lineage in _dataset_facets(event, "columnLineage"):
        for column in (_get(lineage, "fields") or {}).values():
            for input_field in _get(column, "inputFields") or []:
                for transformation in _get(input_field, "transformations") or []:
                    if _get(transformation, "description") is not None:
                        _set(transformation, "description", None)
                        cut += 1
    return cut


def _drop_column_metrics(event: Any) -> int:
    cut = 0
    for _, metrics in _dataset_facets(event, "dataQualityMetrics"):
        columns = _get(metrics, "columnMetrics")
        if columns:
            cut += len(columns)
            _set(metrics, "columnMetrics", {})
    return cut


def _drop_column_lineage(event: Any) -> int:
    cut = 0
    for facets, lineage in _dataset_facets(event, "columnLineage"):
        cut += max(1, len(_get(lineage, "fields") or {}))
        del facets["columnLineage"]
    return cut


def _budget_schemas(event: Any) -> int:
    return _cut_schemas(event, BUDGET_SCHEMA_COLUMNS)


def _budget_sql(event: Any) -> int:
    return _cut_sql(event, BUDGET_SQL_LENGTH)


TRIM_ORDER: tuple[tuple[str, Callable[[Any], int]], ...] = (
    ("column-lineage descriptions", _drop_descriptions),
    ("column metrics (columns)", _drop_column_metrics),
    ("column lineage (output columns)", _drop_column_lineage),
    (f"schema fields beyond {BUDGET_SCHEMA_COLUMNS}", _budget_schemas),
    (f"SQL characters beyond {BUDGET_SQL_LENGTH}", _budget_sql),
)


def _drop_largest_facets(event: Any, budget: int, size: int, cuts: dict[str, int]) -> int:
    candidates = [
        (len(dumps(plain(facet))), where, key, facets)
        for where, facets in _facet_maps(event)
        for key, facet in facets.items()
        if key not in KEPT_FACETS
    ]
    for _size_of_facet, where, key, facets in sorted(candidates, key=lambda c: c[0], reverse=True):
        if size <= budget:
            break
        facets.pop(key, None)
        cuts[f"facet {key!r} of {where}"] = 1
        size = _size(event)
    return size


# -- the whole pass -------------------------------------------------------------------------------------


#: What the redaction pass also looks for: Serde's cleanup (then the event is serialised the exact way).
PROBES = (("cleanup", CLEANUP_MARKERS),)
#: What a string withheld whole by redaction (:data:`~.redaction.WITHHELD`) is counted as.
WITHHELD_CUT = "strings withheld whole (not checked for secrets within the redaction budget)"
#: Stands for the event's size in the ``lineagePlus_trimmed`` facet until the size is known (random per
#: process, so no event can hold it).
_SIZE_PLACEHOLDER = str(secrets.randbelow(9 * 10**17) + 10**17 + 10**18).encode()


def check(event: Any, settings: Limits | None = None) -> bytes:
    """The JSON line (without newline) that may leave for ``event``: fixed limits, redaction, values
    policy, size budget. ``event`` itself is not changed. Raises when the event cannot be checked.
    ``settings``: the limits to apply (default: as configured in this process).

    One pass: the fixed limits and the values policy are applied on the way in, to a copy of just the
    parts they change (:func:`_shaped`); the event is serialised once, with its ``lineagePlus_trimmed``
    facet; one RE2 pass over the JSON finds and replaces its secrets in place. Only an event above the
    size budget (or with a string withheld by redaction) is decoded again, to be trimmed.
    """
    budget = int(_limit(settings, "event_size_budget"))
    view, cuts = _shaped(event, settings)
    facet = _trimmed_facet(cuts, budget) if cuts else None
    if facet is not None:
        view, others = _with_run_facet(view, facet)
    done = redact_json(dumps_direct(view), PROBES)
    if "cleanup" in done.probes:  # what Serde drops (nulls, empty objects in lists): the exact way
        done = redact_json(dumps_exact(view))
    if done.masked:
        limits.count_cut("redacted strings", done.masked)
        log.info("airflow-lineage-plus: redacted %d secret(s) in %s", done.masked, describe(event))
    text, size = done.text, len(done.text)
    if facet is not None:
        size -= len(b'"' + TrimmedRunFacet.key.encode() + b'":' + orjson.dumps(facet, option=_SORTED))
        size -= 1 if others else 0
    if done.withheld:
        cuts[WITHHELD_CUT] = done.withheld
    if size <= budget and not done.withheld:
        if facet is None:
            return text
        _report_cuts(event, cuts, budget, size, size)
        return text.replace(_SIZE_PLACEHOLDER, str(size).encode())
    return _within_budget(orjson.loads(text), cuts, budget, size)


def _within_budget(data: dict[str, Any], cuts: dict[str, int], budget: int, size: int) -> bytes:
    """``data`` (checked, decoded; ``size``: its JSON's size without our facet) trimmed to ``budget``
    bytes, with the cuts recorded in the event."""
    facets = (data.get("run") or {}).get("facets")
    if isinstance(facets, dict):
        facets.pop(TrimmedRunFacet.key, None)
    original = size
    if size > budget:
        size = _trim_to_budget(data, budget, size, cuts)
    cuts = {what: n for what, n in cuts.items() if n}
    if cuts:
        _record_cuts(data, cuts, budget, original, size)
    return dumps(data)


_SORTED = orjson.OPT_SORT_KEYS | orjson.OPT_NON_STR_KEYS


def _trimmed_facet(cuts: dict[str, int], budget: int) -> dict[str, Any] | None:
    cuts = {what: n for what, n in cuts.items() if n}
    if not cuts:
        return None
    facet = plain(
        TrimmedRunFacet(cuts=[{"what": w, "count": n} for w, n in cuts.items()], budgetBytes=budget)
    )
    facet["originalBytes"] = facet["finalBytes"] = orjson.Fragment(_SIZE_PLACEHOLDER)
    return facet  # type: ignore[no-any-return]


def _with_run_facet(event: Any, facet: dict[str, Any]) -> tuple[dict[str, Any], bool]:
    """A shallow copy of ``event`` whose run facets hold ``facet`` too; whether it had others."""
    view = fields_of(event)
    run = fields_of(view.get("run") or {})
    facets = dict(run.get("facets") or {})
    others = bool(facets)
    facets[TrimmedRunFacet.key] = facet
    run["facets"] = facets
    view["run"] = run
    return view, others


def _shaped(event: Any, settings: Limits | None) -> tuple[Any, dict[str, int]]:
    """``event`` with the fixed limits and the values policy applied, and what they cut: the event when
    nothing applies, else a copy of just the parts they change."""
    cuts: dict[str, int] = {}
    if _over_fixed_limits(event, settings):
        event = orjson.loads(dumps(event))
        cuts = _apply_fixed_limits(event, settings)
    if not _limit(settings, "quality_include_values"):
        event, cuts[VALUES_CUT] = _without_values(event)
    return event, {what: n for what, n in cuts.items() if n}


def _without_values(event: Any) -> tuple[Any, int]:
    """``event`` without column-metric values (min/max/quantiles), copied where they were; how many."""
    view: dict[str, Any] | None = None
    cut = 0
    for part in ("inputs", "outputs"):
        datasets = list(_get(event, part) or [])
        changed = False
        for index, dataset in enumerate(datasets):
            copy, n = _dataset_without_values(dataset)
            if n:
                datasets[index], changed, cut = copy, True, cut + n
        if changed:
            view = view if view is not None else fields_of(event)
            view[part] = datasets
    return (event if view is None else view), cut


def _has_values(column: Any) -> bool:
    if isinstance(column, dict):
        get = column.get
        return get("min") is not None or get("max") is not None or get("quantiles") is not None
    return (
        getattr(column, "min", None) is not None
        or getattr(column, "max", None) is not None
        or getattr(column, "quantiles", None) is not None
    )


def _dataset_without_values(dataset: Any) -> tuple[Any, int]:
    copy: dict[str, Any] | None = None
    cut = 0
    for group in ("facets", "inputFacets", "outputFacets"):
        facets = _get(dataset, group)
        metrics = facets.get("dataQualityMetrics") if isinstance(facets, dict) else None
        columns = _get(metrics, "columnMetrics") if metrics is not None else None
        if not columns:
            continue
        if not any(map(_has_values, columns.values())):
            continue
        kept: dict[str, Any] = {}
        removed = 0
        for name, column in columns.items():
            values = [v for v in VALUE_METRICS if _get(column, v) is not None]
            if values:
                column = {k: v for k, v in fields_of(column).items() if k not in VALUE_METRICS}
                removed += len(values)
            kept[name] = column
        if removed:
            copy = copy if copy is not None else fields_of(dataset)
            copy[group] = {**facets, "dataQualityMetrics": {**fields_of(metrics), "columnMetrics": kept}}
            cut += removed
    return (dataset if copy is None else copy), cut


def enforce(event: Any, settings: Limits | None = None) -> dict[str, Any]:
    """``event`` (object or dict) redacted, within the limits (default: as configured) and budget, as a
    new JSON-ready dict (:func:`check`, decoded)."""
    return orjson.loads(check(event, settings))  # type: ignore[no-any-return]


def _over_fixed_limits(event: Any, settings: Limits | None) -> bool:
    """Whether ``event`` holds SQL longer or a schema wider than the fixed limits (cheap: a few facets)."""
    facets = _get(_get(event, "job"), "facets")
    sql = facets.get("sql") if isinstance(facets, dict) else None
    query = _get(sql, "query") if sql is not None else None
    if isinstance(query, str) and len(query) > _limit(settings, "sql_max_length"):
        return True
    widest = max((len(_get(s, "fields") or ()) for _, s in _dataset_facets(event, "schema")), default=0)
    return widest > _limit(settings, "schema_max_columns")


def _apply_fixed_limits(event: dict[str, Any], settings: Limits | None) -> dict[str, int]:
    return {
        limits.SQL_CUT: _cut_sql(event, _limit(settings, "sql_max_length")),
        limits.SCHEMA_CUT: _cut_schemas(event, _limit(settings, "schema_max_columns")),
    }


def _trim_to_budget(event: Any, budget: int, size: int, cuts: dict[str, int]) -> int:
    """Apply :data:`TRIM_ORDER`, then drop the largest facets, until ``event`` fits; returns its size."""
    for what, step in TRIM_ORDER:
        cut = step(event)
        if cut:
            cuts[what] = cuts.get(what, 0) + cut
            size = _size(event)
            if size <= budget:
                return size
    return _drop_largest_facets(event, budget, size, cuts)


def _record_cuts(event: Any, cuts: dict[str, int], budget: int, original: int, size: int) -> None:
    """Record the cuts in the event (``lineagePlus_trimmed``), count and log them once."""
    facet = TrimmedRunFacet(
        cuts=[{"what": what, "count": n} for what, n in cuts.items()],
        budgetBytes=budget,
        originalBytes=original,
        finalBytes=size,
    )
    run = event.setdefault("run", {})
    if isinstance(run, dict):
        run.setdefault("facets", {})[TrimmedRunFacet.key] = plain(facet)
    _report_cuts(event, cuts, budget, original, size)


def _report_cuts(event: Any, cuts: dict[str, int], budget: int, original: int, size: int) -> None:
    """Count the cuts and log them once (WARNING unless only values were removed by policy)."""
    for what, n in cuts.items():
        limits.count_cut(what, n)
    summary = ", ".join(f"{what} ({n})" for what, n in cuts.items())
    # Removing values by policy is expected and routine (INFO); cutting content to fit a limit is not.
    level = logging.WARNING if set(cuts) - {VALUES_CUT} else logging.INFO
    log.log(
        level,
        "airflow-lineage-plus: trimmed %s to stay within limits: %s; %d -> %d bytes (budget %d)",
        describe(event),
        summary,
        original,
        size,
        budget,
    )
    if size > budget:
        log.warning(
            "airflow-lineage-plus: %s is still %d bytes, above the budget of %d, after trimming; sent as is",
            describe(event),
            size,
            budget,
        )


class BudgetTransformer(EventTransformer):
    """:func:`enforce` as a transformer for the client's ``transform`` transport (any inner transport).

    ``OPENLINEAGE__TRANSPORT='{"type": "transform", "transformer_class":
    "airflow_lineage_plus.budget.BudgetTransformer", "transport": {"type": "http", "url": "..."}}'``
    """

    def transform(self, event: Any) -> Any:
        """The checked event as a JSON-ready dict (every client transport serialises dicts too)."""
        try:
            return enforce(event)
        except Exception as exc:  # fail closed: an event not checked for secrets is not sent
            report(f"{describe(event)}, which could not be checked for secrets and size (not sent)", exc)
            return None
