"""The ``lineage-plus`` command: JSON contract, text report, exit codes, both sources."""

from __future__ import annotations

import json
import socket
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from airflow_lineage_plus.cli import run
from tests.support.fake_marquez import FakeMarquez
from tests.support.graph_builders import (
    at,
    cross_dag_world,
    facet,
    job_event,
    orders_pipeline,
    retirement_events,
    run_id,
    run_pair,
    write_log,
)

REPO = Path(__file__).resolve().parents[1]
FCT = ["--namespace", "warehouse", "--name", "fct_daily_orders"]


@pytest.fixture
def log(tmp_path: Path) -> Path:
    return write_log(tmp_path / "events.jsonl", orders_pipeline())


def _json(argv: list[str]) -> dict[str, Any]:
    """The JSON answer of a command that found something: exit 0, or 4 for a failed upstream job."""
    code, out, err = run(argv)
    assert code == (4 if "failed-upstream" in argv and json.loads(out)["nodes"] else 0), err
    return json.loads(out)


def test_failed_upstream_json_names_the_failed_job(log: Path) -> None:
    answer = _json(["--events", str(log), "failed-upstream", *FCT, "--format", "json"])
    assert set(answer) == {"target", "nodes", "edges", "exact"} and answer["exact"] is True
    assert answer["target"] == {
        "id": "dataset:warehouse:fct_daily_orders",
        "type": "DATASET",
        "namespace": "warehouse",
        "name": "fct_daily_orders",
        "depth": 0,
        "fields": [{"name": "day", "type": "DATE"}, {"name": "total_usd", "type": "DECIMAL"}],
    }
    [job] = answer["nodes"]
    assert (job["id"], job["type"], job["depth"]) == ("job:pipeline:orders.build_fct", "JOB", 1)
    assert job["latestRun"]["state"] == "FAILED"
    assert job["latestRun"]["errorMessage"] == "column amount does not exist"
    assert answer["edges"] == [
        {
            "origin": "job:pipeline:orders.build_fct",
            "destination": "dataset:warehouse:fct_daily_orders",
            "state": "current",
        }
    ]


def test_text_report_is_grouped_by_depth_with_states_and_times(log: Path) -> None:
    code, out, _ = run(["--events", str(log), "upstream", *FCT, "--depth", "3"])
    assert code == 0
    lines = out.splitlines()
    assert lines[0].startswith("upstream of DATASET warehouse / fct_daily_orders")
    assert [line.strip() for line in lines if line.strip().startswith("depth")] == [
        "depth 1",
        "depth 2",
        "depth 3",
    ]
    assert "orders.build_fct  FAILED  started 2026-03-01T00:12:00Z  ended 2026-03-01T00:13:00Z" in out
    assert "error: column amount does not exist" in out


def test_job_target_and_impact_level_and_owners(log: Path) -> None:
    down = _json(
        [
            "--events",
            str(log),
            "downstream",
            "--job-namespace",
            "pipeline",
            "--job",
            "orders.load_orders",
            "--depth",
            "1",
            "--format",
            "json",
        ]
    )
    assert [n["id"] for n in down["nodes"]] == ["dataset:warehouse:stg_orders"]
    impact = _json(
        [
            "--events",
            str(log),
            "impact",
            "--namespace",
            "warehouse",
            "--name",
            "raw_orders",
            "--format",
            "json",
        ]
    )
    assert impact["level"] == "MEDIUM" and "team:finance" in impact["owners"]
    code, out, _ = run(["--events", str(log), "impact", "--namespace", "warehouse", "--name", "raw_orders"])
    assert code == 0 and "impact level: MEDIUM" in out and "owners to notify: team:analytics" in out


