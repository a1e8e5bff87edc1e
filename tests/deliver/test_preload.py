"""The package's transport is imported in the task process when it is the configured one, and only then."""

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

OURS = {"type": "airflow_lineage_plus.transport.EventLogTransport", "log_file_path": "/tmp/unused.jsonl"}


def _preload(transport: dict[str, object], code: str = PRELOAD) -> list[str]:
    env = {**os.environ, "AIRFLOW__OPENLINEAGE__TRANSPORT": json.dumps(transport)}
    done = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=100)
    assert done.returncode == 0, done.stderr[-3000:]
    return done.stdout.split()


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
