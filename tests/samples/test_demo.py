"""The README's first command, ``python -m demo``, end to end: the pipelines, the report, the Lineage view it
serves (logged into as the demo prints), and SIGTERM (a process manager) ending everything it started; Ctrl-C,
SIGTERM and SIGHUP each ending what it started in the middle of a step."""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import time
import urllib.parse
import urllib.request
from pathlib import Path
from typing import Any

import psutil
import pytest

from tests.support.harness import REPO, read_events
from tests.support.openlineage_spec import validate_events

pytestmark = [pytest.mark.airflow, pytest.mark.minutes(4)]


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    return Path(f"/proc/{pid}").exists() and "Z" not in Path(f"/proc/{pid}/stat").read_text().split()[2]


def _sigint_as_at_a_terminal() -> None:
    signal.signal(signal.SIGINT, signal.SIG_DFL)


def _serving_demo(home: Path, port: int) -> tuple[subprocess.Popen[str], list[str]]:
    """Start ``python -m demo`` and read its output until it says the UI is up (or it ends)."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("AIRFLOW", "OPENLINEAGE"))}
    proc = subprocess.Popen(
        [sys.executable, "-m", "demo", "--port", str(port), "--home", str(home)],
        cwd=REPO,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        start_new_session=True,
        # Ctrl-C as at a terminal: a shell's background job (CI's, maybe) starts with SIGINT ignored, and
        # a Python started with it ignored never raises KeyboardInterrupt
        preexec_fn=_sigint_as_at_a_terminal,
    )
    lines: list[str] = []
    assert proc.stdout is not None
    for line in proc.stdout:
        lines.append(line.rstrip("\n"))
        if line.startswith("Press Ctrl-C to stop"):
            break
    return proc, lines


def _get(url: str, token: str) -> Any:
    request = urllib.request.Request(url, headers={"Authorization": f"Bearer {token}"})
    with urllib.request.urlopen(request, timeout=30) as response:
        return json.loads(response.read())


@pytest.mark.timeout(1200)
def test_demo_runs_the_pipelines_reports_the_failed_upstream_job_and_serves_the_lineage_view(
    tmp_path: Path,
) -> None:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    proc, lines = _serving_demo(tmp_path / "home", port)
    try:
        out = "\n".join(lines)
        assert lines[-1].startswith("Press Ctrl-C to stop"), out[-4000:]
        steps = [line for line in lines if line.startswith("[")]
        assert [s.split("]")[0] for s in steps] == [f"[{i}/12" for i in range(1, 13)]
        # the two days that change on purpose, each with what-changed of the contact dimension
        short, new_sql = out.split("what-changed --namespace")[1:3]
        assert "Most likely cause for " in short.splitlines()[1]
        assert "dataset s3://raw-data-lake:crm/contacts: 42 rows (usually 60, -30 %)" in short.splitlines()[1]
        assert "crm_contacts_ingestion.load_stg_contacts: its SQL changed" in new_sql.splitlines()[1]
        assert "the dbt model fct_daily_orders fails on purpose) ... failed, as intended" in out
        assert "fct_daily_orders=skipped" in out and "load_stg_orders=skipped" in out
        assert "fct_daily_orders=failed" in out
        failed_section = out.split("failed-upstream --namespace", 1)[1].split("$ lineage-plus", 1)[0]
        assert "analytics.marts.shop.fct_daily_orders.build.run  FAILED" in failed_section
        assert "fail_stage='fct_daily_orders'" in failed_section
        assert "ran by: JOB demo-airflow / dbt-run-shop  FAILED" in failed_section
        assert "JOB demo-airflow / ecommerce_orders.fct_daily_orders  FAILED" in failed_section
        # every event the demo's runs wrote is valid (the four sample runs: nine jobs, dbt's included)
        demo_events = read_events(tmp_path / "home" / "lineage" / "events.jsonl")
        assert validate_events(demo_events) == len(demo_events) > 0

        # The UI it serves: log in as the printed user, find the mart, see its failed upstream job.
        (login,) = [line.split(":", 1)[1].split("/") for line in lines if line.startswith("Login:")]
        user, password = (part.strip() for part in login)
        base = f"http://localhost:{port}"
        request = urllib.request.Request(
            f"{base}/auth/token",
            data=json.dumps({"username": user, "password": password}).encode(),
            headers={"Content-Type": "application/json"},
        )
        with urllib.request.urlopen(request, timeout=30) as response:
            assert response.status == 201
            token = json.loads(response.read())["access_token"]
        (mart,) = [
            n
            for n in _get(f"{base}/lineage-plus/api/search?q=fct_daily_orders", token)["results"]
            if n["type"] == "DATASET"
        ]
        node = urllib.parse.quote(mart["id"], safe="")
        graph = _get(f"{base}/lineage-plus/api/lineage?node={node}&depth=5&direction=upstream", token)
        assert [n["name"] for n in graph["failedUpstream"]] == [
            "analytics.marts.shop.fct_daily_orders.build.run"
        ]
    finally:
        if proc.poll() is None:
            os.kill(proc.pid, signal.SIGTERM)  # a process manager stopping it (it once left the api-server)
        remaining = _ended(proc)
    assert proc.returncode == 128 + signal.SIGTERM, remaining[-3000:]
    assert "stopping (SIGTERM) ..." in remaining
    with socket.socket() as probe:
        assert probe.connect_ex(("127.0.0.1", port)) != 0, "the api-server still answers after SIGTERM"


def _ended(proc: subprocess.Popen[str]) -> str:
    """The rest of the demo's output once it ended; on a hang, what it started is killed and it fails."""
    try:
        remaining, _ = proc.communicate(timeout=120)
    except subprocess.TimeoutExpired:  # leave nothing running: the demo and what it started
        for child in psutil.Process(proc.pid).children(recursive=True):
            child.kill()
        proc.kill()
        raise
    return remaining


