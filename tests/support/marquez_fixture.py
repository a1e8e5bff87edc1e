from __future__ import annotations

from collections.abc import Iterator

import pytest

from tests.support.fake_marquez import FakeMarquez

API_KEY = "test-key"


@pytest.fixture
def fake_marquez() -> Iterator[FakeMarquez]:
    with FakeMarquez(api_key=API_KEY) as server:
        yield server