def test_schema_diff_columns_lint_and_report_commands(log: Path, tmp_path: Path) -> None:
    diff = _json(
        [
            "--events",
            str(log),
            "schema-diff",
            "--namespace",
            "warehouse",
            "--name",
            "stg_orders",
            "--format",
            "json",
        ]
    )
    assert [c["kind"] for c in diff["changes"]] == [
        "COLUMN_REMOVED",
        "TYPE_CHANGED",
        "COLUMN_ADDED",
        "COLUMN_ADDED",
    ]
    proposed = tmp_path / "proposed.json"
    proposed.write_text(
        json.dumps({"order_id": "BIGINT", "amount_usd": "DECIMAL", "day": "DATE", "note": "TEXT"})
    )
    against = _json(
        [
            "--events",
            str(log),
            "schema-diff",
            "--namespace",
            "warehouse",
            "--name",
            "stg_orders",
            "--proposed",
            str(proposed),
            "--format",
            "json",
        ]
    )
    assert against["changes"] == [{"kind": "COLUMN_ADDED", "column": "note", "from": None, "to": "TEXT"}]
    columns = _json(["--events", str(log), "columns", *FCT, "--column", "total_usd", "--format", "json"])
    assert set(columns) == {"target", "column", "upstream", "downstream", "paths", "exact"}
    assert [(u["name"], u["column"], u["depth"]) for u in columns["upstream"]] == [
        ("stg_orders", "amount_usd", 1),
        ("raw_orders", "amount", 2),
    ]
    assert _json(["--events", str(log), "lint-names", "--format", "json"]) == {"groups": []}
    report = _json(["--events", str(log), "report", "--format", "json"])
    assert (report["datasets"], report["jobs"], [j["name"] for j in report["failedJobs"]]) == (
        4,
        3,
        ["orders.build_fct"],
    )


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (
            ["failed-upstream", "--namespace", "warehouse", "--name", "nope"],
            "unknown node dataset:warehouse:nope",
        ),
        (["upstream", "--namespace", "warehouse"], "needs both --namespace and --name"),
        (["upstream", "--namespace", "a", "--name", "b", "--job-namespace", "c", "--job", "d"], "needs"),
        (["upstream"], "needs --namespace NS --name NAME or --job-namespace NS --job NAME"),
        (["columns", *FCT, "--column", "nope"], "has no column 'nope'"),
        (["upstream", *FCT, "--depth", "-1"], "--depth must be 0 or more"),
        (["schema-diff", *FCT, "--proposed", "{not json"], "--proposed is neither"),
    ],
)
def test_bad_arguments_and_unknown_nodes_exit_2_with_a_message(
    log: Path, argv: list[str], message: str
) -> None:
    code, out, err = run(["--events", str(log), *argv])
    assert (code, out) == (2, "")
    assert message in err


def test_argparse_errors_exit_2(log: Path) -> None:
    assert run(["--events", str(log), "no-such-command"])[0] == 2
    assert run(["--events", str(log), "--marquez", "http://x", "report"])[0] == 2


def test_unreadable_sources_exit_1(tmp_path: Path) -> None:
    code, _, err = run(["--events", str(tmp_path / "missing.jsonl"), "report"])
    assert code == 1 and "cannot read the lineage source" in err
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    code, _, err = run(["--marquez", f"http://127.0.0.1:{port}", "--timeout", "1", "upstream", *FCT])
    assert code == 1 and "cannot reach Marquez" in err


def test_bad_lines_are_reported_on_stderr_not_in_the_json(tmp_path: Path) -> None:
    path = tmp_path / "events.jsonl"
    path.write_text("garbage\n" + "".join(json.dumps(e) + "\n" for e in orders_pipeline()))
    code, out, err = run(["--events", str(path), "failed-upstream", *FCT, "--format", "json"])
    assert code == 4 and json.loads(out)["nodes"][0]["name"] == "orders.build_fct"
    assert "malformed=1" in err


