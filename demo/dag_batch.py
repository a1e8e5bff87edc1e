"""Several ``airflow dags test`` runs in one Python process: the demo's runs, and the test harness's.

Every ``airflow dags test`` process starts Python, imports Airflow, builds the in-process execution API and
shuts the OpenLineage provider's process pool down at exit, for a few small tasks often most of the run.
:class:`DagBatch` pays that once. It starts this file as a script (it imports
nothing of the demo or of the tests) and sends it one run at a time. The child runs each as ``airflow``
would (``airflow/__main__.py``: Airflow's own CLI parser and command), with that run's environment over its
own and its output in that run's log file. After the run it calls the listeners' ``before_stopping`` hook,
as Airflow does when a component stops: the provider then waits for what its pool is still emitting (the
DAG-run events, the skip records handed to it), so every event of the run is written before
:meth:`DagBatch.run` returns. The DAG file is parsed again for each run (``dags test`` fills a new DagBag),
so what a DAG file reads from the environment when parsed still changes per run.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
import traceback
from collections.abc import Sequence
from pathlib import Path
from typing import Any

MARKER = "@@lineage-plus-dag-batch"


def dags_test_argv(
    dag_id: str, logical_date: str | None = None, conf: dict[str, Any] | None = None
) -> list[str]:
    """The arguments of ``airflow dags test`` for one run of ``dag_id`` (its logical date, and its conf
    unless None)."""
    argv = ["dags", "test", dag_id]
    if logical_date:
        argv.append(logical_date)
    if conf is not None:
        argv += ["-c", json.dumps(conf)]
    return argv


class DagBatchError(RuntimeError):
    """The batch process ended before a run was done (killed, or past its timeout)."""


class DagBatch:
    """The parent's side: :meth:`run` one ``airflow`` command after another in ``proc``, a process
    started as :meth:`command` with pipes for its standard input and output."""

    def __init__(self, proc: subprocess.Popen[bytes]) -> None:
        if proc.stdin is None or proc.stdout is None:
            raise ValueError("the batch process needs pipes for its standard input and output")
        self._proc = proc
        self._stdin = proc.stdin
        self._stdout = proc.stdout

    @staticmethod
    def command() -> list[str]:
        return [sys.executable, str(Path(__file__).resolve())]

    @classmethod
    def start(cls, env: dict[str, str], cwd: Path) -> DagBatch:
        """A batch process with ``env`` as its environment, in ``cwd``."""
        pipes = {"stdin": subprocess.PIPE, "stdout": subprocess.PIPE}
        return cls(subprocess.Popen(cls.command(), env=env, cwd=cwd, **pipes))

    def run(self, argv: Sequence[str], env: dict[str, str], log: Path, timeout: float = 900.0) -> int:
        """Run ``airflow <argv>`` with ``env`` set over the process's environment, its output appended to
        ``log``; its exit status once it and what it handed to the provider's pool are done. Past
        ``timeout`` seconds the batch process is killed (:class:`DagBatchError`)."""
        log.parent.mkdir(parents=True, exist_ok=True)
        request = {"argv": list(argv), "env": env, "log": str(log)}
        timer = threading.Timer(timeout, self._proc.kill)
        timer.start()
        try:
            self._stdin.write(json.dumps(request).encode() + b"\n")
            self._stdin.flush()
            line = self._stdout.readline().decode()
            while line and not line.startswith(MARKER + " "):  # written before the first run began
                with log.open("a") as out:
                    out.write(line)
                line = self._stdout.readline().decode()
        except BrokenPipeError:
            line = ""
        finally:
            timer.cancel()
        if not line.startswith(MARKER + " "):
            raise DagBatchError(
                f"the batch process ended (exit status {self._proc.poll()}) during airflow "
                f"{' '.join(argv)}; its output is in {log}"
            )
        return int(line.split()[1])

    def close(self) -> None:
        """End the batch process (its standard input closed; it exits once the current run is done)."""
        self._stdin.close()
        self._proc.wait()


def _serve() -> int:
    from airflow.cli import cli_parser
    from airflow.configuration import write_default_airflow_configuration_if_needed
    from airflow.listeners.listener import get_listener_manager

    write_default_airflow_configuration_if_needed()
    parser = cli_parser.get_parser()
    base = dict(os.environ)
    channel = os.fdopen(os.dup(1), "w")  # the parent's pipe; fds 1 and 2 go to each run's log
    for line in sys.stdin:
        request = json.loads(line)
        os.environ.clear()
        os.environ.update({**base, **request["env"]})
        with open(request["log"], "ab") as log:
            sys.stdout.flush()
            sys.stderr.flush()
            os.dup2(log.fileno(), 1)
            os.dup2(log.fileno(), 2)
            status = _run(parser, request["argv"])
            get_listener_manager().hook.before_stopping(component=_Batch())
            sys.stdout.flush()
            sys.stderr.flush()
        channel.write(f"{MARKER} {status}\n")
        channel.flush()
    return 0


def _run(parser: object, argv: list[str]) -> int:
    try:
        args = parser.parse_args(argv)  # type: ignore[attr-defined]
        args.func(args)
    except SystemExit as exc:
        return exc.code if isinstance(exc.code, int) else 1
    except Exception:  # a run's error is its exit status, as in its own process; the next run goes on
        traceback.print_exc()
        return 1
    return 0


class _Batch:
    """The component named to ``before_stopping`` (listeners only log its class name)."""


if __name__ == "__main__":
    sys.exit(_serve())
