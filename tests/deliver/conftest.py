"""The lineage store on both engines (for the transport's writes to it), and the secrets maskers.

Each delivery test starts with Airflow's secrets maskers empty and leaves them as it found them.

The maskers are per process and tests share a worker: a connection an earlier test loaded (password
``secret``) would otherwise mask words in this test's expected text, and a secret this test registers
would leak into the next one's.
"""

from __future__ import annotations

import importlib
from collections.abc import Iterator

import pytest

from airflow_lineage_plus import _compat
from tests.support.store_engines import postgres_server, store_url  # noqa: F401


@pytest.fixture(autouse=True)
def empty_secrets_maskers() -> Iterator[None]:
    for name in _compat._MASKER_MODULES:  # loaded now, so what the test registers is undone after it
        try:
            importlib.import_module(name)
        except ImportError:  # the Python 3.10 run has no Airflow
            continue
    maskers = _compat._secrets_maskers()
    saved = [(masker.patterns, masker.replacer) for masker in maskers]
    handed_in = set(_compat._handed_in)
    for masker in maskers:
        masker.reset_masker()
    _compat._handed_in.clear()
    yield
    for masker, (patterns, replacer) in zip(maskers, saved, strict=True):
        masker.patterns, masker.replacer = patterns, replacer
    _compat._handed_in.clear()
    _compat._handed_in.update(handed_in)