def test_marquez_source_gives_the_same_json_as_the_event_log(tmp_path: Path) -> None:
    events = sorted(orders_pipeline(full_start=True), key=lambda e: e["eventTime"])  # as a live stream
    log = write_log(tmp_path / "events.jsonl", events)
    with FakeMarquez(api_key="k") as marquez:
        for item in events:
            import httpx

            httpx.post(
                f"{marquez.url}/api/v1/lineage", json=item, headers={"Authorization": "Bearer k"}, timeout=5
            )
        for command in (
            ["failed-upstream", *FCT],
            ["impact", "--namespace", "warehouse", "--name", "raw_orders"],
            ["columns", *FCT, "--column", "total_usd"],
            ["lint-names"],
        ):
            from_log = _json(["--events", str(log), *command, "--format", "json"])
            from_marquez = _json(["--marquez", marquez.url, "--api-key", "k", *command, "--format", "json"])
            # the failed build_fct's current edges in Marquez are its failed run's: said, not hidden
            assert from_marquez.pop("exact", False) is (command[0] == "columns")
            assert from_marquez == {k: v for k, v in from_log.items() if k != "exact"}
        code, _, err = run(["--marquez", marquez.url, "--api-key", "wrong", "upstream", *FCT])
        assert code == 1 and "api-key" in err


