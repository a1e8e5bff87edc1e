"""The one claim store (``airflow_lineage_plus/claims.py``): what the stores before it wrote still counts."""

from __future__ import annotations

import sqlite3
from pathlib import Path

from airflow_lineage_plus.claims import FileClaims, alert_claims_table, digest, skip_claims_table

#: The alerts' fallback file as the alert claims module before the one store created it.
OLD_FILE_DDL = (
    "CREATE TABLE IF NOT EXISTS lineage_plus_claims (claim_key TEXT PRIMARY KEY, description TEXT, "
    "claimed_by TEXT, claimed_at TEXT)"
)


def test_an_alert_claims_file_written_before_the_one_store_keeps_its_claims(tmp_path: Path) -> None:
    path = tmp_path / "alert_claims.sqlite"
    with sqlite3.connect(path) as connection:
        connection.execute(OLD_FILE_DDL)
        connection.execute(
            "INSERT INTO lineage_plus_claims VALUES (?, ?, ?, ?)",
            (digest("sent-before"), "sent-before", "old-host", "2026-01-01T00:00:00+00:00"),
        )
    claims = FileClaims(path)
    assert claims.claim(["sent-before", "new"]) == {"new"}
    assert claims.claim(["new"]) == set()
    claims.release(["new"])
    assert claims.claim(["new", "sent-before"]) == {"new"}


def test_both_claims_tables_have_the_one_design_key_first_claimed_at_last() -> None:
    for table in (skip_claims_table("lineage_plus_skip_claims"), alert_claims_table()):
        columns = [c.name for c in table.columns]
        assert [c.name for c in table.primary_key.columns] == columns[:1]
        assert columns[-1] == "claimed_at"
    assert alert_claims_table().name == "lineage_plus_claims"
