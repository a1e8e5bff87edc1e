"""Test harness: an isolated AIRFLOW_HOME with SQLite, the real OpenLineage provider writing to an event log.

The environment is set at import time, before anything imports Airflow, so every test (and every
``airflow`` subprocess it starts) sees the same isolated installation. Each pytest-xdist worker gets
its own AIRFLOW_HOME and metadata database, removed as the worker exits (unless
``LINEAGE_PLUS_KEEP_TEST_HOME`` is set). Events go through the transport the README recommends,
``EventLogTransport`` (size limits, values policy and redaction on every event), to one log per run.

A *recording* (one :meth:`AirflowRunner.run`) must be the only one of its DAG and logical date in the
process. Skip records are emitted at most once per runId, and a task instance's runId is a function of
the DAG, the task, the try and the logical date: a second recording of the same DAG and date would find
every skip record already claimed (by the ledger file today, by the metadata database tomorrow) and get
none. So the runner refuses a repeated (DAG, logical date) with a message naming the fix, instead of
handing back a run silently missing its records.

A fixture that records several runs gives them to :meth:`AirflowRunner.run_many`, which makes them in one
Airflow process (``demo/dag_batch.py``) and still hands back each run's own events.

Every event a recording leaves is validated (``openlineage_spec.validate_events``) before it is handed back:
a test cannot read an event that is not valid against its exact schema versions.
"""

from __future__ import annotations

import atexit
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from demo.dag_batch import DagBatch, dags_test_argv
from tests.support.openlineage_spec import validate_events

REPO = Path(__file__).resolve().parents[2]
TESTS = Path(__file__).resolve().parents[1]
_worker = os.environ.get("PYTEST_XDIST_WORKER", "main")
_HOME = Path(tempfile.mkdtemp(prefix=f"alp-airflow-home-{_worker}-"))


def _remove_home(owner: int) -> None:
    """Remove the home as the process that made it exits (a forked child leaving through the
    interpreter runs its parent's exit handlers too, and must not remove the home its parent uses)."""
    if os.getpid() == owner:
        shutil.rmtree(_HOME, ignore_errors=True)


if not os.environ.get("LINEAGE_PLUS_KEEP_TEST_HOME"):  # set it to look at the home afterwards
    atexit.register(_remove_home, os.getpid())
_SESSION_LOG = _HOME / "events.jsonl"
_BASE_DAGS = _HOME / "dags"
_BASE_DAGS.mkdir()


def store_of(log: Path) -> Path:
    """The lineage store the transport writes for ``log`` (the default beside an event log: ``.db``)."""
    return log.with_suffix(".db")


def spool_of(log: Path) -> Path:
    """The spool the transport writes events to that the store of ``log`` did not take."""
    return log.with_name(f"{log.stem}.spool{log.suffix}")


def event_log_transport(log: Path) -> str:
    """``[openlineage] transport``: the package's transport writing to the store of ``log`` (spooling to
    :func:`spool_of`); :func:`read_events` reads them back, and a recording leaves them in ``log`` too."""
    return json.dumps(
        {
            "type": "airflow_lineage_plus.transport.EventLogTransport",
            "log_file_path": str(spool_of(log)),
            "store_url": f"sqlite:///{store_of(log).absolute()}",
        }
    )


BASE_ENV: dict[str, str] = {
    "AIRFLOW_HOME": str(_HOME),
    "AIRFLOW__CORE__LOAD_EXAMPLES": "False",
    "AIRFLOW__CORE__DAGS_FOLDER": str(_BASE_DAGS),
    "AIRFLOW__DATABASE__SQL_ALCHEMY_CONN": f"sqlite:///{_HOME / 'airflow.db'}",
    "AIRFLOW__CORE__EXECUTION_API_SERVER_URL": "http://localhost:8080/execution/",
    "AIRFLOW__LOGGING__LOGGING_LEVEL": "INFO",
    "AIRFLOW__OPENLINEAGE__NAMESPACE": "test-airflow",
    "AIRFLOW__OPENLINEAGE__TRANSPORT": event_log_transport(_SESSION_LOG),
    "AIRFLOW__LINEAGE_PLUS__EVENT_LOG_PATH": str(_SESSION_LOG),
    # the one configuration line the README asks for: skip-state facets on the provider's own events
    "AIRFLOW__OPENLINEAGE__CUSTOM_RUN_FACETS": "airflow_lineage_plus.skip.run_facets",
    "OPENLINEAGE_CLIENT_LOGGING": "WARNING",
    # no background retry process per spool (it outlives the test, and would send a spool on while the
    # test still reads it); the tests of the retry itself turn it on (tests/deliver/test_collector_writer.py,
    # tests/deploy/test_production_topology.py)
    "AIRFLOW__LINEAGE_PLUS__SPOOL_RETRY_SECONDS": "0",
    # No bytecode written by the processes tests start (installed packages were compiled at install:
    # scripts/bootstrap.sh). Tests rewrite DAG files between runs, often within one second and to the same
    # size (one SQL hash for another), and Python's cache, keyed on whole-second mtime and size, would
    # then run the old file.
    "PYTHONDONTWRITEBYTECODE": "1",
}
os.environ.update(BASE_ENV)