def test_without_a_source_option_the_configured_event_log_is_read(
    log: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("AIRFLOW__LINEAGE_PLUS__EVENT_LOG_PATH", str(log))
    monkeypatch.setenv("AIRFLOW__LINEAGE_PLUS__GRAPH_SOURCE", "events")
    code, out, err = run(["failed-upstream", *FCT, "--format", "json"])
    assert code == 4, err
    assert json.loads(out)["nodes"][0]["name"] == "orders.build_fct"


def test_console_script_runs_and_sets_the_exit_status(log: Path) -> None:
    script = Path(sys.executable).parent / "lineage-plus"
    done = subprocess.run(
        [str(script), "--events", str(log), "failed-upstream", *FCT, "--format", "json"],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 4, done.stderr  # a failed upstream job: the documented exit status
    assert json.loads(done.stdout)["nodes"][0]["latestRun"]["state"] == "FAILED"
    assert done.stderr == ""  # a quick scan of the raw log answered: nothing is started behind it
    assert not list(log.parent.glob(log.name + ".*")), "nothing is written beside the log"
    missing = subprocess.run(
        [str(script), "--events", str(log), "upstream", "--namespace", "x", "--name", "y"],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert missing.returncode == 2 and "unknown node" in missing.stderr


def test_as_of_and_retired_edges_on_the_command_line(tmp_path: Path) -> None:
    planned = job_event("etl.planned", 80, inputs=[{"namespace": "warehouse", "name": "src_a"}])
    path = write_log(tmp_path / "events.jsonl", [*retirement_events(), planned])
    loaded = ["upstream", "--namespace", "warehouse", "--name", "loaded", "--depth", "2"]
    now = _json(["--events", str(path), *loaded, "--format", "json"])
    assert {n["name"] for n in now["nodes"]} == {"etl.load", "src_b", "src_c"}
    assert {e["state"] for e in now["edges"]} == {"current"}
    code, out, _ = run(["--events", str(path), *loaded, "--include-retired"])
    assert code == 0 and "retired edges" in out and "dataset:warehouse:src_a -> job:pipeline:etl.load" in out
    every = _json(["--events", str(path), *loaded, "--include-retired", "--format", "json"])
    states = {(e["origin"], e["destination"]): e["state"] for e in every["edges"]}
    assert states[("dataset:warehouse:src_a", "job:pipeline:etl.load")] == "retired"
    assert list(states.values()).count("retired") == 1
    # the three states side by side: src_a feeds a job only declared in DAG code, and a retired edge
    src_a = ["downstream", "--namespace", "warehouse", "--name", "src_a", "--depth", "1", "--format", "json"]
    edges = _json(["--events", str(path), *src_a, "--include-retired"])["edges"]
    assert {e["destination"]: e["state"] for e in edges} == {
        "job:pipeline:etl.load": "retired",
        "job:pipeline:etl.planned": "declared",
    }
    assert _json(["--events", str(path), *src_a, "--no-include-declared"])["edges"] == []
    then = _json(["--events", str(path), *loaded, "--as-of", at(55), "--format", "json"])
    assert {n["name"] for n in then["nodes"]} == {"etl.load", "src_a"} and then["asOf"] == at(55)
    code, _, err = run(["--events", str(path), *loaded, "--as-of", "last tuesday"])
    assert code == 2 and "ISO-8601" in err


def test_the_text_of_upstream_names_the_dag_run_whose_asset_event_started_the_run(tmp_path: Path) -> None:
    path = write_log(tmp_path / "e.jsonl", cross_dag_world())
    code, out, err = run(["--events", str(path), "upstream", "--namespace", "warehouse", "--name", "report"])
    assert code == 0, err
    tail = out.splitlines()[-2:]
    assert tail == [
        "  started by asset events of other DAG runs (cross-DAG):",
        "    job:pipeline:xdag_orders -> job:pipeline:xdag_report.summarize"
        f"  DAG run {run_id('xdag_orders-run')} FAILED (asset event of job:pipeline:xdag_orders.extract)",
    ]


def test_a_skipped_latest_run_shows_as_skipped(tmp_path: Path) -> None:
    path = write_log(
        tmp_path / "e.jsonl",
        run_pair(
            "dag.gate", "g", 0, 1, skipped="no rows", outputs=[{"namespace": "warehouse", "name": "gated"}]
        ),
    )
    answer = _json(
        ["--events", str(path), "upstream", "--namespace", "warehouse", "--name", "gated", "--format", "json"]
    )
    assert answer["nodes"][0]["latestRun"]["state"] == "SKIPPED"


def test_an_upstream_failed_latest_run_shows_as_upstream_failed_not_skipped_in_text(tmp_path: Path) -> None:
    events = run_pair("dag.after", "a", 0, 1, "ABORT", outputs=[{"namespace": "warehouse", "name": "gated"}])
    events[-1]["run"]["facets"]["lineagePlus_skipState"] = facet(
        skipped=True, reason="TRIGGER_RULE", state="upstream_failed"
    )
    path = write_log(tmp_path / "e.jsonl", events)
    code, out, err = run(["--events", str(path), "upstream", "--namespace", "warehouse", "--name", "gated"])
    assert code == 0, err
    [line] = [line for line in out.splitlines() if "dag.after" in line]
    assert "UPSTREAM_FAILED" in line and "SKIPPED" not in line


@pytest.mark.airflow
def test_failed_upstream_names_the_failed_job_of_the_sample_pipeline(tmp_path: Path, demo_runs: Any) -> None:
    """The demo's runs (a good day, an empty day, a day whose dbt model fails), through the real provider."""
    log = tmp_path / "events.jsonl"
    write_log(log, demo_runs.events())
    [fct] = [
        d for e in demo_runs.events() for d in e.get("outputs", []) if d["name"].endswith("fct_daily_orders")
    ][:1]
    answer = _json(
        [
            "--events",
            str(log),
            "failed-upstream",
            "--namespace",
            fct["namespace"],
            "--name",
            fct["name"],
            "--format",
            "json",
        ]
    )
    # the mart is a dbt model's: the failed job is the model, run by dbt, run by the Airflow task
    assert [n["name"] for n in answer["nodes"]] == ["analytics.marts.shop.fct_daily_orders.build.run"]
    run_info = answer["nodes"][0]["latestRun"]
    assert run_info["state"] == "FAILED" and "failed on purpose" in run_info["errorMessage"]
    assert [(r["name"], r["state"]) for r in answer["nodes"][0]["ranBy"]] == [
        ("dbt-run-shop", "FAILED"),
        ("ecommerce_orders.fct_daily_orders", "FAILED"),
    ]
    code, out, _ = run(
        ["--events", str(log), "failed-upstream", "--namespace", fct["namespace"], "--name", fct["name"]]
    )
    assert code == 4 and "analytics.marts.shop.fct_daily_orders.build.run  FAILED" in out
    assert "ran by: JOB " in out and "/ ecommerce_orders.fct_daily_orders  FAILED" in out
