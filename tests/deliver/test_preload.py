"""The package's transport is imported and prepared in the task process when it is the configured one, and
only then."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

pytestmark = pytest.mark.timeout(120)

#: a new process with Airflow's configuration: preloads, then prints whether it did and whether the
#: transport's module is imported
PRELOAD = """
import sys
from airflow_lineage_plus.deliver.preload import TRANSPORT_MODULE, preload_transport
before = TRANSPORT_MODULE in sys.modules
print(before, preload_transport(), TRANSPORT_MODULE in sys.modules)
"""

#: the listener's hook as Airflow calls it when a task starts (a task instance without an operator object:
#: the self-skip watch has nothing to wrap)
HOOK = """
import sys
from airflow_lineage_plus.deliver.preload import TRANSPORT_MODULE
from airflow_lineage_plus.emit import skip_listener
before = TRANSPORT_MODULE in sys.modules
skip_listener.on_task_instance_running(previous_state=None, task_instance=None)
print(before, TRANSPORT_MODULE in sys.modules)
"""

#: preloads, then prints the engines the fold statements are compiled for, how many redaction scanners
#: an event's check still had to compile, and the ingest key a forked process would find already read
PREPARED = """
from airflow_lineage_plus.deliver import redaction
from airflow_lineage_plus.deliver.ingest_key import cached_ingest_key
from airflow_lineage_plus.deliver.event_budget import PROBES
from airflow_lineage_plus.deliver.preload import preload_transport
from airflow_lineage_plus.store import fold
preload_transport()
misses = redaction._scanner.cache_info().misses
redaction.scanner(PROBES)
redaction.scanner()
engines = ",".join(sorted(key[0] for key in fold._COMPILED)) or "-"
fresh, key = cached_ingest_key()
print(engines, redaction._scanner.cache_info().misses - misses, key if fresh else "-")
"""

INGEST_KEY = "preload-ingest-key-" + "k" * 32

OURS = {"type": "airflow_lineage_plus.transport.EventLogTransport", "log_file_path": "/tmp/unused.jsonl"}


def _preload(transport: dict[str, object], code: str = PRELOAD) -> list[str]:
    env = {
        **os.environ,
        "AIRFLOW__OPENLINEAGE__TRANSPORT": json.dumps(transport),
        "AIRFLOW_CONN_LINEAGE_PLUS_COLLECTOR": json.dumps({"conn_type": "generic", "password": INGEST_KEY}),
    }
    done = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=100)
    assert done.returncode == 0, done.stderr[-3000:]
    return done.stdout.splitlines()[-1].split()  # the last line: Airflow may log to stdout before it


@pytest.mark.parametrize(
    "transport",
    [
        OURS,
        {**OURS, "type": "lineage_plus_event_log"},
        {"type": "composite", "transports": [{"type": "console"}, OURS]},
    ],
    ids=["import path", "short name", "inside a composite"],
)
def test_the_configured_package_transport_is_imported_once_the_task_starts(
    transport: dict[str, object],
) -> None:
    assert _preload(transport) == ["False", "True", "True"]


def test_another_transport_leaves_the_package_transport_unimported() -> None:
    assert _preload({"type": "console"}) == ["False", "False", "False"]


def test_the_listeners_task_start_hook_preloads_the_transport() -> None:
    assert _preload(OURS, HOOK) == ["False", "True"]


@pytest.mark.parametrize(
    ("destination", "compiled", "key"),
    [
        ({}, "sqlite", "-"),
        ({"store_url": "postgresql+psycopg://lineage@db.example/lineage"}, "postgresql", "-"),
        ({"collector_url": "http://api-server.example:8080"}, "-", INGEST_KEY),
        ({"store_url": "none"}, "-", "-"),
    ],
    ids=["default SQLite store", "PostgreSQL store", "collector", "log only"],
)
def test_the_preload_compiles_the_scanners_and_the_store_statements_or_reads_the_collectors_key(
    destination: dict[str, str], compiled: str, key: str
) -> None:
    assert _preload({**OURS, **destination}, PREPARED) == [compiled, "0", key]


def test_the_warm_up_event_is_a_valid_event_in_which_redaction_finds_nothing() -> None:
    """It runs the automata over what an ordinary event holds: a valid event, and none of it a secret."""
    from airflow_lineage_plus.deliver.event_budget import PROBES
    from airflow_lineage_plus.deliver.redaction import redact_json
    from airflow_lineage_plus.deliver.warm_up import SAMPLE_EVENT
    from tests.support.openlineage_spec import validate_event

    validate_event(SAMPLE_EVENT)
    sample = json.dumps(SAMPLE_EVENT, separators=(",", ":")).encode()
    for probes in (PROBES, ()):
        done = redact_json(sample, probes)
        assert (done.text, done.masked, done.withheld) == (sample, 0, 0)
