"""A real ``airflow api-server`` with the plugin, reading a growing event log: no memory creeping up over
many incremental refreshes, and no crash when the log is truncated in place while requests come in (a
memory-mapped read would die of SIGBUS there). The same code as ``benchmarks/api_server_memory.py``,
which gives the figures on a large log."""

from __future__ import annotations

import sys
from pathlib import Path

import psutil
import pytest

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO / "benchmarks"))

from api_server_memory import api_server, lineage, login, refreshes, truncate_under_load  # noqa: E402
from generate_events import generate  # noqa: E402

pytestmark = pytest.mark.airflow


def test_the_api_server_keeps_its_memory_over_200_refreshes_and_survives_the_log_truncated_under_load(
    airflow_db: Path, tmp_path: Path
) -> None:
    log = tmp_path / "events.jsonl"
    generate(log, events=5000, datasets=1000, jobs=200, seed=3)
    with api_server(log, tmp_path) as (base, pid):
        token = login(base)
        assert lineage(base, token)["nodes"]
        # 200 appends of one DAG run's events, re-sent: each refresh reads and folds them, the graph keeps
        # nothing new, so memory gained after the 20th is what refreshing leaves behind (gc.freeze pinned
        # ~95 MB in 20 refreshes); the benchmark appends new runs instead, for the figures
        samples = refreshes(base, token, pid, log, 200, tmp_path, new_runs=False)
        assert samples[-1] - samples[19] < 10, " ".join(f"{s:.1f}" for s in samples)
        outcome = truncate_under_load(base, token, log, tmp_path)
        assert psutil.pid_exists(pid) and psutil.Process(pid).status() != psutil.STATUS_ZOMBIE
        assert outcome["other"] == [] and outcome["ok"] > 0, outcome
        assert outcome["marker_upstream"] == ["job:rotated:marker"]  # the server reads the new log
