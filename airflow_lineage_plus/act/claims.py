"""Claims that make an alert go out once: a key is claimed by exactly one process, on any host.

An alert is sent only by the process whose claim of its key (the failed try or the breach, and the owner)
succeeded. The claim is an ``INSERT`` into a table of Airflow's metadata database, ``lineage_plus_claims``,
created on first use (no Airflow migration); its primary key makes the insert atomic across processes and
hosts: the worker's courier, the scheduler's and the API server's all see the same table. A process
that cannot reach the metadata database falls back to a SQLite file on its host
(``$AIRFLOW_HOME/lineage_plus/alert_claims.sqlite``), which deduplicates on that host only; that is
logged once.

Both stores sit behind :class:`Claims`. The skip records claim theirs in their own table with their own
session and statement timeout (``emit/claims.py``); both tables are created by the one race-safe
``emit.claims.ensure_table``.
"""

from __future__ import annotations

import hashlib
import logging
import socket
import sqlite3
from collections.abc import Iterable
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, Protocol

from airflow_lineage_plus.emit.claims import ensure_table
from airflow_lineage_plus.private_dirs import ensure_dir

log = logging.getLogger(__name__)

TABLE = "lineage_plus_claims"


class Claims(Protocol):
    """Where claims are made."""

    def claim(self, keys: Iterable[str]) -> set[str]:
        """Claim ``keys``; return those this call claimed (the others were claimed before)."""

    def release(self, keys: Iterable[str]) -> None:
        """Give back claims whose alerts could not be sent, so a later attempt may send them."""


def digest(key: str) -> str:
    """The stored form of a key: fixed length whatever the dataset names in it."""
    return hashlib.sha256(key.encode()).hexdigest()


def _who() -> str:
    return socket.gethostname()[:200]


class MetadataClaims:
    """Claims in Airflow's metadata database (shared by every process and host that uses it)."""

    def __init__(self, engine: Any) -> None:
        from sqlalchemy import Column, DateTime, MetaData, String, Table

        self.engine = engine
        self.table = Table(
            TABLE,
            MetaData(),
            Column("claim_key", String(64), primary_key=True),
            Column("description", String(512)),
            Column("claimed_by", String(200)),
            Column("claimed_at", DateTime(timezone=True)),
        )
        ensure_table(engine, self.table)  # another process creating it at the same moment is no error

    def claim(self, keys: Iterable[str]) -> set[str]:
        from sqlalchemy.exc import IntegrityError

        claimed = set()
        for key in keys:
            row = {
                "claim_key": digest(key),
                "description": key[:512],
                "claimed_by": _who(),
                "claimed_at": datetime.now(timezone.utc),
            }
            try:
                with self.engine.begin() as connection:
                    connection.execute(self.table.insert().values(**row))
            except IntegrityError:
                continue
            claimed.add(key)
        return claimed

    def release(self, keys: Iterable[str]) -> None:
        with self.engine.begin() as connection:
            for key in keys:
                connection.execute(self.table.delete().where(self.table.c.claim_key == digest(key)))


class FileClaims:
    """Claims in a SQLite file: one host only (the fallback when the metadata database is out of reach)."""

    def __init__(self, path: Path) -> None:
        self.path = path
        ensure_dir(path.parent)
        with self._connect() as connection:
            connection.execute(
                f"CREATE TABLE IF NOT EXISTS {TABLE} (claim_key TEXT PRIMARY KEY, description TEXT, "
                "claimed_by TEXT, claimed_at TEXT)"
            )

    def _connect(self) -> sqlite3.Connection:
        return sqlite3.connect(self.path, timeout=5)

    def claim(self, keys: Iterable[str]) -> set[str]:
        claimed = set()
        now = datetime.now(timezone.utc).isoformat()
        with self._connect() as connection:
            for key in keys:
                cursor = connection.execute(
                    f"INSERT OR IGNORE INTO {TABLE} VALUES (?, ?, ?, ?)",
                    (digest(key), key[:512], _who(), now),
                )
                if cursor.rowcount == 1:
                    claimed.add(key)
        return claimed

    def release(self, keys: Iterable[str]) -> None:
        with self._connect() as connection:
            connection.executemany(f"DELETE FROM {TABLE} WHERE claim_key = ?", [(digest(k),) for k in keys])


def open_claims() -> Claims:
    """Claims in the metadata database, else (logged once) in the host's SQLite file."""
    from airflow_lineage_plus import _compat, conf
    from airflow_lineage_plus.containment import report

    try:
        return MetadataClaims(_compat.metadata_engine())
    except Exception as exc:
        report("deduplication of alerts across hosts (claims fall back to this host's file)", exc)
        return FileClaims(conf.alert_claims_path())
