"""The OpenLineage endpoint's writer process on its own: its frames, whatever else writes to its stdout."""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from airflow_lineage_plus.ui import ingest_process
from tests.support import openlineage_spec

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


def _answers(stdout: bytes) -> dict[int, dict[str, object]]:
    answers, rest = {}, stdout
    while rest:
        number, length = ingest_process._ANSWER.unpack(rest[: ingest_process._ANSWER.size])
        start = ingest_process._ANSWER.size
        answers[number] = json.loads(rest[start : start + length])
        rest = rest[start + length :]
    return answers


def _named(name: str) -> bytes:
    return json.dumps({**EVENT, "job": {"namespace": "ingest-process", "name": name}}).encode()


def test_requests_sent_together_are_each_answered_with_their_own_stored_and_duplicate_counts(
    tmp_path: Path,
) -> None:
    store = tmp_path / "store.db"
    env = {**os.environ, "AIRFLOW__LINEAGE_PLUS__STORE_URL": f"sqlite:///{store}"}
    assert openlineage_spec.validate_events([json.loads(_named(name)) for name in "abc"]) == 3
    requests = _frame(1, _named("a"), False) + _frame(2, _named("b"), False)
    requests += _frame(3, _named("a"), False) + _frame(4, b"{}", False)
    requests += _frame(5, b"[" + _named("c") + b"," + _named("b") + b", 7]", True)
    done = subprocess.run(
        [sys.executable, "-m", ingest_process.__name__],
        input=requests,
        env=env,
        capture_output=True,
        timeout=100,
    )
    assert done.returncode == 0, done.stderr.decode()[-3000:]
    answers = _answers(done.stdout)
    assert answers[1] == {"received": 1, "stored": 1, "duplicates": 0, "failed": []}
    assert answers[2] == {"received": 1, "stored": 1, "duplicates": 0, "failed": []}
    assert answers[3] == {"received": 1, "stored": 0, "duplicates": 1, "failed": []}
    assert answers[4]["error"] == "bad"
    assert answers[5]["received"] == 3 and (answers[5]["stored"], answers[5]["duplicates"]) == (1, 1)
    assert [index for index, _ in answers[5]["failed"]] == [2]  # type: ignore[union-attr]
    assert len(answers) == 5


def test_the_frames_already_sent_are_read_as_one_group_and_a_partial_one_waits_for_its_rest() -> None:
    read, write = os.pipe()
    try:
        first = _frame(1, b"one", False) + _frame(2, b"two", True) + _frame(3, b"three", False)
        partial = _frame(4, b"four", False)
        os.write(write, first + partial[:-2])
        frames = ingest_process._Frames(read)
        assert frames.group() == [(1, False, b"one"), (2, True, b"two"), (3, False, b"three")]
        os.write(write, partial[-2:])
        os.close(write)
        write = -1
        assert frames.group() == [(4, False, b"four")]
        assert frames.group() is None
    finally:
        os.close(read)
        if write >= 0:
            os.close(write)


def test_bodies_larger_than_the_pipe_and_requests_in_flight_together_all_get_their_answers(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    store = tmp_path / "store.db"
    monkeypatch.setenv("AIRFLOW__LINEAGE_PLUS__STORE_URL", f"sqlite:///{store}")
    big = b"[" + b",".join(_named(f"big-{n}") for n in range(4000)) + b"]"
    assert len(big) > 1 << 20  # larger than a pipe holds (64 KiB, at most 1 MiB)

    async def send() -> list[ingest_process.Answer]:
        writer = ingest_process.IngestProcess()
        requests = [writer.submit(big, True)] + [writer.submit(_named(f"one-{n}"), False) for n in range(20)]
        return list(await asyncio.gather(*requests))

    answers = asyncio.run(send())
    assert (answers[0]["received"], answers[0]["stored"]) == (4000, 4000)
    assert [answer["stored"] for answer in answers[1:]] == [1] * 20
