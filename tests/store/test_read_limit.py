"""A statement reading the store for a question stops at ``store_read_timeout`` and says so, on SQLite and
PostgreSQL; the same statement outside a read, and reads after it, are not bounded."""

from __future__ import annotations

import json
import time
from pathlib import Path

import pytest

from airflow_lineage_plus.exceptions import StoreUnavailable
from airflow_lineage_plus.graph import LineageQueries
from airflow_lineage_plus.graph.store_source import StoreSource
from airflow_lineage_plus.sources import open_store_source
from airflow_lineage_plus.store import LineageStore
from tests.support.graph_builders import dataset_node, ds, job_node, run_pair

pytestmark = pytest.mark.timeout(120)

LIMIT = 0.2
#: well past the limit on each engine (SQLite: counting to 4M in a recursive query, about 1 s here)
SLOW = {
    "sqlite": "WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 4000000) "
    "SELECT count(*) FROM n",
    "postgresql": "SELECT count(*) FROM pg_sleep(0.8)",
}


def _slow(store: LineageStore) -> str:
    return SLOW[store.engine.dialect.name]


def test_a_read_statement_past_the_limit_is_stopped_and_says_so_and_the_next_read_is_served(
    store_url: str,
) -> None:
    store = LineageStore(store_url, read_timeout=LIMIT)
    try:
        began = time.monotonic()
        stopped = r"ran past \[lineage_plus\] store_read_timeout \(0.2 s\) and was stopped"
        with pytest.raises(StoreUnavailable, match=stopped), store.read() as connection:
            connection.exec_driver_sql(_slow(store)).all()
        assert time.monotonic() - began < LIMIT + 0.9
        for _ in range(6):  # every pooled connection serves a quick read after
            with store.read() as connection:
                assert connection.exec_driver_sql("SELECT 1").scalar_one() == 1
    finally:
        store.close()


def test_the_same_statement_outside_a_read_or_without_a_limit_runs_to_its_end(store_url: str) -> None:
    limited = LineageStore(store_url, read_timeout=LIMIT)
    unlimited = LineageStore(store_url)
    try:
        with limited.read() as connection:  # a pooled connection that had a limit ...
            connection.exec_driver_sql("SELECT 1").all()
        with limited.engine.connect() as connection:  # ... runs a statement outside a read unbounded
            assert connection.exec_driver_sql(_slow(limited)).scalar_one() in (1, 4000000)
        with unlimited.read() as connection:
            assert connection.exec_driver_sql(_slow(unlimited)).scalar_one() in (1, 4000000)
    finally:
        limited.close()
        unlimited.close()


def test_the_configured_limit_bounds_the_questions_of_the_store_source(
    store_url: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    seed = LineageStore(store_url)
    seed.append([json.dumps(e).encode() for e in run_pair("j", "r", 1, 2, outputs=[ds("out")])])
    seed.close()
    monkeypatch.setenv("AIRFLOW__LINEAGE_PLUS__STORE_URL", store_url)
    monkeypatch.setenv("AIRFLOW__LINEAGE_PLUS__EVENT_LOG_PATH", str(tmp_path / "none.jsonl"))
    monkeypatch.setenv("AIRFLOW__LINEAGE_PLUS__STORE_READ_TIMEOUT", "0.2")
    source = open_store_source()
    try:
        assert isinstance(source, StoreSource)
        assert source.store.read_timeout == LIMIT
        answer = LineageQueries(source).upstream(dataset_node("out"), 2)
        assert [node["id"] for node in answer["nodes"]] == [job_node("j")]  # the writer of out
    finally:
        source.close()
