"""What the endpoint's writer process does with a group of requests: one transaction, and one request that
breaks the store's write cannot refuse the others."""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path

import pytest

from airflow_lineage_plus.store import RawEvent, sqlite_url
from airflow_lineage_plus.store.database import LineageStore
from airflow_lineage_plus.ui import ingest_work
from tests.support import openlineage_spec

pytestmark = pytest.mark.timeout(60)


def _event(name: str) -> bytes:
    event = {
        "eventType": "COMPLETE",
        "eventTime": "2026-12-06T18:00:00.000Z",
        "run": {"runId": "01938f4e-0000-7000-8000-000000000001"},
        "job": {"namespace": "ingest-work", "name": name},
        "producer": "https://example.com/ingest-work-test",
        "schemaURL": "https://openlineage.io/spec/2-0-2/OpenLineage.json#/$defs/RunEvent",
    }
    assert openlineage_spec.validate_events([event]) == 1
    return json.dumps(event).encode()


class _BreakingStore(LineageStore):
    """A real store whose write fails (not as the store being unavailable) for any event of job
    ``poison``, the way a fold bug would; it counts its transactions."""

    transactions = 0

    def add_all(self, events: Sequence[RawEvent]) -> list[bool]:
        self.transactions += 1
        if any(event.job_name == "poison" for event in events):
            raise RuntimeError("a fold bug")
        return super().add_all(events)


class _Holder(ingest_work.StoreHolder):
    def __init__(self, store: LineageStore) -> None:
        super().__init__()
        self.store = store

    def get(self) -> LineageStore:
        return self.store


def test_a_group_of_requests_is_stored_in_one_transaction(tmp_path: Path) -> None:
    store = _BreakingStore(sqlite_url(tmp_path / "store.db"))
    try:
        requests = [(_event("a"), False), (b"[" + _event("b") + b"," + _event("c") + b"]", True)]
        answers = ingest_work.answer(_Holder(store), requests)
        assert [answer["stored"] for answer in answers] == [1, 2]
        assert store.transactions == 1 and store.count() == 3
    finally:
        store.close()


def test_a_request_that_breaks_the_write_is_answered_unavailable_and_the_others_are_stored(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    store = _BreakingStore(sqlite_url(tmp_path / "store.db"))
    try:
        requests = [(_event("a"), False), (_event("poison"), False), (_event("b"), False)]
        answers = ingest_work.answer(_Holder(store), requests)
        assert answers[0] == answers[2] == {"received": 1, "stored": 1, "duplicates": 0, "failed": []}
        assert answers[1] == ingest_work.UNAVAILABLE
        assert store.count() == 2
        assert store.transactions == 4  # the group, then each request alone
        assert caplog.text.count("could not store events") == 1
    finally:
        store.close()
