"""Great Expectations results read as OpenLineage data-quality assertions, without importing GX.

:func:`assertions_by_asset` takes what a GX 1.x run returns, a ``CheckpointResult`` (its ``run_results``)
or an ``ExpectationSuiteValidationResult`` (``ValidationDefinition.run()``), their ``to_json_dict()`` or
``describe_dict()`` output, a single ``ExpectationValidationResult``, or a list of these, and gives one
:class:`~openlineage.client.facet_v2.data_quality_assertions_dataset.Assertion` per expectation, grouped by
the GX data asset each validation ran on. GX is read by duck typing (``to_json_dict``, ``run_results``),
so this module costs nothing to import and works whether GX is installed or not.

Each expectation becomes, in the spec's ``DataQualityAssertionsDatasetFacet`` (1-1-0):

- ``assertion``: the expectation type (``expect_column_values_to_not_be_null``); ``success``: its result
  (an expectation that raised is a failure);
- ``column``: the expectation's ``column`` argument; ``name``: ``<suite>.<type>[.<column>]``;
  ``description``: the expectation's own description, when it has one;
- ``severity``: GX's ``critical`` / ``warning`` / ``info`` as the spec's ``error`` / ``warn`` / ``info``;
- ``expected``: the expectation's arguments as JSON (``{"min_value": 0, "max_value": 100}``);
- ``actual``: counts always (``{"unexpected_count": 4, "element_count": 60}``, a row count); an observed
  value computed from the data (a mean, a maximum) only when ``[lineage_plus] quality_include_values``
  allows values to leave the task; ``error: <message>`` when the expectation raised. GX's lists of
  unexpected values never leave the task.
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Mapping
from typing import Any

import attr
from openlineage.client.facet_v2 import data_quality_assertions_dataset

from airflow_lineage_plus.exceptions import NotAValidationResult

Assertion = data_quality_assertions_dataset.Assertion

#: The key of validations whose data asset the result does not name (``describe_dict()`` output).
UNNAMED_ASSET = ""

#: GX severities (1.x expectations' ``severity``) as the spec's common values.
SEVERITIES = {"critical": "error", "warning": "warn", "info": "info"}

#: Expectation arguments that say how GX runs, not what it expects.
_NOT_EXPECTED = frozenset(
    {"column", "batch_id", "result_format", "include_config", "catch_exceptions", "meta", "rendered_content"}
)

#: Longest ``expected`` or ``actual`` text kept (a value set of thousands of entries is cut, marked).
MAX_TEXT = 1000

_ASSERTION_FIELDS = frozenset(attr.fields_dict(Assertion))


def _as_dict(value: Any) -> Any:
    """A GX result object as its JSON dict (``to_json_dict``), anything else as it is."""
    to_json = getattr(value, "to_json_dict", None)
    return to_json() if callable(to_json) else value


def _validations(result: Any) -> Iterator[dict[str, Any]]:
    """Every suite validation in ``result``, as a JSON dict with a ``results`` or ``expectations`` list."""
    if isinstance(result, list | tuple):
        for item in result:
            yield from _validations(item)
        return
    run_results = getattr(result, "run_results", None)
    if run_results is None and isinstance(result, Mapping):
        run_results = result.get("run_results")
    if isinstance(run_results, Mapping):  # a CheckpointResult (1.x objects; 0.18 wraps each one)
        for value in run_results.values():
            item = _as_dict(value)
            if isinstance(item, Mapping) and "validation_result" in item:
                item = _as_dict(item["validation_result"])
            yield from _validations(item)
        return
    result = _as_dict(result)
    if isinstance(result, Mapping) and isinstance(result.get("validation_results"), list):
        yield from _validations(result["validation_results"])  # CheckpointResult.describe_dict()
    elif isinstance(result, Mapping) and "expectation_config" in result:
        yield {"results": [result]}  # one ExpectationValidationResult
    elif isinstance(result, Mapping) and isinstance(result.get("results", result.get("expectations")), list):
        yield dict(result)
    else:
        raise NotAValidationResult(
            f"{type(result).__name__} is not a Great Expectations result: pass what a Checkpoint or a "
            "ValidationDefinition run returns (CheckpointResult, ExpectationSuiteValidationResult) or its "
            "to_json_dict()"
        )


def _asset_name(validation: Mapping[str, Any]) -> str:
    batch = (validation.get("meta") or {}).get("active_batch_definition") or {}
    return str(batch.get("data_asset_name") or UNNAMED_ASSET)


def _suite_name(validation: Mapping[str, Any]) -> str | None:
    name = validation.get("suite_name") or validation.get("expectation_suite_name")
    return str(name) if name else None


def _text(value: Any) -> str:
    text = value if isinstance(value, str) else json.dumps(value, sort_keys=True, default=str)
    return text if len(text) <= MAX_TEXT else text[: MAX_TEXT - 1] + "…"


def _exception_message(info: Any) -> str | None:
    """The message of an expectation that raised (1.x nests one entry per metric), else None."""
    if not isinstance(info, Mapping):
        return None
    if info.get("raised_exception"):
        return str(info.get("exception_message") or "raised an exception")
    for entry in info.values():
        if isinstance(entry, Mapping) and entry.get("raised_exception"):
            return str(entry.get("exception_message") or "raised an exception")
    return None


def _actual(kind: str, result: Mapping[str, Any], include_values: bool) -> str | None:
    if "unexpected_count" in result:
        counts = {k: result[k] for k in ("unexpected_count", "element_count", "missing_count") if k in result}
        return _text(counts)
    if "observed_value" not in result:
        return None
    observed = result["observed_value"]
    is_count = "_count_" in kind and isinstance(observed, int) and not isinstance(observed, bool)
    return _text(observed) if include_values or is_count else None


def to_assertion(entry: Mapping[str, Any], suite: str | None, include_values: bool) -> Assertion:
    """One expectation's validation result (a JSON dict, 1.x or 0.18 keys) as a spec assertion."""
    config = entry.get("expectation_config") or entry
    kind = str(config.get("type") or config.get("expectation_type") or "expectation")
    kwargs = dict(config.get("kwargs") or {})
    column = kwargs.get("column")
    expected = {k: v for k, v in kwargs.items() if k not in _NOT_EXPECTED}
    error = _exception_message(entry.get("exception_info"))
    result = entry.get("result") or {}
    severity = config.get("severity")
    values: dict[str, Any] = {
        "assertion": kind,
        "success": bool(entry.get("success")) and error is None,
        "column": str(column) if isinstance(column, str) else None,
        "severity": SEVERITIES.get(str(severity).lower(), str(severity).lower()) if severity else None,
        "name": ".".join(p for p in (suite, kind, column if isinstance(column, str) else None) if p),
        "description": config.get("description") or (config.get("meta") or {}).get("notes") or None,
        "expected": _text(expected) if expected else None,
        "actual": f"error: {_text(error)}" if error else _actual(kind, result, include_values),
    }
    if isinstance(values["description"], Mapping | list):
        values["description"] = _text(values["description"])
    return Assertion(**{k: v for k, v in values.items() if k in _ASSERTION_FIELDS})


def assertions_by_asset(result: Any, *, include_values: bool = False) -> dict[str, list[Assertion]]:
    """The assertions of every expectation in ``result``, keyed by GX data asset name (see the module doc).

    A validation whose data asset is not named (``describe_dict()`` output) is under :data:`UNNAMED_ASSET`.
    Raises :class:`~airflow_lineage_plus.exceptions.NotAValidationResult` for what is not a GX result.
    """
    found: dict[str, list[Assertion]] = {}
    for validation in _validations(result):
        suite = _suite_name(validation)
        entries = validation.get("results")
        if entries is None:
            entries = validation.get("expectations") or []
        into = found.setdefault(_asset_name(validation), [])
        into.extend(to_assertion(e, suite, include_values) for e in entries if isinstance(e, Mapping))
    return found


__all__ = ["SEVERITIES", "UNNAMED_ASSET", "assertions_by_asset", "to_assertion"]
