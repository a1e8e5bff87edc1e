"""Tutorial-style self-emitted events fold into the task instance's run with the transformer only."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.support.harness import AirflowRunner
from tests.support.openlineage_spec import validate_events

pytestmark = pytest.mark.airflow

DAGS = Path(__file__).parent / "dags"


def _transport(log: Path, fold: bool) -> str:
    file_transport = {"type": "file", "log_file_path": str(log), "append": True}
    if not fold:
        return json.dumps(file_transport)
    return json.dumps(
        {
            "type": "transform",
            "transformer_class": "airflow_lineage_plus.fold.FoldIntoTaskRun",
            "transport": file_transport,
        }
    )


@pytest.mark.parametrize("fold", [True, False], ids=["with-transformer", "without-transformer"])
def test_self_emitted_events_give_one_run_with_the_transformer_and_two_without(
    airflow_runner: AirflowRunner, tmp_path: Path, fold: bool
) -> None:
    log = airflow_runner.workdir / "events-self_emitting.jsonl"
    config = _transport(log, fold)
    result = airflow_runner.run(
        DAGS / "self_emitting.py",
        dag_id="self_emitting",
        env={"AIRFLOW__OPENLINEAGE__TRANSPORT": config, "OPENLINEAGE__TRANSPORT": config},
    )
    assert result.returncode == 0, result.output[-4000:]
    assert validate_events(result.events) == len(result.events)
    runs = {e["run"]["runId"] for e in result.events if e["job"]["name"] != "self_emitting"}
    if fold:
        assert len(runs) == 1
        events = result.task_events("export_report")
        assert [e["eventType"] for e in events] == ["START", "RUNNING", "RUNNING", "COMPLETE"]
        folded = [e for e in events if e["eventType"] == "RUNNING"]
        assert all(
            e["run"]["facets"]["lineagePlus_foldedFrom"]["jobName"] == "export_report_job" for e in folded
        )
        assert folded[0]["outputs"][0]["facets"]["schema"]["fields"][0]["name"] == "revenue"
        assert folded[0]["run"]["facets"]["parent"]["job"]["name"] == "self_emitting"
    else:
        assert len(runs) == 2
        assert any(e["job"]["name"] == "export_report_job" for e in result.events)
