"""Fixtures of the dataset-identity tests."""

from __future__ import annotations

import pytest

from tests.datasets.dataset_support import CONNECTIONS


@pytest.fixture
def connections(monkeypatch: pytest.MonkeyPatch) -> None:
    for key, value in CONNECTIONS.items():
        monkeypatch.setenv(key, value)
