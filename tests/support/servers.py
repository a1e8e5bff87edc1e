"""Starting and stopping the real servers tests run (``airflow api-server``): a free port, waiting until it
answers, stopping its process group."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import time
from pathlib import Path

import httpx

#: the log file of each API server a test started, by its base URL (a failed browser test prints its tail)
SERVER_LOGS: dict[str, Path] = {}


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


def wait_until_serving(url: str, proc: subprocess.Popen[bytes], timeout: float = 180.0) -> None:
    """Return once ``url`` gives any HTTP answer (a 401 too); fail if ``proc`` exits or time runs out."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise RuntimeError(f"airflow api-server exited with {proc.returncode}")
        try:
            httpx.get(url, timeout=2)
            return
        except httpx.HTTPError:
            time.sleep(0.5)
    raise TimeoutError(f"airflow api-server did not answer {url} within {timeout} s")


def stop(proc: subprocess.Popen[bytes]) -> None:
    """SIGTERM the process group, SIGKILL it after 20 s."""
    if proc.poll() is not None:
        return
    os.killpg(proc.pid, signal.SIGTERM)
    try:
        proc.wait(timeout=20)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        proc.wait()


def log_tail(base: str, lines: int = 40) -> str:
    """The last ``lines`` lines of the log of the API server at ``base`` (``SERVER_LOGS``), or why not."""
    path = SERVER_LOGS.get(base)
    if path is None:
        return f"no log registered for {base}"
    try:
        text = path.read_text(errors="replace")
    except OSError as exc:
        return f"cannot read {path}: {exc}"
    return "\n".join(text.splitlines()[-lines:])
