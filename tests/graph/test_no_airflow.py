"""``airflow_lineage_plus.graph``, and the CLI with --events or with ``[lineage_plus]`` read without Airflow,
work where Airflow cannot be imported."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from tests.support.graph_builders import orders_pipeline, write_log

REPO = Path(__file__).resolve().parents[2]

BLOCKER = """
import sys

class BlockAirflow:
    def find_spec(self, name, path=None, target=None):
        if name == "airflow" or name.startswith("airflow."):
            raise ImportError(f"airflow is blocked in this test: {name}")
        return None

sys.meta_path.insert(0, BlockAirflow())
"""


def _run(code: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-c", BLOCKER + code],
        capture_output=True,
        text=True,
        timeout=120,
        cwd=REPO,
        env={**os.environ, **(env or {})},
    )


def test_the_blocker_really_blocks_airflow() -> None:
    done = _run("import airflow")
    assert done.returncode != 0 and "airflow is blocked" in done.stderr


def test_graph_package_imports_and_answers_without_airflow(tmp_path: Path) -> None:
    log = write_log(tmp_path / "e.jsonl", orders_pipeline())
    done = _run(
        "import airflow_lineage_plus.graph as g, airflow_lineage_plus.graph.eventlog, "
        "airflow_lineage_plus.graph.marquez, airflow_lineage_plus.graph.scan\n"
        f"q = g.LineageQueries(g.open_source(events={str(log)!r}))\n"
        "print(q.failed_upstream('dataset:warehouse:fct_daily_orders')['nodes'][0]['name'])\n"
        "assert not any(m == 'airflow' or m.startswith('airflow.') for m in sys.modules)\n"
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "orders.build_fct"


def test_cli_reads_events_or_its_configured_store_without_airflow_and_asks_for_a_source_otherwise(
    tmp_path: Path,
) -> None:
    log = write_log(tmp_path / "e.jsonl", orders_pipeline())
    code = (
        "from airflow_lineage_plus.cli import run\n"
        "import json\n"
        f"code, out, err = run(['--events', {str(log)!r}, 'report', '--format', 'json'])\n"
        "print(code, json.loads(out)['jobs'])\n"
        "code, out, err = run(['report', '--format', 'json'])\n"
        "print(code, json.loads(out)['jobs'] if code == 0 else err.strip())\n"
    )
    configured = {"AIRFLOW_HOME": str(tmp_path / "home"), "AIRFLOW__LINEAGE_PLUS__EVENT_LOG_PATH": str(log)}
    done = _run(code, configured)
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines() == ["0 3", "0 3"]  # the store beside the log, made from it
    assert log.with_suffix(".db").exists()
    # an option only Airflow can resolve (a command): the CLI says how to go without it
    done = _run(code, {**configured, "AIRFLOW__LINEAGE_PLUS__GRAPH_SOURCE_CMD": "echo store"})
    assert done.returncode == 0, done.stderr
    first, second = done.stdout.splitlines()
    assert first == "0 3"
    assert second.startswith("2 ") and "give --events PATH or --marquez URL" in second


def test_the_lineage_store_and_its_source_work_without_airflow(tmp_path: Path) -> None:
    log = write_log(tmp_path / "e.jsonl", orders_pipeline())
    url = f"sqlite:///{tmp_path / 'lineage.db'}"
    done = _run(
        "from airflow_lineage_plus.store import LineageStore\n"
        "import airflow_lineage_plus.graph as g\n"
        f"store = LineageStore({url!r})\n"
        f"print(store.append(open({str(log)!r}, 'rb').read().splitlines()).added)\n"
        "store.close()\n"
        f"q = g.LineageQueries(g.open_source(store={url!r}))\n"
        "print(q.failed_upstream('dataset:warehouse:fct_daily_orders')['nodes'][0]['name'])\n"
        "assert not any(m == 'airflow' or m.startswith('airflow.') for m in sys.modules)\n"
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == ["10", "orders.build_fct"]
