"""The hand-off waits for the commit that ends a DAG run: real SQLAlchemy sessions on a SQLite file.

The DAG-run hooks run inside the scheduler's transaction; the records' work must start only once that
transaction commits (so a session of our own sees what the scheduler set), never on a rollback, and not
when a savepoint inside it is released.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from sqlalchemy import create_engine, text
from sqlalchemy.orm import Session

from airflow_lineage_plus.emit.handoff import after_commit


@pytest.fixture
def session(tmp_path: Path) -> Iterator[Session]:
    engine = create_engine(f"sqlite:///{tmp_path / 'metadata.db'}")
    with Session(engine) as opened:
        opened.execute(text("CREATE TABLE dag_run (state TEXT)"))
        opened.commit()
        yield opened
    engine.dispose()


def test_work_noted_in_a_transaction_starts_only_when_it_commits(session: Session) -> None:
    calls: list[str] = []
    session.execute(text("INSERT INTO dag_run VALUES ('success')"))
    after_commit(session, lambda: calls.append("first"))
    after_commit(session, lambda: calls.append("second"))
    session.flush()
    assert calls == []
    session.commit()
    assert calls == ["first", "second"]
    session.execute(text("SELECT 1"))
    session.commit()  # a later commit does not run them again
    assert calls == ["first", "second"]


def test_work_noted_in_a_transaction_that_rolls_back_or_closes_never_starts(session: Session) -> None:
    calls: list[str] = []
    session.execute(text("INSERT INTO dag_run VALUES ('success')"))
    after_commit(session, lambda: calls.append("rolled back"))
    session.rollback()
    session.execute(text("INSERT INTO dag_run VALUES ('success')"))
    after_commit(session, lambda: calls.append("closed"))
    session.close()
    session.execute(text("SELECT 1"))
    session.commit()
    assert calls == []


def test_releasing_a_savepoint_is_not_the_commit(session: Session) -> None:
    calls: list[str] = []
    session.execute(text("SELECT 1"))
    with session.begin_nested():
        session.execute(text("INSERT INTO dag_run VALUES ('success')"))
        after_commit(session, lambda: calls.append("outer commit"))
    assert calls == []
    session.commit()
    assert calls == ["outer commit"]


def test_work_noted_outside_any_transaction_starts_at_once(session: Session) -> None:
    calls: list[str] = []
    after_commit(session, lambda: calls.append("no transaction"))
    after_commit(None, lambda: calls.append("no session"))
    assert calls == ["no transaction", "no session"]


def test_a_failing_callback_never_reaches_the_committing_caller(session: Session) -> None:
    def broken() -> None:
        raise RuntimeError("pool gone")

    session.execute(text("INSERT INTO dag_run VALUES ('success')"))
    after_commit(session, broken)
    session.commit()  # does not raise
    assert session.execute(text("SELECT count(*) FROM dag_run")).scalar() == 1
