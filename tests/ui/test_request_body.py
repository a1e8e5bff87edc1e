"""Inflating a gzip request body never holds more than the cap, whatever the body inflates to."""

from __future__ import annotations

import gzip
import tracemalloc

import pytest

from airflow_lineage_plus.exceptions import BadEventError, BodyTooLargeError
from airflow_lineage_plus.ui.request_body import inflate


def test_a_body_within_the_cap_inflates_exactly() -> None:
    data = b'{"a": 1}' * 100
    assert inflate(gzip.compress(data), len(data)) == data


def test_a_gzip_bomb_is_refused_without_inflating_it() -> None:
    bomb = gzip.compress(b"\0" * (256 * 2**20))  # 256 MiB inflated, ~250 KiB sent
    tracemalloc.start()
    try:
        with pytest.raises(BodyTooLargeError):
            inflate(bomb, 2**20)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert peak < 8 * 2**20


def test_a_body_that_is_not_gzip_is_a_bad_event() -> None:
    with pytest.raises(BadEventError, match="not"):
        inflate(b"{}", 1024)
