"""Reading rows for a list of keys: one statement text on PostgreSQL however many keys (so it is planned
once), a spread IN list on SQLite that an index serves; each job's newest runs bounded once per job, not
once per run."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import sqlalchemy as sa

from airflow_lineage_plus.store import LineageStore, adjacent, folded
from airflow_lineage_plus.store.facts import key_of
from tests.support.graph_builders import dataset_node, ds, job_node, run_id, run_pair

pytestmark = pytest.mark.timeout(120)


@pytest.fixture
def store(store_url: str) -> Iterator[LineageStore]:
    """Jobs j0..j39, each writing its own dataset; j0 and j1 ran 6 times, the others once."""
    events = []
    for number in range(40):
        for attempt in range(6 if number < 2 else 1):
            minute = 10 * attempt + number / 100
            events += run_pair(
                f"j{number}", f"j{number}-{attempt}", minute, minute + 1, outputs=[ds(f"d{number}")]
            )
    store = LineageStore(store_url)
    store.append([json.dumps(event).encode() for event in events])
    try:
        yield store
    finally:
        store.close()


def _statements(store: LineageStore) -> list[tuple[str, Any]]:
    """Every statement ``store`` runs from now on, with its parameters, as the driver gets them."""
    seen: list[tuple[str, Any]] = []
    sa.event.listen(store.engine, "before_cursor_execute", lambda *args: seen.append((args[2], args[3])))
    return seen


def test_the_rows_of_any_number_of_keys_are_read_with_one_statement_text_on_postgresql_only(
    store: LineageStore,
) -> None:
    state = folded.FoldedState(store)
    seen = _statements(store)
    for count in (1, 2, 17, 40):
        wanted = [job_node(f"j{number}") for number in range(count)] + [dataset_node("nowhere")]
        assert sorted(state.nodes(wanted)) == sorted(wanted[:-1])
    texts = {text for text, _ in seen if "lineage_plus_node" in text}
    # PostgreSQL: the keys are one array parameter; SQLite: an IN list as long as the keys
    assert len(texts) == (1 if store.engine.dialect.name == "postgresql" else 4)


def _loops_of(plan: dict[str, Any], alias: str) -> int:
    """How many times the plan scanned the relation under ``alias``, in all."""
    own = plan["Actual Loops"] if plan.get("Alias") == alias else 0
    return own + sum(_loops_of(child, alias) for child in plan.get("Plans", ()))


def test_each_jobs_newest_runs_start_time_is_found_once_per_job_not_once_per_run(
    store: LineageStore,
) -> None:
    state = folded.FoldedState(store)
    runs, partial = state.newest_job_runs([key_of(job_node("j0")), key_of(job_node("j1"))], 4)
    assert sorted(run.row.run_id for run in runs) == sorted(
        run_id(f"j{job}-{attempt}") for job in (0, 1) for attempt in range(2, 6)
    )
    assert sorted(partial) == sorted([key_of(job_node("j0")), key_of(job_node("j1"))])
    if store.engine.dialect.name != "postgresql":
        return  # the plan below is PostgreSQL's; SQLite's answer is checked above
    with store.engine.connect() as connection:
        compiled = folded._NEWEST_RUNS.compile(dialect=connection.dialect)
        params = {**compiled.params, "keys": [key_of(job_node("j0")), key_of(job_node("j1"))], "skip": 3}
        (plan,) = connection.exec_driver_sql(
            f"EXPLAIN (ANALYZE, FORMAT JSON) {compiled}", params
        ).scalar_one()
    # the 4th newest run's time of each of the 2 jobs, found once per job (pulled into the outer query,
    # it was found once per run returned: 8 times)
    assert _loops_of(plan["Plan"], "newer") == 2


def test_every_statement_reading_rows_by_keys_searches_an_index_on_sqlite(tmp_path: Path) -> None:
    store = LineageStore(f"sqlite:///{tmp_path / 'lineage.db'}")
    seen = _statements(store)
    scans = {}
    try:
        with store.engine.connect() as connection:
            for name, statement in _statements_by_keys():
                params = {bind: 0 for bind in statement.compile(dialect=connection.dialect).binds}
                connection.execute(statement, {**params, "keys": [1, 2], "sides": [0, 1]}).all()
                text, parameters = seen[-1]
                plan = connection.exec_driver_sql(f"EXPLAIN QUERY PLAN {text}", parameters).all()
                scans[name] = [row[3] for row in plan if row[3].startswith("SCAN lineage_plus_")]
    finally:
        store.close()
    assert len(scans) == 25  # the statements of folded.py and adjacent.py that take keys
    assert {name: scan for name, scan in scans.items() if scan} == {}


def _statements_by_keys() -> list[tuple[str, sa.Select[Any]]]:
    found = []
    for module in (folded, adjacent):
        for name, value in vars(module).items():
            if isinstance(value, sa.Select) and "keys" in value.compile().binds:
                found.append((f"{module.__name__}.{name}", value))
    return found
