"""Redaction and size limits applied to every event before it leaves the process.

:func:`check` turns an event (``openlineage.client`` attrs objects, or its JSON-ready dict) into the JSON
line that may leave, without changing the event; :class:`~airflow_lineage_plus.deliver.transport.
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
from collections.abc import Callable
from typing import Any

import attr
import orjson
from openlineage.client.transport.transform.transform import EventTransformer

from airflow_lineage_plus import conf
from airflow_lineage_plus.containment import report
from airflow_lineage_plus.deliver import limits
from airflow_lineage_plus.deliver.redaction import redact_json
from airflow_lineage_plus.deliver.serialize import (
    CLEANUP_MARKERS,
    describe,
    dumps,
    dumps_direct,
    dumps_exact,
    plain,
)
from airflow_lineage_plus.facet_keys import KEPT_FACETS, OMITTED_FIELDS
from airflow_lineage_plus.facets import TrimmedRunFacet
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


def _drop_value_metrics(event: Any) -> int:
    cut = 0
    for _, metrics in _dataset_facets(event, "dataQualityMetrics"):
        columns = _get(metrics, "columnMetrics")
        for column in (columns or {}).values():
            for name in VALUE_METRICS:
                if _get(column, name) is not None:
                    _set(column, name, None)
                    cut += 1
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


#: What the redaction pass also looks for, for the size budget: Serde's cleanup (then the event is
#: serialised the exact way) and column-metric values (then the values policy applies).
PROBES = (
    ("cleanup", CLEANUP_MARKERS),
    ("values", "|".join(f'"{name}":' for name in VALUE_METRICS)),
)


def check(event: Any, settings: Limits | None = None) -> bytes:
    """The JSON line (without newline) that may leave for ``event``: fixed limits, redaction, values
    policy, size budget. ``event`` itself is not changed. Raises when the event cannot be checked.
    ``settings``: the limits to apply (default: as configured in this process).

    One RE2 pass over the event's JSON finds its secrets and tells whether anything else needs doing;
    only then is the JSON decoded (the common event is serialised and scanned once, never decoded).
    """
    cuts: dict[str, int] = {}
    raw = dumps_direct(event)
    if _over_fixed_limits(event, settings):
        data = orjson.loads(dumps(event))
        cuts = _apply_fixed_limits(data, settings)
        raw = dumps(data)
    raw, redacted, found = redact_json(raw, PROBES)
    if "cleanup" in found:  # what Serde drops (nulls, empty objects in lists): the exact way
        raw, redacted, found = redact_json(dumps_exact(orjson.loads(raw)), PROBES)
    if redacted:
        limits.count_cut("redacted strings", redacted)
        log.info("airflow-lineage-plus: redacted %d secret(s) in %s", redacted, describe(event))
    data = None
    if "values" in found and not _limit(settings, "quality_include_values"):
        data = orjson.loads(raw)
        cuts[VALUES_CUT] = _drop_value_metrics(data)
        raw = dumps(data)
    budget = int(_limit(settings, "event_size_budget"))
    return _within_budget(raw, data, {what: n for what, n in cuts.items() if n}, budget)


def _within_budget(raw: bytes, data: dict[str, Any] | None, cuts: dict[str, int], budget: int) -> bytes:
    """``raw`` (checked JSON; ``data``: the same decoded, if at hand) trimmed to ``budget`` bytes, with
    the cuts recorded in the event."""
    original = size = len(raw)
    if size <= budget and not cuts:
        return raw
    data = data if data is not None else orjson.loads(raw)
    if size > budget:
        size = _trim_to_budget(data, budget, size, cuts)
    cuts = {what: n for what, n in cuts.items() if n}
    if not cuts:
        return raw
    _record_cuts(data, cuts, budget, original, size)
    return dumps(data)


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
    """Count the cuts, record them in the event (``lineagePlus_trimmed``) and log them once."""
    for what, n in cuts.items():
        limits.count_cut(what, n)
    facet = TrimmedRunFacet(
        cuts=[{"what": what, "count": n} for what, n in cuts.items()],
        budgetBytes=budget,
        originalBytes=original,
        finalBytes=size,
    )
    run = event.setdefault("run", {})
    if isinstance(run, dict):
        run.setdefault("facets", {})[TrimmedRunFacet.key] = plain(facet)
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
