"""A week of daily runs for ``what-changed`` tests: CRM extract -> raw.contacts -> stg_contacts (SQL) ->
stg.contacts, ±2 % noise from run to run, the last day changed as asked (:func:`week`)."""

from __future__ import annotations

from typing import Any

from tests.support.graph_builders import (
    DS_NS,
    OUTPUT_STATISTICS,
    QUALITY_ASSERTIONS,
    QUALITY_METRICS,
    SCHEMA,
    SQL,
    event,
    facet,
)

DAY = 24 * 60
NOISE = (1.0, 0.98, 1.01, 0.99, 1.0, 0.98, 1.01, 1.02)  # ±2 % from run to run, the last day +2 %


def output(name: str, rows: int | None, nulls: int | None, fields: list[tuple[str, str]]) -> dict[str, Any]:
    facets: dict[str, Any] = {"schema": facet(SCHEMA, fields=[{"name": n, "type": t} for n, t in fields])}
    output_facets: dict[str, Any] = {}
    if rows is not None:
        facets["dataQualityMetrics"] = facet(
            QUALITY_METRICS,
            rowCount=rows,
            bytes=rows * 100,
            columnMetrics={"email": {"nullCount": nulls or 0}},
        )
        output_facets["outputStatistics"] = facet(OUTPUT_STATISTICS, rowCount=rows, size=rows * 100)
    return {"namespace": DS_NS, "name": name, "facets": facets, "outputFacets": output_facets}


def run(
    job: str,
    day: int,
    outputs: list[dict[str, Any]],
    *,
    state: str = "COMPLETE",
    minutes: float = 10,
    **kw: Any,
) -> list[dict[str, Any]]:
    label = f"{job}-{day}"
    start = day * DAY + (5 if job == "stg_contacts" else 0)
    return [
        event("START", job, label, start, **kw),
        event(state, job, label, start + minutes, outputs=outputs, **kw),
    ]


def week(days: int = 8, **last: Any) -> list[dict[str, Any]]:
    """CRM extract -> raw.contacts -> stg_contacts (SQL) -> stg.contacts, ``days`` days of ±2 % noise;
    ``last`` changes the last day: rows, nulls, sql, fields, state, minutes, raw_rows, raw_assertions
    ((assertion, column, success) the CRM extract records on raw.contacts: every other day they pass)."""
    events = []
    fields = [("id", "INT"), ("email", "VARCHAR")]
    for day in range(days):
        final = day == days - 1
        rows = int(1000 * NOISE[day % len(NOISE)])
        raw_rows = last.get("raw_rows", rows) if final else rows
        raw = output("raw.contacts", raw_rows, 10, fields)
        checks = last.get("raw_assertions", ())
        if checks:
            raw["facets"]["dataQualityAssertions"] = assertions(
                [(a, c, ok if final else True) for a, c, ok in checks]
            )
        events += run("crm_extract", day, [raw])
        stg_rows = last.get("rows", raw_rows) if final else rows
        sql = last.get("sql", "SELECT * FROM raw.contacts") if final else "SELECT * FROM raw.contacts"
        out_fields = last.get("fields", fields) if final else fields
        nulls = last.get("nulls", 10) if final else 10
        events += run(
            "stg_contacts",
            day,
            [output("stg.contacts", stg_rows, nulls, out_fields)],
            state=last.get("state", "COMPLETE") if final else "COMPLETE",
            minutes=last.get("minutes", 10 + day % 2) if final else 10 + day % 2,
            inputs=[{"namespace": DS_NS, "name": "raw.contacts"}],
            job_facets={"sql": facet(SQL, query=sql)},
        )
    return events


def assertions(results: list[tuple[str, str | None, bool]]) -> dict[str, Any]:
    """A ``dataQualityAssertions`` facet of (assertion, column, success) results."""
    return facet(
        QUALITY_ASSERTIONS,
        assertions=[
            {"assertion": a, "success": ok, **({"column": c} if c is not None else {})}
            for a, c, ok in results
        ],
    )


def check(
    job: str, dataset: str, minute: float, results: list[tuple[str, str | None, bool]]
) -> list[dict[str, Any]]:
    """A quality check run (a Great Expectations checkpoint, a dbt test) reading ``dataset`` at ``minute``
    and recording ``results`` on it as input facets."""
    read = {
        "namespace": DS_NS,
        "name": dataset,
        "inputFacets": {"dataQualityAssertions": assertions(results)},
    }
    label = f"{job}-{minute}"
    return [event("START", job, label, minute), event("COMPLETE", job, label, minute + 1, inputs=[read])]