_RECORDED: dict[tuple[str, str], Path] = {}


class UnreadTransportError(RuntimeError):
    """A run whose transport writes where the runner does not read: its events would go unvalidated."""


#: the ``type`` names of the transports whose files :func:`read_events` reads
_FILE_TRANSPORTS = {"airflow_lineage_plus.transport.EventLogTransport", "lineage_plus_event_log", "file"}


def log_written_by(transport: str, log: Path, env: dict[str, str]) -> Path | None:
    """The event log whose :func:`read_events` are every event the transport config ``transport`` (the
    ``[openlineage] transport`` JSON) writes in a run with ``env``, or None when it writes elsewhere: a
    file transport (or a ``transform`` around one) writing a log, or that log's spool (:func:`spool_of`),
    and no store but the one beside that log. ``log``: the runner's log, where a transport that names no
    file writes (``[lineage_plus] event_log_path``)."""
    config = json.loads(transport)
    if config.get("type") == "transform":
        config = config.get("transport") or {}
    if config.get("type") not in _FILE_TRANSPORTS:
        return None
    collector = config.get("collector_url") or env.get("AIRFLOW__LINEAGE_PLUS__COLLECTOR_URL", "")
    if collector.strip().lower() not in ("", "none"):
        return None
    written = Path(config.get("log_file_path") or env.get("AIRFLOW__LINEAGE_PLUS__EVENT_LOG_PATH") or log)
    spool = ".spool" + written.suffix
    if written.name.endswith(spool):  # the harness's spool: the log it belongs to
        written = written.with_name(written.name[: -len(spool)] + written.suffix)
    store = config.get("store_url") or env.get("AIRFLOW__LINEAGE_PLUS__STORE_URL") or None
    if store not in (None, "none", f"sqlite:///{store_of(written).absolute()}"):
        return None
    return written


class RepeatedRecordingError(RuntimeError):
    """A DAG recorded twice for one logical date in one test process (its skip records would be missing)."""


def _recording_key(dag_id: str, logical_date: str | None) -> tuple[str, str] | None:
    """(DAG, logical date in UTC) of a recording; ``None`` without a date (``dags test`` uses "now")."""
    if not logical_date:
        return None
    moment = datetime.fromisoformat(logical_date)
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=timezone.utc)
    return dag_id, moment.astimezone(timezone.utc).isoformat()


def claim_recording(dag_id: str, logical_date: str | None, workdir: Path) -> None:
    """Register a recording; :class:`RepeatedRecordingError` if this DAG and date were recorded before."""
    key = _recording_key(dag_id, logical_date)
    if key is None:
        return
    if key in _RECORDED:
        raise RepeatedRecordingError(
            f"{dag_id} was already recorded for logical date {key[1]} in this test process (in "
            f"{_RECORDED[key]}): its task instances' runIds, and so their skip records, were claimed then, "
            "and this recording would get none. Give this recording its own logical date, or reuse the "
            "first recording (a session- or module-scoped fixture)."
        )
    _RECORDED[key] = workdir


def read_events(path: Path) -> list[dict[str, Any]]:
    """The events written for the event log ``path``: when its store (:func:`store_of`) exists, those
    stored (in the order stored), then the lines of its spool that the store does not hold yet (the spool
    is :func:`spool_of` for the harness's runs, ``path`` itself as the transport names it by default;
    a recording's export in ``path`` holds only stored lines); else the lines of ``path``."""
    return [json.loads(raw) for raw in _written(path)]