@pytest.mark.timeout(300)
@pytest.mark.parametrize(
    ("sig", "code", "said"),
    [
        (signal.SIGINT, 130, "stopping ..."),
        (signal.SIGTERM, 143, "stopping (SIGTERM) ..."),
        (signal.SIGHUP, 129, "stopping (SIGHUP) ..."),
    ],
)
def test_ctrl_c_sigterm_and_sighup_stop_the_command_the_demo_is_running(
    tmp_path: Path, sig: signal.Signals, code: int, said: str
) -> None:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("AIRFLOW", "OPENLINEAGE"))}
    proc = subprocess.Popen(
        [sys.executable, "-m", "demo", "--no-serve", "--home", str(tmp_path / "home")],
        cwd=REPO,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        start_new_session=True,
        preexec_fn=_sigint_as_at_a_terminal,
    )
    deadline, started = time.monotonic() + 120, []
    while time.monotonic() < deadline and not started and proc.poll() is None:
        started = psutil.Process(proc.pid).children()  # step 1's `airflow db migrate`
        time.sleep(0.05)
    assert started, "the demo started no command"
    os.kill(proc.pid, sig)
    remaining = _ended(proc)
    assert proc.returncode == code, remaining[-3000:]
    assert said in remaining
    assert not any(_alive(child.pid) for child in started), "a command the demo started still runs"


def _process_group() -> Any:
    sys.path.insert(0, str(REPO))
    try:
        from demo.processes import ProcessGroup
    finally:
        sys.path.remove(str(REPO))
    return ProcessGroup()


def test_stopping_the_demo_ends_each_process_group_it_started(tmp_path: Path) -> None:
    group = _process_group()
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


def test_stopping_a_command_whose_leader_has_ended_still_ends_the_rest_of_its_group(tmp_path: Path) -> None:
    group = _process_group()
    pids = tmp_path / "pids"
    proc = group.start(["bash", "-c", f"sleep 300 & echo $! > {pids}"], dict(os.environ), tmp_path / "log")
    assert proc.wait(timeout=10) == 0
    left = int(pids.read_text())
    assert _alive(left)
    group.stop(proc, grace=1.0)
    assert not _alive(left)


def test_the_demo_writes_through_the_recommended_event_log_transport(tmp_path: Path) -> None:
    sys.path.insert(0, str(REPO))
    try:
        from demo.environment import DemoHome
    finally:
        sys.path.remove(str(REPO))
    home = DemoHome(tmp_path)
    transport = json.loads(home.env(s3_connection="{}")["AIRFLOW__OPENLINEAGE__TRANSPORT"])
    assert transport == {
        "type": "airflow_lineage_plus.transport.EventLogTransport",
        "log_file_path": str(home.event_log),
    }
