"""What impact alerting adds to a failing task: the listener hooks' time, with alerts on vs off.

    .venv/bin/python benchmarks/alert_bench.py [--runs 5]

A DAG whose one declared task fails is run for real, in this process (``dag.test()``: the task runner,
the OpenLineage provider and this package's listeners, as in ``airflow dags test``), ``--runs`` times
with ``[lineage_plus] alert_notifier = smtp`` (to a local SMTP server) and as many times with alerts off,
alternately. Printed: the time of the task runner's ``finalize()`` for the failed task (it runs every
listener's ``on_task_instance_failed``: the provider's, which forks and waits for its FAIL event, and
ours, which hands the alert to a courier process), and of the whole failing task (from the start of
``execute()`` to the end of its hooks), each as a median, the difference, and the ratio of alerts on to
off. The courier's own work (reading the lineage, sending) happens in its own process and is not part of
either figure.
"""

from __future__ import annotations

import argparse
import atexit
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
HOME = Path(tempfile.mkdtemp(prefix="alert-bench-"))
atexit.register(shutil.rmtree, HOME, True)
DAGS = HOME / "dags"
DAG_FILE = """
import time
import pendulum
from airflow.sdk import dag, task
from airflow_lineage_plus import Output, datasets, lineage

STARTED = []

@dag(schedule=None, start_date=pendulum.datetime(2024, 1, 1, tz="UTC"), catchup=False)
def alert_bench():
    @lineage(
        outputs=[Output(datasets.s3("s3://bench/out/"), schema=[("id", "BIGINT")], owners=["team:bench"])],
        owners=["team:bench"],
    )
    @task
    def load():
        STARTED.append(time.perf_counter())
        raise RuntimeError("failing on purpose")
    load()

bench_dag = alert_bench()
"""


def _environment(smtp_connection: str) -> None:
    DAGS.mkdir(parents=True)
    (DAGS / "alert_bench_dag.py").write_text(DAG_FILE)
    log = HOME / "events.jsonl"
    os.environ.update(
        {
            "AIRFLOW_HOME": str(HOME),
            "AIRFLOW__CORE__LOAD_EXAMPLES": "False",
            "AIRFLOW__CORE__DAGS_FOLDER": str(DAGS),
            "AIRFLOW__DATABASE__SQL_ALCHEMY_CONN": f"sqlite:///{HOME / 'airflow.db'}",
            "AIRFLOW__OPENLINEAGE__NAMESPACE": "bench",
            "AIRFLOW__OPENLINEAGE__TRANSPORT": json.dumps(
                {"type": "file", "log_file_path": str(log), "append": True}
            ),
            "AIRFLOW__LINEAGE_PLUS__EVENT_LOG_PATH": str(log),
            "AIRFLOW__LINEAGE_PLUS__ALERT_RECIPIENTS": json.dumps({"team:bench": "bench@example.com"}),
            "AIRFLOW__LINEAGE_PLUS__ALERT_SMTP_CONN_ID": "smtp_bench",
            "AIRFLOW_CONN_SMTP_BENCH": smtp_connection,
        }
    )
    airflow = str(Path(sys.executable).parent / "airflow")
    subprocess.run([airflow, "db", "migrate"], check=True, capture_output=True, timeout=600)


def _measure(runs: int) -> dict[str, dict[str, list[float]]]:
    import importlib.util

    spec = importlib.util.spec_from_file_location("alert_bench_dag", DAGS / "alert_bench_dag.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    from airflow.sdk.execution_time import task_runner

    hook_ms: list[float] = []
    ended: list[float] = []
    original = task_runner.finalize

    def timed_finalize(*args: object, **kwargs: object) -> object:
        # finalize() runs the failure callbacks and every listener's on_task_instance_failed hook
        start = time.perf_counter()
        try:
            return original(*args, **kwargs)
        finally:
            ended.append(time.perf_counter())
            hook_ms.append((ended[-1] - start) * 1000)

    task_runner.finalize = timed_finalize
    from airflow_lineage_plus.act import alert_listener

    ours_ms: list[float] = []
    hand_off = alert_listener.alert_if_failed

    def timed_hand_off(*args: object, **kwargs: object) -> bool:
        start = time.perf_counter()
        try:
            return hand_off(*args, **kwargs)  # type: ignore[arg-type]
        finally:
            ours_ms.append((time.perf_counter() - start) * 1000)

    alert_listener.alert_if_failed = timed_hand_off
    figures: dict[str, dict[str, list[float]]] = {
        m: {"hook": [], "task": [], "ours": []} for m in ("on", "off")
    }
    for i in range(runs * 2 + 2):  # one warm-up run each first
        mode = "on" if i % 2 == 0 else "off"
        os.environ["AIRFLOW__LINEAGE_PLUS__ALERT_NOTIFIER"] = "smtp" if mode == "on" else ""
        module.bench_dag.test(logical_date=None)
        if i >= 2:
            figures[mode]["hook"].append(hook_ms[-1])
            figures[mode]["task"].append((ended[-1] - module.STARTED[-1]) * 1000)
            figures[mode]["ours"].append(ours_ms[-1])
    return figures


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--runs", type=int, default=5)
    args = parser.parse_args()
    sys.path.insert(0, str(ROOT / "tests" / "support"))
    from smtp_server import LocalSmtp

    with LocalSmtp() as smtp:
        _environment(smtp.connection())
        figures = _measure(args.runs)
        time.sleep(float(os.environ.get("ALERT_BENCH_WAIT", "30")))  # let the couriers deliver
        delivered = len(smtp.messages)
    print(f"failing task, {args.runs} runs each, medians (ms):")
    for what in ("hook", "task"):
        on, off = statistics.median(figures["on"][what]), statistics.median(figures["off"][what])
        label = "finalize (failure hooks)" if what == "hook" else "execute() start -> hooks done"
        print(
            f"  {label:<32} alerts on {on:8.1f}   off {off:8.1f}   "
            f"added {on - off:+7.1f}   ratio {on / off:.3f}"
        )
    ours = figures["on"]["ours"]
    print(
        f"  this package's failure hook alone (alerts on): "
        f"median {statistics.median(ours):.1f}, max {max(ours):.1f}"
    )
    print(f"  raw hook ms on:  {[round(x, 1) for x in figures['on']['hook']]}")
    print(f"  raw hook ms off: {[round(x, 1) for x in figures['off']['hook']]}")
    print(f"alerts delivered by couriers meanwhile: {delivered} (one per alerted run, warm-up included)")


if __name__ == "__main__":
    main()
