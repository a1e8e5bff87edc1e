"""Stopping the Airflow components a test started: SIGTERM (a scheduler drains its OpenLineage pool), wait,
then kill what is left of each one's own process group; and finding the spool retry processes."""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any


def stop_gracefully(procs: Sequence[subprocess.Popen[Any]], wait: float = 60) -> None:
    """SIGTERM every process at once, wait up to ``wait`` s each, then SIGKILL its process group.

    Each process must have been started with ``start_new_session=True``, so its group holds only what it
    started (never another test's or another session's processes).
    """
    for proc in procs:
        if proc.poll() is None:
            proc.send_signal(signal.SIGTERM)
    for proc in procs:
        try:
            proc.wait(timeout=wait)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(timeout=30)
        with contextlib.suppress(ProcessLookupError):
            os.killpg(proc.pid, signal.SIGKILL)


def _processes() -> Iterator[Path]:
    """The ``/proc`` folder of each process running now."""
    return (proc for proc in Path("/proc").iterdir() if proc.name.isdigit())


def retry_processes(root: Path) -> list[int]:
    """Ids of the running spool retry processes (``airflow_lineage_plus.deliver.spool_retry``) of spools
    below ``root`` (a test's folder: what its components or its transports started)."""
    found = []
    for proc in _processes():
        with contextlib.suppress(OSError):  # it ended meanwhile
            argv = (proc / "cmdline").read_bytes().split(b"\0")
            if b"airflow_lineage_plus.deliver.spool_retry" in argv and any(
                arg.startswith(str(root).encode()) for arg in argv
            ):
                found.append(int(proc.name))
    return found


def holders(path: Path) -> list[str]:
    """``pid: command line`` of each process with ``path`` open (what holds a lock file, when a test
    cannot find the process it expects to)."""
    found = []
    for proc in _processes():
        with contextlib.suppress(OSError):  # it ended meanwhile, or is not ours to look into
            if any(os.readlink(fd) == str(path) for fd in (proc / "fd").iterdir()):
                argv = (proc / "cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
                found.append(f"{proc.name}: {argv.strip()}")
    return found
