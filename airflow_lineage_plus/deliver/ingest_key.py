"""The ingest key: the credential of the OpenLineage endpoint, kept in an Airflow connection.

The key is the password of the connection ``[lineage_plus] collector_connection_id`` (default
``lineage_plus_collector``), read through Airflow: its secrets backends, ``AIRFLOW_CONN_*`` variables, the
metadata database, or the Task SDK inside a task. The API server compares what a producer presents with
it (:mod:`airflow_lineage_plus.ui.ingest_auth`); the transport presents it
(:mod:`airflow_lineage_plus.deliver.collector_writer`). It is never put in an event.
"""

from __future__ import annotations

import threading
import time

from airflow_lineage_plus import _compat, conf

#: seconds a key read from the connection is reused before it is read again
KEY_TTL = 30.0

_lock = threading.Lock()
_cache: dict[str, tuple[float, str | None]] = {}


def cached_ingest_key() -> tuple[bool, str | None]:
    """(True, the key) when :func:`ingest_key` read it less than :data:`KEY_TTL` seconds ago, else
    (False, None): a caller on an event loop answers from here without a thread."""
    conn_id = conf.collector_connection_id()
    if not conn_id:
        return True, None
    with _lock:
        cached = _cache.get(conn_id)
    if cached is not None and time.monotonic() - cached[0] < KEY_TTL:
        return True, cached[1]
    return False, None


def ingest_key() -> str | None:
    """The ingest key, re-read every :data:`KEY_TTL` seconds; None: no connection, or no password. Raises
    what Airflow raises when the connection cannot be read (a secrets backend down): nothing is cached."""
    conn_id = conf.collector_connection_id()
    if not conn_id:
        return None
    now = time.monotonic()
    with _lock:
        cached = _cache.get(conn_id)
        if cached is not None and now - cached[0] < KEY_TTL:
            return cached[1]
    key = _compat.connection_password(conn_id)
    with _lock:
        _cache[conn_id] = (now, key)
    return key
