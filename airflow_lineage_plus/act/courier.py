"""The hand-off: alert work runs in a process of its own, so it never delays a task or the scheduler.

Where a failure is seen (a task process on a worker, the scheduler, the API server), :func:`hand_off`
writes the job to a file and starts ``python -m airflow_lineage_plus.act.courier FILE`` in a new session,
without waiting for it: the caller pays for one small file and one process start (measured in
``benchmarks/alert_bench.py``). The courier reads the lineage, claims and sends within ``[lineage_plus]
alert_timeout`` seconds (a notifier that hangs gets bounded tries, then its claim back:
:func:`~.notifiers.send_once`), and is killed by an alarm 2 s later whatever it is doing. Its output goes to
``$AIRFLOW_HOME/lineage_plus/alerts.log``. At most :data:`MAX_COURIERS` run at once per process; more
jobs wait, in a thread, for one to end.
"""

from __future__ import annotations

import json
import math
import os
import signal
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

from airflow_lineage_plus.private_dirs import ensure_dir

#: Couriers one process runs at once (a burst of failures marked by hand waits for free ones).
MAX_COURIERS = 4

_lock = threading.Lock()
_running: list[subprocess.Popen[bytes]] = []
_pending: list[dict[str, Any]] = []
_drainer: threading.Thread | None = None


def _reap() -> None:
    _running[:] = [p for p in _running if p.poll() is None]


def _spawn(jobs: list[dict[str, Any]], deadline: float, home: Path) -> None:
    ensure_dir(home)
    handle, path = tempfile.mkstemp(prefix="alert-", suffix=".json", dir=home)
    with os.fdopen(handle, "w") as out:
        json.dump({"deadline": deadline, "jobs": jobs}, out)
    with open(home / "alerts.log", "ab") as log:
        _running.append(
            subprocess.Popen(
                [sys.executable, "-m", "airflow_lineage_plus.act.courier", path],
                stdin=subprocess.DEVNULL,
                stdout=log,
                stderr=log,
                close_fds=True,
                start_new_session=True,
            )
        )


def _drain(deadline: float, home: Path) -> None:
    global _drainer
    while True:
        with _lock:
            _reap()
            if not _pending:
                _drainer = None
                return
            if len(_running) < MAX_COURIERS:
                jobs = _pending[:]
                _pending.clear()
                _spawn(jobs, deadline, home)
                continue
        time.sleep(0.2)


def hand_off(job: dict[str, Any]) -> None:
    """Have a courier process do ``job`` (``{"kind": "failure", ...}``); returns at once."""
    global _drainer
    from airflow_lineage_plus import conf

    deadline = conf.alert_timeout()
    home = conf.package_home()
    with _lock:
        _reap()
        if len(_running) < MAX_COURIERS:
            _spawn([job], deadline, home)
            return
        _pending.append(job)
        if _drainer is None:
            _drainer = threading.Thread(target=_drain, args=(deadline, home), daemon=True)
            _drainer.start()


def main(argv: list[str]) -> int:
    """The courier: do the jobs in ``argv[0]`` (then delete it) within the deadline written there."""
    path = Path(argv[0])
    payload = json.loads(path.read_text())
    path.unlink()
    # the alarm's default action ends the process: no hand-off outlives its deadline, imports included
    seconds = max(1.0, float(payload["deadline"]))
    # sending stops (its claims given back) a little before the alarm; only a hang elsewhere meets it
    deadline = time.monotonic() + seconds
    signal.alarm(math.ceil(seconds) + 2)
    from airflow_lineage_plus.act.dispatch import run_job
    from airflow_lineage_plus.containment import contained

    for job in payload["jobs"]:
        with contained(f"the {job.get('kind')} alerts handed to the courier"):
            outcome = run_job(job, deadline)
            what = (
                job.get("failure", {}).get("dag_id", "?") + "." + job.get("failure", {}).get("task_id", "?")
            )
            counts = json.dumps(outcome.counts() if outcome is not None else {"sent": 0, "off": True})
            print(
                f"airflow-lineage-plus courier {os.getpid()}: {job['kind']} {what}: outcome {counts}",
                flush=True,
            )
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