def _written(path: Path) -> list[bytes]:
    from airflow_lineage_plus.exceptions import StoreDamaged, StoreUnavailable

    if not store_of(path).exists():
        return [line.encode() for line in _raw_lines(path)]
    try:
        stored = stored_payloads(store_of(path))
    except StoreDamaged:
        raise
    except StoreUnavailable:  # its writer is creating its tables: nothing stored yet
        stored = []
    known = set(stored)
    spooled = [line.encode() for spool in (spool_of(path), path) for line in _raw_lines(spool)]
    return stored + [line for line in spooled if line not in known]


def stored_payloads(store: Path) -> list[bytes]:
    """Every payload of a SQLite lineage store, in the order stored."""
    from airflow_lineage_plus.store import LineageStore, sqlite_url

    lineage = LineageStore(sqlite_url(store), create=False)
    try:
        return lineage.all_payloads()
    finally:
        lineage.close()


def export_events(log: Path) -> None:
    """Write the events of the store of ``log`` (and what its spool still holds) to ``log`` as JSONL, for
    the tests and commands that read an event log (``--events``)."""
    if store_of(log).exists():
        log.write_bytes(b"".join(raw + b"\n" for raw in _written(log)))


def written_text(path: Path) -> str:
    """Every event written for the event log ``path`` (see :func:`read_events`) as the JSON text stored."""
    return "\n".join(raw.decode() for raw in _written(path))


def _raw_lines(path: Path) -> list[str]:
    if not path.exists():
        return []
    return [line for line in path.read_text().splitlines() if line.strip()]


def _lines(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in _raw_lines(path)]


@dataclass
class DagRunResult:
    """What one real ``airflow dags test`` run left behind."""

    dag_id: str
    returncode: int
    output: str
    events: list[dict[str, Any]] = field(default_factory=list)

    def task_events(self, task_id: str | None = None) -> list[dict[str, Any]]:
        prefix = f"{self.dag_id}."
        return [
            e
            for e in self.events
            if e.get("job", {}).get("name", "").startswith(prefix)
            and (task_id is None or e["job"]["name"] == prefix + task_id)
        ]

    def dag_events(self) -> list[dict[str, Any]]:
        return [e for e in self.events if e.get("job", {}).get("name") == self.dag_id]

    def runs_by_job(self) -> dict[str, set[str]]:
        runs: dict[str, set[str]] = {}
        for event in self.task_events():
            runs.setdefault(event["job"]["name"], set()).add(event["run"]["runId"])
        return runs


@dataclass(frozen=True)
class Recording:
    """One DAG run of :meth:`AirflowRunner.run_many`: what ``airflow dags test`` is given, and the
    environment of that run only (read when the DAG file is parsed, as a deploy would change it)."""

    dag_id: str
    logical_date: str | None = None
    conf: dict[str, Any] | None = None
    env: dict[str, str] = field(default_factory=dict)

    def argv(self) -> list[str]:
        return dags_test_argv(self.dag_id, self.logical_date, self.conf)


