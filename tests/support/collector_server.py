"""A real ``airflow api-server`` with the plugin whose OpenLineage endpoint writes a given lineage store
(``benchmarks/api_server_memory.api_server``: the simple auth manager, one worker), for the endpoint's
tests and the transport's."""

from __future__ import annotations

import os
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from airflow_lineage_plus.store.database import LineageStore

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "benchmarks"))

from api_server_memory import api_server, login


@contextmanager
def collector_server(
    workdir: Path, store_url: str, settings: dict[str, str]
) -> Iterator[tuple[str, str, LineageStore, int]]:
    """(base URL, a user's token, the store it writes, its pid: a session of its own) of a server up and
    answering; ``settings``: more environment (``AIRFLOW__LINEAGE_PLUS__COLLECTOR_*``, the ingest key's
    ``AIRFLOW_CONN_*``)."""
    env = {**os.environ, "AIRFLOW__LINEAGE_PLUS__STORE_URL": store_url, **settings}
    with api_server(workdir / "events.jsonl", workdir, env) as (base, pid):
        token = login(base)
        store = LineageStore(store_url)
        try:
            yield base, token, store, pid
        finally:
            store.close()
