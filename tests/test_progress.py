"""Progress of long work: a rich bar (count, total, time remaining) on a terminal's stderr, nothing in a
pipe, a file or CI, and the answer on stdout the same either way. The terminal is a real pseudo-terminal
(``pty``), the command a real ``lineage-plus replay`` against the Marquez stand-in."""

from __future__ import annotations

import json
import os
import pty
import re
import select
import subprocess
import sys
from datetime import datetime, timedelta, timezone
from pathlib import Path

import pytest
from openlineage.client.event_v2 import RunState

from airflow_lineage_plus.deliver.serialize import dumps
from airflow_lineage_plus.progress import progress
from tests.support.fake_marquez import FakeMarquez
from tests.support.reliability_events import run_event

T0 = datetime(2024, 5, 1, 10, 0, tzinfo=timezone.utc)
COUNTING = """
import time
from airflow_lineage_plus.progress import progress
with progress("counting things", total=40, unit="events") as bar:
    for _ in range(40):
        time.sleep(0.01)
        bar.advance()
print("done", bar.shown)
"""
ANSI = re.compile(r"\x1b\[[0-9;?]*[A-Za-z]")


def _env(**extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in ("CI", "TERM", "NO_COLOR", "FORCE_COLOR")}
    return {**env, "TERM": "xterm-256color", "COLUMNS": "120", **extra}


def _on_a_terminal(argv: list[str], env: dict[str, str]) -> tuple[int, str, str]:
    """(exit status, stdout through a pipe, what stderr's terminal showed)."""
    main, child = pty.openpty()
    proc = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=child, env=env, text=True)
    os.close(child)
    seen = b""
    while True:
        ready, _, _ = select.select([main], [], [], 60)
        if not ready:
            proc.kill()
            pytest.fail("the command hung")
        try:
            chunk = os.read(main, 65536)
        except OSError:  # the child closed the terminal
            break
        if not chunk:
            break
        seen += chunk
    os.close(main)
    out = proc.stdout.read() if proc.stdout else ""
    return proc.wait(timeout=60), out, seen.decode(errors="replace")


def test_on_a_terminal_the_bar_shows_the_count_the_total_and_the_time_remaining() -> None:
    code, out, terminal = _on_a_terminal([sys.executable, "-c", COUNTING], _env())
    assert code == 0 and out == "done True\n"
    shown = ANSI.sub("", terminal)
    assert "counting things" in shown and re.search(r"\b\d+/40 events eta", shown), shown
    assert ANSI.search(terminal)  # drawn in place, as a bar


def test_in_a_pipe_or_in_ci_nothing_is_shown() -> None:
    piped = subprocess.run(
        [sys.executable, "-c", COUNTING], capture_output=True, text=True, env=_env(), timeout=60
    )
    assert (piped.returncode, piped.stdout, piped.stderr) == (0, "done False\n", "")
    for quiet in ({"CI": "true"}, {"TERM": "dumb"}):
        code, out, terminal = _on_a_terminal([sys.executable, "-c", COUNTING], _env(**quiet))
        assert (code, out, terminal) == (0, "done False\n", ""), quiet


def _thirty_events(log: Path) -> Path:
    """A log of 30 completed task runs at ``T0``."""
    events = [
        run_event(
            f"dag.t{i}", run_id=f"01a22674-e06b-7252-84d0-26850cfac{i:03x}", state=RunState.COMPLETE, when=T0
        )
        for i in range(30)
    ]
    log.write_text("".join(dumps(e).decode() + "\n" for e in events))
    return log


def test_a_unit_the_bar_cannot_show_is_refused() -> None:
    with pytest.raises(ValueError, match="unit"), progress("x", unit="parsecs"):
        pass


def test_replay_shows_its_progress_on_a_terminal_and_prints_the_same_answer_as_in_a_pipe(
    tmp_path: Path,
) -> None:
    log = _thirty_events(tmp_path / "events.jsonl")
    with FakeMarquez() as marquez:
        argv = [
            str(Path(sys.executable).parent / "lineage-plus"),
            "--marquez",
            marquez.url,
            "--api-key",  # with --api-key and --timeout, replay reads no Airflow configuration (faster)
            "k",
            "--timeout",
            "5",
            "replay",
            "--event-log",
            str(log),
            "--since",
            (T0 - timedelta(minutes=1)).isoformat(),
            "--dry-run",
            "--format",
            "json",
        ]
        code, out, terminal = _on_a_terminal(argv, _env())
        piped = subprocess.run(argv, capture_output=True, text=True, env=_env(), timeout=120)
    assert code == piped.returncode == 0
    assert "replaying to Marquez" in ANSI.sub("", terminal) and "/30 events" in ANSI.sub("", terminal)
    assert piped.stderr == ""
    assert json.loads(out)["sent"] == json.loads(piped.stdout)["sent"] and len(json.loads(out)["sent"]) == 30


def test_import_shows_the_bytes_read_on_a_terminal_and_prints_the_same_answer_as_in_a_pipe(
    tmp_path: Path,
) -> None:
    log = _thirty_events(tmp_path / "events.jsonl")
    script = str(Path(sys.executable).parent / "lineage-plus")
    env = _env(AIRFLOW_HOME=str(tmp_path / "home"))
    terminal_store, piped_store = (f"sqlite:///{tmp_path / name}" for name in ("tty.db", "pipe.db"))
    code, out, terminal = _on_a_terminal([script, "import", str(log), "--store", terminal_store], env)
    piped = subprocess.run(
        [script, "import", str(log), "--store", piped_store],
        capture_output=True,
        text=True,
        env=env,
        timeout=120,
    )
    assert code == piped.returncode == 0
    shown = ANSI.sub("", terminal)
    size = f"{log.stat().st_size / 1000:.1f}"  # rich shows bytes in kB
    assert "importing events.jsonl" in shown and f"0.0/{size} kB" in shown and f"{size}/{size} kB" in shown, (
        shown
    )
    # nothing of ours in a pipe (Airflow 3.1 logs its alembic plugins on stderr when its settings load)
    assert "importing" not in piped.stderr and "lineage-plus" not in piped.stderr, piped.stderr
    assert out.replace(terminal_store, "URL") == piped.stdout.replace(piped_store, "URL")
    assert "imported 30 new events" in out
