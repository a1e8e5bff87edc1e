"""A process that claims skip-record runIds in the claims table of a database (spawned by the tests).

Used by the SQLite (tests/reliability) and PostgreSQL (tests/emit) idempotence tests: several of these at
once, each claiming the same runIds, stand for schedulers reporting the same DAG runs at the same moment.
"""

from __future__ import annotations

TABLE = "lineage_plus_skip_claims"


def claim_all(database_url: str, count: int, table_name: str = TABLE) -> list[str]:
    """Claim ``run-0`` .. ``run-<count-1>`` in one transaction, as the listener does; return the won ones."""
    from sqlalchemy import create_engine
    from sqlalchemy.orm import Session

    from airflow_lineage_plus.claims import claim, ensure_table, skip_claims_table

    engine = create_engine(database_url)
    table = skip_claims_table(table_name)
    rows = [(f"run-{i}", "dag", f"task_{i}", -1, 1, "dag-run") for i in range(count)]
    try:
        with Session(engine) as session:
            ensure_table(session, table)
            won = claim(session.connection(), table, rows)
            session.commit()
    finally:
        engine.dispose()
    return sorted(won)
