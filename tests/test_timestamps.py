"""One ISO 8601 parser for events and the command line: the same times on every supported Python
(this file runs on Python 3.10 in CI too, where ``fromisoformat`` rejects ``Z``)."""

from __future__ import annotations

from datetime import datetime, timedelta, timezone

import pytest

from airflow_lineage_plus.deliver.replay import parse_time
from airflow_lineage_plus.timestamps import parse_iso, to_micros

UTC = timezone.utc


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("2024-05-01T10:00:00Z", datetime(2024, 5, 1, 10, tzinfo=UTC)),
        ("2024-05-01T10:00:00z", datetime(2024, 5, 1, 10, tzinfo=UTC)),
        ("2024-05-01T10:00:00.123456789Z", datetime(2024, 5, 1, 10, 0, 0, 123456, tzinfo=UTC)),
        ("2024-05-01T10:00:00.1Z", datetime(2024, 5, 1, 10, 0, 0, 100000, tzinfo=UTC)),
        ("2024-05-01T12:00:00+0200", datetime(2024, 5, 1, 10, tzinfo=UTC)),
        ("2024-05-01T12:00:00.5+02:00", datetime(2024, 5, 1, 10, 0, 0, 500000, tzinfo=UTC)),
        ("2024-05-01T10:00:00", datetime(2024, 5, 1, 10, tzinfo=UTC)),
        ("2024-05-01", datetime(2024, 5, 1, tzinfo=UTC)),
        (" 2024-05-01T10:00Z ", datetime(2024, 5, 1, 10, tzinfo=UTC)),
    ],
)
def test_producer_and_marquez_time_forms_parse_to_the_same_instant(text: str, expected: datetime) -> None:
    moment = parse_iso(text)
    assert moment == expected
    assert moment.utcoffset() is not None


@pytest.mark.parametrize(
    "text", ["", "yesterday", "2024-13-01T00:00:00Z", "2024-05-01T10:00:00+25:00", "1" * 100]
)
def test_what_is_not_an_iso_time_is_a_value_error(text: str) -> None:
    with pytest.raises(ValueError):
        parse_iso(text)


def test_the_graph_orders_a_z_time_and_an_offset_time_of_the_same_instant_alike() -> None:
    z = to_micros("2024-05-01T10:00:00.250Z")
    assert z == to_micros("2024-05-01T12:00:00.250+02:00")
    assert to_micros("2024-05-01T10:00:00.251Z") - z == 1000


def test_replay_windows_accept_z_times() -> None:
    assert parse_time("2024-05-01T10:00Z") + timedelta(hours=2) == parse_time("2024-05-01T12:00:00+00:00")
