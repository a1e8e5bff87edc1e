"""The OpenLineage endpoint's writer process on its own: its frames, whatever else writes to its stdout."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from airflow_lineage_plus.ui import ingest_process

pytestmark = pytest.mark.timeout(120)

#: the child, started after a log handler was bound to its stdout (as a ``[logging] logging_config_class``
#: with ``ext://sys.stdout`` does): what it logs must reach stderr, never the frames
CHILD = """
import logging, sys
logging.basicConfig(stream=sys.stdout, level=logging.WARNING, force=True)
from airflow_lineage_plus.ui.ingest_process import main
main()
"""


EVENT = {
    "eventType": "COMPLETE",
    "eventTime": "2026-12-06T18:00:00.000Z",
    "run": {"runId": "01938f4e-0000-7000-8000-000000000001"},
    "job": {"namespace": "ingest-process", "name": "job"},
    "producer": "https://example.com/ingest-process-test",
    "schemaURL": "https://openlineage.io/spec/2-0-2/OpenLineage.json#/$defs/RunEvent",
}


def _frame(number: int, body: bytes, batch: bool) -> bytes:
    return ingest_process._REQUEST.pack(number, int(batch), len(body)) + body


def test_log_lines_bound_to_stdout_reach_stderr_and_every_answer_frame_stays_whole(tmp_path: Path) -> None:
    not_a_dir = tmp_path / "a-file"
    not_a_dir.write_text("")
    env = {
        **os.environ,
        # a store that cannot be opened: each request's work logs a warning, then answers "unavailable"
        "AIRFLOW__LINEAGE_PLUS__STORE_URL": f"sqlite:///{not_a_dir}/store.db",
    }
    requests = _frame(1, json.dumps(EVENT).encode(), False) + _frame(2, b"not json", False)
    requests += _frame(3, b"[1, 2]", True)
    done = subprocess.run(
        [sys.executable, "-c", CHILD], input=requests, env=env, capture_output=True, timeout=100
    )
    assert done.returncode == 0, done.stderr.decode()[-3000:]
    answers, rest = {}, done.stdout
    while rest:
        number, length = ingest_process._ANSWER.unpack(rest[: ingest_process._ANSWER.size])
        start = ingest_process._ANSWER.size
        answers[number] = json.loads(rest[start : start + length])
        rest = rest[start + length :]
    assert set(answers) == {1, 2, 3}
    assert answers[1] == {"error": "unavailable", "detail": "The lineage store cannot be written now"}
    assert answers[2]["error"] == "bad" and answers[2]["detail"].startswith("the body is not JSON")
    assert answers[3]["received"] == 2 and [index for index, _ in answers[3]["failed"]] == [0, 1]
    stderr = done.stderr.decode()
    assert stderr.count("OpenLineage endpoint: could not store events") == 1, stderr[-3000:]