class AirflowRunner:
    """Runs DAG files for real with ``airflow dags test`` in a subprocess and returns their events."""

    def __init__(self, workdir: Path) -> None:
        self.workdir = workdir

    def _prepare(
        self,
        dag_files: tuple[Path | str, ...],
        name: str,
        env: dict[str, str] | None,
        readable: bool = False,
    ) -> tuple[dict[str, str], Path, Path | None]:
        """(environment, event log, the log its transport writes) of recordings named ``name``; the DAG
        files are copied into their DAGs folder (its path is in every event's ``airflow`` facet) only when
        the runner can read what the transport writes, or is told where (``readable``)."""
        dags = self.workdir / f"dags-{name}"
        log = self.workdir / f"events-{name}.jsonl"
        run_env = {
            **os.environ,
            "AIRFLOW__CORE__DAGS_FOLDER": str(dags),
            "AIRFLOW__OPENLINEAGE__TRANSPORT": event_log_transport(log),
            "AIRFLOW__LINEAGE_PLUS__EVENT_LOG_PATH": str(log),
            **(env or {}),
        }
        transport = run_env["AIRFLOW__OPENLINEAGE__TRANSPORT"]
        written = log_written_by(transport, log, run_env)
        if written is None and not readable:
            raise UnreadTransportError(
                f"the runs of {name} send their events where the runner does not read ({transport}): "
                "pass events_from=<a reader of them> so they are validated, or expect_events=False"
            )
        dags.mkdir(parents=True, exist_ok=True)
        for dag_file in dag_files:
            shutil.copy(Path(dag_file), dags / Path(dag_file).name)
        return run_env, log, written

    def _finish(self, run_env: dict[str, str], log: Path) -> None:
        if json.loads(run_env["AIRFLOW__OPENLINEAGE__TRANSPORT"]).get("log_file_path") == str(spool_of(log)):
            export_events(log)  # not when a test's own transport makes ``log`` the spool

    def run_many(
        self,
        *dag_files: Path | str,
        recordings: list[Recording],
        env: dict[str, str] | None = None,
        name: str | None = None,
        timeout: float = 900.0,
    ) -> list[DagRunResult]:
        """Run ``recordings`` one after another in one Airflow process (:class:`demo.dag_batch.DagBatch`)
        and return one :class:`DagRunResult` per recording, each holding that run's events only, each
        validated against the spec. Every run sees ``env``, then its own :attr:`Recording.env`. The events
        go to one log, ``events-<name>.jsonl``, and the DAG files to ``dags-<name>``; ``name`` defaults to
        the DAG id when every recording runs the same DAG. A run's events are those written between its
        start and the end of everything it handed to the provider's process pool."""
        dag_ids = {recording.dag_id for recording in recordings}
        if name is None and len(dag_ids) != 1:
            raise ValueError(
                "run_many of several DAGs needs name= (its log and DAGs folder are named for it)"
            )
        name = name or recordings[0].dag_id
        for recording in recordings:
            claim_recording(recording.dag_id, recording.logical_date, self.workdir)
        run_env, log, written = self._prepare(dag_files, name, env)
        assert written is not None  # _prepare refuses a transport the runner cannot read
        results: list[DagRunResult] = []
        batch = DagBatch.start(run_env, self.workdir)
        try:
            seen: set[bytes] = set()
            for number, recording in enumerate(recordings):
                output = self.workdir / f"output-{name}-{number}.log"
                status = batch.run(recording.argv(), recording.env, output, timeout=timeout)
                new = [raw for raw in _written(written) if raw not in seen]
                seen.update(new)
                events = [json.loads(raw) for raw in new]
                validate_events(events)  # every event a test makes is checked against its exact schemas
                results.append(DagRunResult(recording.dag_id, status, output.read_text(), events))
        finally:
            batch.close()
        self._finish(run_env, log)
        return results

    def run(
        self,
        *dag_files: Path | str,
        dag_id: str,
        conf: dict[str, Any] | None = None,
        env: dict[str, str] | None = None,
        logical_date: str | None = None,
        wait_for_dag_event: float = 60.0,
        timeout: float = 300.0,
        python: Path | None = None,
        events_from: Callable[[], list[dict[str, Any]]] | None = None,
        expect_events: bool = True,
    ) -> DagRunResult:
        """Run ``dag_id`` and return its events, each validated against the spec. A test whose transport
        writes where the runner does not read passes ``events_from`` (the run's events, read where they
        went: validated the same way), or ``expect_events=False`` when none may be written (a backend down,
        a full disk); otherwise :class:`UnreadTransportError`, so no event goes unvalidated."""
        claim_recording(dag_id, logical_date, self.workdir)
        readable = events_from is not None or not expect_events
        run_env, log, written = self._prepare(dag_files, dag_id, env, readable=readable)
        # ``python``: the interpreter of another virtualenv with the same Airflow (default: this one's)
        cmd = [
            str(Path(python or sys.executable).parent / "airflow"),
            *Recording(dag_id, logical_date, conf).argv(),
        ]
        proc = subprocess.run(
            cmd, env=run_env, capture_output=True, text=True, timeout=timeout, cwd=self.workdir
        )
        output = proc.stdout + proc.stderr
        read = events_from or (lambda: read_events(written or log))
        deadline = time.monotonic() + wait_for_dag_event
        events = read()
        # DAG-run events are emitted from the provider's process pool: wait until the terminal one lands.
        while time.monotonic() < deadline and not any(
            e.get("job", {}).get("name") == dag_id and e.get("eventType") in {"COMPLETE", "FAIL"}
            for e in events
        ):
            time.sleep(0.2)
            events = read()
        validate_events(events)  # every event a test makes is checked against its exact schemas
        self._finish(run_env, log)
        return DagRunResult(dag_id=dag_id, returncode=proc.returncode, output=output, events=events)
