"""``[lineage_plus]`` read without importing Airflow gives Airflow's own answers, and a quick question from a
new ``lineage-plus`` process never imports Airflow."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from airflow_lineage_plus.provider_info import OPTIONS
from tests.support.graph_builders import orders_pipeline, write_log

pytestmark = pytest.mark.timeout(300)

# In a fresh process: every option read by conf.py before Airflow is imported, then (with the cache
# cleared) read again through Airflow's own parser.
_BOTH_WAYS = """
import json, sys
from airflow_lineage_plus import conf
from airflow_lineage_plus.provider_info import OPTIONS
light = {option: conf._get(option) for option in OPTIONS}
light["<home>"] = str(conf.airflow_home())
before = "airflow.configuration" in sys.modules
import airflow.configuration
conf._read.clear()
airflow = {option: conf._get(option) for option in OPTIONS}
airflow["<home>"] = str(conf.airflow_home())
print(json.dumps({"light": light, "airflow": airflow, "imported_before": before}))
"""

# case: (variables, config file, whether Airflow must be asked)
CASES: dict[str, tuple[dict[str, str], str | None, bool]] = {
    "no config file, no variable: the defaults": ({}, None, False),
    "variables, with $VAR and ~ expanded": (
        {
            "AIRFLOW__LINEAGE_PLUS__STORE_URL": "sqlite:///$LP_TEST_DIR/lineage.db",
            "AIRFLOW__LINEAGE_PLUS__EVENT_LOG_PATH": "~/lineage/events.jsonl",
            "AIRFLOW__LINEAGE_PLUS__RETENTION_DAYS": "30",
        },
        None,
        False,
    ),
    "the config file, %% escaped, a variable over one of its options": (
        {"AIRFLOW__LINEAGE_PLUS__RETENTION_DAYS": "7"},
        "[lineage_plus]\nstore_url = postgresql://lineage:p%%40ss@db:5432/lineage\n"
        "retention_days = 90\nevent_log_path = $LP_TEST_DIR/events.jsonl\ngraph_source = events\n",
        False,
    ),
    # whether Airflow runs the command depends on its version (3.1 does not for a provider's option): the
    # light reader leaves it to Airflow either way
    "a command for a sensitive option: asked of Airflow": (
        {},
        "[lineage_plus]\nmarquez_api_key_cmd = echo from-a-command\nmarquez_url = http://marquez:5000\n",
        True,
    ),
}


@pytest.mark.parametrize("case", list(CASES))
def test_an_option_read_without_airflow_is_the_answer_airflow_gives(tmp_path: Path, case: str) -> None:
    variables, config_file, needs_airflow = CASES[case]
    home = tmp_path / "airflow-home"
    home.mkdir()
    env = {
        k: v for k, v in os.environ.items() if not k.startswith(("AIRFLOW__LINEAGE_PLUS__", "AIRFLOW_CONFIG"))
    }
    env.update({"AIRFLOW_HOME": str(home), "LP_TEST_DIR": str(tmp_path), **variables})
    if config_file is not None:
        # elsewhere than the Airflow home, as AIRFLOW_CONFIG allows
        (tmp_path / "elsewhere.cfg").write_text(config_file)
        env["AIRFLOW_CONFIG"] = str(tmp_path / "elsewhere.cfg")
    done = subprocess.run(
        [sys.executable, "-c", _BOTH_WAYS], env=env, capture_output=True, text=True, timeout=240
    )
    assert done.returncode == 0, done.stderr[-3000:]
    answers = json.loads(done.stdout.strip().splitlines()[-1])
    assert answers["imported_before"] is needs_airflow
    assert answers["light"] == answers["airflow"]
    assert len(answers["light"]) == len(OPTIONS) + 1
    if config_file is not None and "store_url" in config_file:
        assert answers["light"]["store_url"] == "postgresql://lineage:p%40ss@db:5432/lineage"
        assert answers["light"]["retention_days"] == "7"
        assert answers["light"]["event_log_path"] == f"{tmp_path}/events.jsonl"


def test_a_quick_question_from_a_new_cli_process_reads_the_store_without_airflow_or_an_http_client(
    tmp_path: Path,
) -> None:
    log = write_log(tmp_path / "events.jsonl", orders_pipeline())
    env = {k: v for k, v in os.environ.items() if not k.startswith("AIRFLOW__LINEAGE_PLUS__")}
    env.update({"AIRFLOW_HOME": str(tmp_path / "home"), "AIRFLOW__LINEAGE_PLUS__EVENT_LOG_PATH": str(log)})
    code = (
        "import json, sys\n"
        "from airflow_lineage_plus.cli import run\n"
        "status, out, err = run(sys.argv[1:])\n"
        "print(json.dumps({'status': status, 'out': out, 'err': err,"
        " 'airflow': sorted(m for m in sys.modules if m == 'airflow' or m.startswith('airflow.')),"
        " 'httpx': 'httpx' in sys.modules}))\n"
    )
    argv = ["upstream", "--namespace", "warehouse", "--name", "fct_daily_orders", "--format", "json"]
    done = subprocess.run(
        [sys.executable, "-c", code, *argv], env=env, capture_output=True, text=True, timeout=240
    )
    assert done.returncode == 0, done.stderr[-3000:]
    answer = json.loads(done.stdout.strip().splitlines()[-1])
    assert answer["status"] == 0, answer["err"]
    assert answer["airflow"] == []
    assert answer["httpx"] is False  # the remote client is imported for --airflow only
    assert log.with_suffix(".db").exists()  # the configured store, made from the event log on first use
    names = sorted(node["name"] for node in json.loads(answer["out"])["nodes"])
    assert names == ["orders.build_fct", "orders.load_orders", "raw_orders", "stg_orders"]
