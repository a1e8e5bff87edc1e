"""A worker that claims skip-record run ids in the skip listener's ledger (spawned by the tests)."""

from __future__ import annotations

from pathlib import Path


def claim_all(ledger_path: str, count: int) -> list[str]:
    from airflow_lineage_plus.emit.ledger import Ledger

    rows = [(f"run-{i}", "dag", f"task_{i}", -1, 1, "dag-run") for i in range(count)]
    return sorted(Ledger(Path(ledger_path)).claim(rows))
