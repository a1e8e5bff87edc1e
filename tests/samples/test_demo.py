"""The README's first command, ``python -m demo``, end to end (without serving the UI), and its clean-up."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from harness import REPO

pytestmark = pytest.mark.airflow


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    return Path(f"/proc/{pid}").exists() and "Z" not in Path(f"/proc/{pid}/stat").read_text().split()[2]


def test_demo_runs_the_pipelines_and_reports_the_failed_upstream_job_of_the_mart(tmp_path: Path) -> None:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("AIRFLOW", "OPENLINEAGE"))}
    proc = subprocess.run(
        [sys.executable, "-m", "demo", "--no-serve", "--home", str(tmp_path / "home")],
        cwd=REPO,
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
    )
    out = proc.stdout
    assert proc.returncode == 0, out[-4000:] + proc.stderr[-4000:]
    steps = [line for line in out.splitlines() if line.startswith("[")]
    assert [s.split("]")[0] for s in steps] == [f"[{i}/7" for i in range(1, 8)]
    assert "the dbt model fct_daily_orders fails on purpose) ... failed, as intended" in out
    assert "fct_daily_orders=skipped" in out and "load_stg_orders=skipped" in out
    assert "fct_daily_orders=failed" in out
    failed_section = out.split("failed-upstream --namespace", 1)[1].split("$ lineage-plus", 1)[0]
    assert "analytics.marts.shop.fct_daily_orders.build.run  FAILED" in failed_section
    assert "fail_stage='fct_daily_orders'" in failed_section
    assert "ran by: JOB demo-airflow / dbt-run-shop  FAILED" in failed_section
    assert "JOB demo-airflow / ecommerce_orders.fct_daily_orders  FAILED" in failed_section
    assert (tmp_path / "home" / "lineage" / "events.jsonl").stat().st_size > 0


def test_stopping_the_demo_ends_each_process_group_it_started(tmp_path: Path) -> None:
    sys.path.insert(0, str(REPO))
    try:
        from demo.processes import ProcessGroup
    finally:
        sys.path.remove(str(REPO))
    group = ProcessGroup()
    pids = tmp_path / "pids"
    # A command with a grandchild that ignores SIGTERM: stopping must end the whole group anyway.
    script = f"trap '' TERM; sleep 300 & echo $! > {pids}; echo $$ >> {pids}; wait"
    proc = group.start(["bash", "-c", script], dict(os.environ), tmp_path / "log")
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline and len(pids.read_text().split() if pids.exists() else []) < 2:
        time.sleep(0.05)
    started = [int(p) for p in pids.read_text().split()]
    assert all(_alive(p) for p in started)
    begin = time.monotonic()
    group.stop(proc, grace=1.0)
    assert not any(_alive(p) for p in started)
    assert time.monotonic() - begin < 5
    assert proc.returncode == -signal.SIGKILL
