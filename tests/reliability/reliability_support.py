"""Fixtures of the reliability tests: timed real DAG runs and the graph tests' Marquez stand-in."""

from __future__ import annotations

import json
import re
import time
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Any

import pytest

from tests.support.harness import AirflowRunner, read_events
from tests.support.openlineage_spec import validate_events

HERE = Path(__file__).resolve().parent
DAGS = HERE / "dags"
FAULT_DAG = DAGS / "reliability_faults.py"

# The provider's emission limit, kept short so the tests are quick; our delivery deadline stays below it.
EXECUTION_TIMEOUT = 6.0
FORWARD_TIMEOUT = 1.5
# What docs/reliability.md allows on top of each bound for scheduling noise: at least this much (a run
# without any fault varied -0.8 to +2.3 s against a baseline run on a shared 2-core machine), more when
# the two baseline runs of this session differ by more (``Baseline.noise``).
SCHEDULING_NOISE = 3.0


def event_log_transport(**extra: Any) -> str:
    return json.dumps({"type": "airflow_lineage_plus.transport.EventLogTransport", **extra})


def forward_to(url: str) -> str:
    """Our transport: event log first, then live delivery over the client's http transport, no retries."""
    return event_log_transport(
        forward={"type": "http", "url": url, "retry": {"total": 0}},  # the client's 5 s timeout
        forward_timeout=FORWARD_TIMEOUT,
    )


WAREHOUSE_PASSWORD = "s3cr3t-Pa55word"
BASE_FAULT_ENV = {
    "AIRFLOW_CONN_WAREHOUSE": f"postgres://etl_user:{WAREHOUSE_PASSWORD}@warehouse.internal:5432/analytics",
    "AIRFLOW__OPENLINEAGE__EXECUTION_TIMEOUT": str(int(EXECUTION_TIMEOUT)),
    "AIRFLOW__OPENLINEAGE__TRANSPORT": event_log_transport(),
}


@dataclass
class TimedRun:
    returncode: int
    output: str
    events: list[dict[str, Any]]
    seconds: float
    log: Path

    def lines(self, *fragments: str) -> list[str]:
        """Output lines containing every fragment."""
        return [line for line in self.output.splitlines() if all(f in line for f in fragments)]


TimedRunner = Callable[..., TimedRun]


@pytest.fixture(scope="session")
def timed(
    request: pytest.FixtureRequest, airflow_db: Path, tmp_path_factory: pytest.TempPathFactory
) -> TimedRunner:
    """``timed(dag_id, env, wait=...)``: one real ``airflow dags test`` run, its wall time and events."""
    runner_class = AirflowRunner

    def run(dag_id: str, env: dict[str, str], wait: float = 30.0) -> TimedRun:
        workdir = tmp_path_factory.mktemp(dag_id)
        started = time.monotonic()
        # ``wait=0``: runs whose transport may write nothing (a backend down, a full disk)
        result = runner_class(workdir).run(
            FAULT_DAG,
            dag_id=dag_id,
            env={**BASE_FAULT_ENV, **env},
            wait_for_dag_event=0,
            expect_events=wait > 0,
        )
        seconds = time.monotonic() - started
        (workdir / "output.txt").write_text(result.output)  # for a look after a failure
        log = workdir / f"events-{dag_id}.jsonl"
        events = result.events
        deadline = time.monotonic() + wait
        while time.monotonic() < deadline and not any(e["job"]["name"] == dag_id for e in events):
            time.sleep(0.5)  # DAG-run events come from the provider's process pool
            events = read_events(log)
        validate_events(events)  # the broken-facet and API-misuse runs' events too, DAG-run events included
        return TimedRun(result.returncode, result.output, events, seconds, log)

    return run


_STAMP = re.compile(r"^(\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d+)Z")


def _at(run: TimedRun, *fragments: str) -> datetime:
    (line,) = run.lines(*fragments)[:1] or [""]
    match = _STAMP.match(line)
    assert match, f"no line with {fragments} in:\n{run.output[-3000:]}"
    return datetime.fromisoformat(match.group(1))


def lineage_seconds(run: TimedRun) -> float:
    """From the task starting to the DAG run being marked finished: where lineage work can add time."""
    return (_at(run, "DagRun Finished") - _at(run, "Task started")).total_seconds()


@dataclass
class Baseline:
    """Two runs without any fault, made in this session: the faster is the reference, and their spread
    says how noisy the machine is right now."""

    runs: tuple[TimedRun, TimedRun]
    seconds: float  # the reference lineage window
    spread: float  # how far apart the two windows are

    @property
    def noise(self) -> float:
        """The margin allowed on top of a bound: the documented 3 s, or twice this session's spread."""
        return max(SCHEDULING_NOISE, 2 * self.spread)


@pytest.fixture(scope="session")
def baseline(timed: TimedRunner) -> Baseline:
    runs = (timed("reliability_baseline", {}), timed("reliability_baseline", {}))
    for run in runs:
        assert run.returncode == 0, run.output[-3000:]
    windows = sorted(lineage_seconds(run) for run in runs)
    return Baseline(runs, windows[0], windows[1] - windows[0])
