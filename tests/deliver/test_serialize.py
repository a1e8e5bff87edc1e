"""Events as JSON (``deliver/serialize.py``): numpy's values serialised, numpy never imported for it."""

from __future__ import annotations

import subprocess
import sys

import orjson
import pytest

from airflow_lineage_plus.deliver.serialize import dumps
from tests.support.reliability_events import run_event

pytestmark = pytest.mark.timeout(120)

#: a new process, as the provider forks one for each event: Airflow's task side and the client loaded,
#: then one event serialised; prints whether numpy was imported before and after
FRESH = """
import sys
import airflow.sdk, openlineage.client
from airflow_lineage_plus.deliver.serialize import dumps
from tests.support.reliability_events import run_event
before = "numpy" in sys.modules
dumps(run_event(padding=10, columns=3, sql="SELECT 1"))
print(before, "numpy" in sys.modules)
"""


def test_serialising_an_event_in_a_process_without_numpy_does_not_import_it() -> None:
    done = subprocess.run([sys.executable, "-c", FRESH], capture_output=True, text=True, timeout=100)
    assert done.returncode == 0, done.stderr[-3000:]
    assert done.stdout.split() == ["False", "False"]


def test_numpy_values_in_a_facet_are_serialised_as_numbers() -> None:
    import numpy

    event = run_event(padding=10, columns=3, sql="SELECT 1")
    event.run.facets["custom"] = {"rows": numpy.int64(12), "share": numpy.float64(0.5)}  # type: ignore[index]
    assert orjson.loads(dumps(event))["run"]["facets"]["custom"] == {"rows": 12, "share": 0.5}
