"""Child processes of the demo, each in its own process group, all stopped on exit or Ctrl-C."""

from __future__ import annotations

import os
import signal
import subprocess
import time
from collections.abc import Sequence
from pathlib import Path


class ProcessGroup:
    """Starts commands in new sessions and ends exactly those (their whole process groups) when asked."""

    def __init__(self) -> None:
        self._running: list[subprocess.Popen[bytes]] = []

    def start(self, cmd: Sequence[str], env: dict[str, str], log: Path) -> subprocess.Popen[bytes]:
        log.parent.mkdir(parents=True, exist_ok=True)
        with log.open("ab") as out:
            proc = subprocess.Popen(
                list(cmd), env=env, stdout=out, stderr=subprocess.STDOUT, start_new_session=True
            )
        self._running.append(proc)
        return proc

    def start_piped(self, cmd: Sequence[str], env: dict[str, str]) -> subprocess.Popen[bytes]:
        """Start a command with pipes for its standard input and output (its errors go to the demo's)."""
        proc = subprocess.Popen(
            list(cmd), env=env, stdin=subprocess.PIPE, stdout=subprocess.PIPE, start_new_session=True
        )
        self._running.append(proc)
        return proc

    def run(self, cmd: Sequence[str], env: dict[str, str], log: Path, timeout: float = 900.0) -> int:
        """Run a command to its end (its output goes to ``log``); Ctrl-C while waiting stops it."""
        proc = self.start(cmd, env, log)
        try:
            return proc.wait(timeout=timeout)
        finally:
            self.stop(proc)

    def stop(self, proc: subprocess.Popen[bytes], grace: float = 10.0) -> None:
        """End the command's whole process group: SIGTERM, then SIGKILL for what is left after ``grace``.

        Returns once no process of the group runs (its leader is reaped), or after the SIGKILL's grace.
        """
        if proc in self._running:
            self._running.remove(proc)
        for sig in (signal.SIGTERM, signal.SIGKILL):
            try:
                os.killpg(proc.pid, sig)
            except ProcessLookupError:
                proc.poll()
                return
            deadline = time.monotonic() + grace
            while time.monotonic() < deadline:
                if proc.poll() is not None and not _group_runs(proc.pid):
                    return
                time.sleep(0.05)

    def stop_all(self) -> None:
        for proc in list(reversed(self._running)):
            self.stop(proc)


def _group_runs(pgid: int) -> bool:
    """Whether a process of the group still runs (a zombie waiting for its parent does not)."""
    try:
        os.killpg(pgid, 0)
    except ProcessLookupError:
        return False
    proc = Path("/proc")
    if not proc.is_dir():
        return True
    for stat in proc.glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rsplit(")", 1)[1].split()
        except (OSError, IndexError):
            continue
        if int(fields[2]) == pgid and fields[0] != "Z":
            return True
    return False
