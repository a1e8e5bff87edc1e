"""The skip listener is idempotent when a DAG run's end is reported more than once at the same time
(two schedulers, a retried callback): each skip record's runId is claimed by exactly one process. Here on
SQLite; tests/emit/test_scheduler_postgres.py runs the same race on PostgreSQL.

Its end-to-end idempotence under a second call and clear-and-rerun is tested in tests/emit: in
test_skip_state.py (``test_short_circuit_gives_one_record_per_task_of_the_chain_and_a_second_call_adds_none``)
and test_skip_clear_rerun.py
(``test_scheduler_adds_nothing_for_a_cleared_rerun_and_one_record_per_skip_of_a_new_run``).
"""

from __future__ import annotations

import multiprocessing
from collections import Counter
from pathlib import Path

from tests.support.claim_race import claim_all

PROCESSES = 4
RUNS = 200


def test_concurrent_reports_of_one_dag_run_claim_each_skip_record_exactly_once(tmp_path: Path) -> None:
    database = f"sqlite:///{tmp_path / 'metadata.db'}"
    with multiprocessing.get_context("spawn").Pool(PROCESSES) as pool:
        claimed = pool.starmap(claim_all, [(database, RUNS)] * PROCESSES)
    winners = Counter(run for claims in claimed for run in claims)
    assert set(winners) == {f"run-{i}" for i in range(RUNS)}
    assert set(winners.values()) == {1}
    assert claim_all(database, RUNS) == []  # a late, repeated report adds nothing
