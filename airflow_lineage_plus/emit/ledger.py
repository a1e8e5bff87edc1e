"""The "emitted once" ledger of skip records: a runId is claimed at most once.

A SQLite file (``[lineage_plus] skip_ledger_path``): the DAG-run hooks can fire more than once for one DAG
run (the scheduler, the API server, a re-run of ``airflow dags test``), and only the first claim of a
task instance's runId emits a record.
"""

from __future__ import annotations

import contextlib
import sqlite3
from collections.abc import Iterable, Iterator
from datetime import datetime, timezone
from pathlib import Path

#: (run_id, dag_id, task_id, map_index, try_number, dag_run_id) of one record.
Claim = tuple[str, str, str, int, int, str]


class Ledger:
    """SQLite notes of the runIds skip records went out for: a runId is claimed at most once."""

    def __init__(self, path: Path) -> None:
        self.path = path

    @contextlib.contextmanager
    def _connect(self) -> Iterator[sqlite3.Connection]:
        self.path.parent.mkdir(parents=True, exist_ok=True)
        connection = sqlite3.connect(self.path, timeout=10)
        try:
            connection.execute(
                "CREATE TABLE IF NOT EXISTS skip_records (run_id TEXT PRIMARY KEY, dag_id TEXT, "
                "task_id TEXT, map_index INTEGER, try_number INTEGER, dag_run_id TEXT, claimed_at TEXT)"
            )
            yield connection
            connection.commit()
        finally:
            connection.close()

    def claim(self, rows: list[Claim]) -> set[str]:
        """Claim runIds (run_id, dag_id, task_id, map_index, try_number, dag_run_id); returns the new."""
        claimed: set[str] = set()
        now = datetime.now(timezone.utc).isoformat()
        with self._connect() as connection:
            for row in rows:
                cursor = connection.execute(
                    "INSERT OR IGNORE INTO skip_records VALUES (?, ?, ?, ?, ?, ?, ?)", (*row, now)
                )
                if cursor.rowcount == 1:
                    claimed.add(row[0])
        return claimed

    def release(self, run_ids: Iterable[str]) -> None:
        """Forget claims whose events could not be handed over for emission."""
        with self._connect() as connection:
            connection.executemany("DELETE FROM skip_records WHERE run_id = ?", [(r,) for r in run_ids])

    def claimed(self, dag_id: str) -> set[str]:
        """Every runId claimed for a DAG (for diagnostics and tests)."""
        with self._connect() as connection:
            rows = connection.execute(
                "SELECT run_id FROM skip_records WHERE dag_id = ?", (dag_id,)
            ).fetchall()
        return {r[0] for r in rows}
