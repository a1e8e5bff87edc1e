"""A stand-in for a Marquez server, for tests: stdlib HTTP on 127.0.0.1, shaped as Marquez's openapi.yml.

It ingests OpenLineage events like ``POST /api/v1/lineage`` and answers from them with its own,
deliberately plain implementation (no code shared with ``airflow_lineage_plus.graph``), folding the
events **in the order they arrived**, the way Marquez 0.51 does (``OpenLineageDao.updateMarquezModel``,
``docs/graph.md`` "Marquez source"):

* **Runs**: the state is the last *processed* event's (START/RUNNING/OTHER -> RUNNING, COMPLETE ->
  COMPLETED, FAIL -> FAILED, ABORT -> ABORTED): a late or repeated START turns a finished run back to
  RUNNING (MarquezProject/marquez#2264). ``startedAt``/``endedAt`` are the times of the last processed
  START/RUNNING and terminal events. A job's ``latestRun`` is the run of its last processed event; its
  ``latestRuns`` and ``/runs`` are ordered by ``startedAt``, newest first.
* **Edges** are those of the job's *current version*: a terminal event makes the run's inputs and outputs
  (all its events') the job's current ones, and an event with no inputs (no outputs) drops the job's
  current inputs (outputs). So a job whose new run stops reading a dataset loses that edge, and a skip
  record (an ABORT with no outputs) removes the job's output edges. A job event (static lineage, no run)
  is a new job version whose edges are the event's inputs and outputs.
* **Job versions** (``/jobs/{job}/versions``): one per distinct inputs and outputs a job had as its current
  version (a finished run's, a job event's), created when first made; its id is the job's
  ``currentVersion`` and the ``jobVersion`` of the runs that made it.
* **Dataset versions**: each *write* (an output) makes a version per run and schema: a run's START and
  COMPLETE with the same schema are one version, every new run writing is a new version even with the
  same schema, and an output without a schema facet is a version without fields. A *read* makes a
  version only for a dataset that has none. Versions are listed newest first by creation time (the time
  of the event that made them); a dataset's ``fields`` are those of its newest version with fields. A
  version a run wrote names it (``createdByRun``, with the run's job version).

Knobs: ``api_key`` (Bearer check), ``delay`` (seconds before answering), ``fail_status``,
``ignore_offset`` (every page answered as the first). :class:`SilentMarquez` is a Marquez that accepts
connections and never answers.
"""

from __future__ import annotations

import json
import socket
import threading
import time
import uuid
from collections import deque
from datetime import datetime, timezone
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import parse_qs, unquote, urlparse

from airflow_lineage_plus.timestamps import parse_iso

TERMINAL = {"COMPLETE": "COMPLETED", "FAIL": "FAILED", "ABORT": "ABORTED"}
_IDS = uuid.UUID("8a1c5a4e-6a0b-4a55-9a53-7a1d2f6e9b10")


def _time(value: str) -> datetime:
    return parse_iso(value)  # Marquez reads `Z` times on every Python; fromisoformat does not on 3.10


def _iso(moment: datetime | None) -> str | None:
    return None if moment is None else moment.astimezone(timezone.utc).isoformat().replace("+00:00", "Z")


def _uuid(*parts: object) -> str:
    return str(uuid.uuid5(_IDS, json.dumps(parts, sort_keys=True, default=str)))


def _schema(item: dict[str, Any]) -> tuple[tuple[str, str, str | None], ...] | None:
    schema = (item.get("facets") or {}).get("schema")
    if not isinstance(schema, dict):
        return None
    return tuple((f["name"], f.get("type") or "", f.get("description")) for f in schema.get("fields") or [])


def _dataset(state: dict[str, Any], item: dict[str, Any], moment: datetime) -> dict[str, Any]:
    key = (item["namespace"], item["name"])
    record = state["datasets"].setdefault(
        key, {"key": key, "facets": [], "versions": [], "created": moment, "updated": moment, "columns": None}
    )
    record["updated"] = moment
    facets = item.get("facets") or {}
    record["facets"].append((moment, facets))
    lineage = facets.get("columnLineage")
    if isinstance(lineage, dict) and (record["columns"] is None or moment >= record["columns"][0]):
        record["columns"] = (moment, lineage.get("fields") or {})
    return record


def _version(record: dict[str, Any], fields: Any, run_id: str | None, moment: datetime) -> None:
    """A dataset version for (schema, run); the same pair again is the same version (Marquez's upsert)."""
    version_id = _uuid(record["key"], fields, run_id)
    if all(v["id"] != version_id for v in record["versions"]):
        record["versions"].append({"id": version_id, "fields": fields, "run": run_id, "created": moment})


def _job(state: dict[str, Any], event: dict[str, Any], moment: datetime) -> dict[str, Any]:
    key = (event["job"]["namespace"], event["job"]["name"])
    job = state["jobs"].setdefault(
        key,
        {
            "key": key,
            "inputs": set(),
            "outputs": set(),
            "facets": {},
            "created": moment,
            "runs": [],
            "latest": None,
            "versions": {},
        },
    )
    job["updated"] = moment
    job["facets"].update(event["job"].get("facets") or {})
    return job


def _run(state: dict[str, Any], job: dict[str, Any], run_id: str, moment: datetime) -> dict[str, Any]:
    run = state["runs"].get(run_id)
    if run is None:
        run = state["runs"][run_id] = {
            "id": run_id,
            "job": job["key"],
            "state": "NEW",
            "started": None,
            "ended": None,
            "created": moment,
            "facets": [],
            "inputs": set(),
            "outputs": set(),
        }
        job["runs"].append(run)
    run["updated"] = moment
    return run


def _fold(state: dict[str, Any], event: dict[str, Any]) -> None:
    """One event, as Marquez processes it when it arrives."""
    moment = _time(event["eventTime"])
    if "job" not in event:
        if "dataset" in event:  # a dataset event: a write without a run
            _version(_dataset(state, event["dataset"], moment), _schema(event["dataset"]), None, moment)
        return
    job = _job(state, event, moment)
    run_id = (event.get("run") or {}).get("runId")
    run = _run(state, job, run_id, moment) if run_id else None
    inputs, outputs = event.get("inputs") or [], event.get("outputs") or []
    for item in inputs:
        record = _dataset(state, item, moment)
        if not record["versions"]:
            _version(record, _schema(item), None, moment)
        if run is not None:
            run["inputs"].add(record["key"])
    for item in outputs:
        record = _dataset(state, item, moment)
        _version(record, _schema(item), run_id, moment)
        if run is not None:
            run["outputs"].add(record["key"])
    if not inputs:
        job["inputs"] = set()  # markInputOrOutputDatasetAsPreviousFor(job, INPUT)
    if not outputs:
        job["outputs"] = set()
    if run is None:
        # a job event (static lineage): a new job version whose inputs and outputs are the event's
        job["inputs"] = {_dataset(state, item, moment)["key"] for item in inputs}
        job["outputs"] = {_dataset(state, item, moment)["key"] for item in outputs}
        _job_version(job, job["inputs"], job["outputs"], moment)
        return
    job["latest"] = run
    run["facets"].append((moment, (event.get("run") or {}).get("facets") or {}))
    kind = event.get("eventType")
    if kind in TERMINAL:
        run["state"], run["ended"] = TERMINAL[kind], moment
        # a new job version: the run's inputs and outputs become the job's current ones (the edges)
        job["inputs"] = set(run["inputs"]) or job["inputs"]
        job["outputs"] = set(run["outputs"]) or job["outputs"]
        _job_version(job, job["inputs"], job["outputs"], moment)
    else:
        run["state"], run["started"] = "RUNNING", moment


def _version_id(key: tuple[str, str], inputs: set[Any], outputs: set[Any]) -> str:
    return _uuid(key, sorted(inputs), sorted(outputs))


def _job_version(job: dict[str, Any], inputs: set[Any], outputs: set[Any], moment: datetime) -> None:
    """The job version of these inputs and outputs (the same pair again is the same version)."""
    version_id = _version_id(job["key"], inputs, outputs)
    if version_id not in job["versions"]:
        job["versions"][version_id] = {
            "id": version_id,
            "created": moment,
            "inputs": sorted(inputs),
            "outputs": sorted(outputs),
        }


def _by_time(stamped: list[tuple[datetime, dict[str, Any]]]) -> dict[str, Any]:
    """Facets merged oldest first by event time (Marquez aggregates them ordered by lineage_event_time)."""
    merged: dict[str, Any] = {}
    for _moment, facets in sorted(stamped, key=lambda pair: pair[0]):
        merged.update(facets)
    return merged


def _newest_versions(record: dict[str, Any]) -> list[dict[str, Any]]:
    order = {id(v): i for i, v in enumerate(record["versions"])}
    return sorted(record["versions"], key=lambda v: (v["created"], order[id(v)]), reverse=True)


def _runs_newest_first(job: dict[str, Any]) -> list[dict[str, Any]]:
    minimum = datetime.min.replace(tzinfo=timezone.utc)
    return sorted(
        job["runs"], key=lambda r: (r["started"] is not None, r["started"] or minimum), reverse=True
    )


class MarquezState:
    """Everything the fake knows, recomputed from the stored events (in arrival order) on each request."""

    def __init__(self) -> None:
        self.events: list[dict[str, Any]] = []
        self.lock = threading.Lock()

    def ingest(self, event: dict[str, Any]) -> None:
        with self.lock:
            self.events.append(event)

    def build(self) -> dict[str, Any]:
        with self.lock:
            events = list(self.events)
        state: dict[str, Any] = {"jobs": {}, "datasets": {}, "runs": {}}
        for event in events:
            _fold(state, event)
        return state

    # -- shapes: every property the spec's examples show, null where unknown (as Marquez sends them) ---
    @staticmethod
    def run_json(run: dict[str, Any]) -> dict[str, Any]:
        duration = None
        if run["started"] is not None and run["ended"] is not None:
            duration = int((run["ended"] - run["started"]).total_seconds() * 1000)
        facets = _by_time(run["facets"])
        nominal = facets.get("nominalTime") or {}
        return {
            "id": run["id"],
            "createdAt": _iso(run["created"]),
            "updatedAt": _iso(run["updated"]),
            "nominalStartTime": _iso(_time(nominal["nominalStartTime"]))
            if nominal.get("nominalStartTime")
            else None,
            "nominalEndTime": _iso(_time(nominal["nominalEndTime"]))
            if nominal.get("nominalEndTime")
            else None,
            "state": run["state"],
            "startedAt": _iso(run["started"]),
            "endedAt": _iso(run["ended"]),
            "durationMs": duration,
            "args": {},
            "facets": facets,
        }

    def job_json(self, job: dict[str, Any]) -> dict[str, Any]:
        namespace, name = job["key"]
        location = (job["facets"].get("sourceCodeLocation") or {}).get("url")
        return {
            "id": {"namespace": namespace, "name": name},
            "type": "BATCH",
            "name": name,
            "simpleName": name.rsplit(".", 1)[-1],
            "createdAt": _iso(job["created"]),
            "updatedAt": _iso(job["updated"]),
            "namespace": namespace,
            "inputs": [{"namespace": ns, "name": n} for ns, n in sorted(job["inputs"])],
            "outputs": [{"namespace": ns, "name": n} for ns, n in sorted(job["outputs"])],
            "location": location,
            "context": {},
            "description": (job["facets"].get("documentation") or {}).get("description"),
            "latestRun": self.run_json(job["latest"]) if job["latest"] is not None else None,
            "latestRuns": [self.run_json(r) for r in _runs_newest_first(job)[:10]],
            "facets": job["facets"],
            "currentVersion": _version_id(job["key"], job["inputs"], job["outputs"]),
        }

    @staticmethod
    def fields(record: dict[str, Any]) -> list[dict[str, Any]]:
        """The fields of the dataset's newest version that has any."""
        for version in _newest_versions(record):
            if version["fields"]:
                return [{"name": n, "type": t, "tags": [], "description": d} for n, t, d in version["fields"]]
        return []

    def dataset_json(self, record: dict[str, Any]) -> dict[str, Any]:
        namespace, name = record["key"]
        facets = _by_time(record["facets"])
        versions = _newest_versions(record)
        written = [v["created"] for v in versions if v["run"] is not None]
        return {
            "id": {"namespace": namespace, "name": name},
            "type": "DB_TABLE",
            "name": name,
            "physicalName": name,
            "createdAt": _iso(record["created"]),
            "updatedAt": _iso(record["updated"]),
            "namespace": namespace,
            "sourceName": "default",
            "fields": self.fields(record),
            "tags": [],
            "lastModifiedAt": _iso(max(written)) if written else None,
            "description": (facets.get("documentation") or {}).get("description"),
            "facets": facets,
            "currentVersion": versions[0]["id"] if versions else None,
        }

    @staticmethod
    def job_version_json(job: dict[str, Any], version: dict[str, Any]) -> dict[str, Any]:
        namespace, name = job["key"]
        return {
            "id": {"namespace": namespace, "name": name, "version": version["id"]},
            "type": "BATCH",
            "name": name,
            "version": version["id"],
            "createdAt": _iso(version["created"]),
            "namespace": namespace,
            "inputs": [{"namespace": ns, "name": n} for ns, n in version["inputs"]],
            "outputs": [{"namespace": ns, "name": n} for ns, n in version["outputs"]],
            "location": (job["facets"].get("sourceCodeLocation") or {}).get("url"),
            "context": {},
            "description": (job["facets"].get("documentation") or {}).get("description"),
            "facets": {},
        }

    def version_json(
        self, record: dict[str, Any], version: dict[str, Any], runs: dict[str, Any]
    ) -> dict[str, Any]:
        namespace, name = record["key"]
        run = runs.get(version["run"]) if version["run"] else None
        created_by = None
        if run is not None:  # the run that wrote this version, with its job version (as Marquez says)
            created_by = {
                **self.run_json(run),
                "jobVersion": {
                    "namespace": run["job"][0],
                    "name": run["job"][1],
                    "version": _version_id(run["job"], run["inputs"], run["outputs"]),
                },
            }
        return {
            "id": {"namespace": namespace, "name": name, "version": version["id"]},
            "type": "DB_TABLE",
            "name": name,
            "physicalName": name,
            "createdAt": _iso(version["created"]),
            "version": version["id"],
            "namespace": namespace,
            "sourceName": "default",
            "fields": [
                {"name": n, "type": t, "tags": [], "description": d} for n, t, d in version["fields"] or ()
            ],
            "tags": [],
            "description": None,
            "createdByRun": created_by,
        }

    def lineage(self, node_id: str, depth: int) -> dict[str, Any] | None:
        state = self.build()
        edges: set[tuple[str, str]] = set()
        for (namespace, name), job in state["jobs"].items():
            job_node = f"job:{namespace}:{name}"
            edges |= {(f"dataset:{ns}:{n}", job_node) for ns, n in job["inputs"]}
            edges |= {(job_node, f"dataset:{ns}:{n}") for ns, n in job["outputs"]}
        nodes = {f"job:{ns}:{n}": ("JOB", j) for (ns, n), j in state["jobs"].items()}
        nodes |= {f"dataset:{ns}:{n}": ("DATASET", d) for (ns, n), d in state["datasets"].items()}
        if node_id not in nodes:
            return None
        neighbours: dict[str, set[str]] = {}
        for origin, destination in edges:
            neighbours.setdefault(origin, set()).add(destination)
            neighbours.setdefault(destination, set()).add(origin)
        seen = {node_id: 0}
        queue = deque([node_id])
        while queue:  # undirected, like Marquez
            current = queue.popleft()
            if seen[current] >= depth:
                continue
            for other in neighbours.get(current, ()):
                if other not in seen:
                    seen[other] = seen[current] + 1
                    queue.append(other)
        graph = []
        for current in sorted(seen):
            kind, record = nodes[current]
            graph.append(
                {
                    "id": current,
                    "type": kind,
                    "data": self.job_json(record) if kind == "JOB" else self.dataset_json(record),
                    "inEdges": [
                        {"origin": o, "destination": d}
                        for o, d in sorted(edges)
                        if d == current and o in seen
                    ],
                    "outEdges": [
                        {"origin": o, "destination": d}
                        for o, d in sorted(edges)
                        if o == current and d in seen
                    ],
                }
            )
        return {"graph": graph}

    def column_lineage(self, node_id: str, depth: int, downstream: bool) -> dict[str, Any] | None:
        state = self.build()
        kind, rest = node_id.split(":", 1)
        if kind == "datasetField":
            head, field = rest.rsplit(":", 1)
        else:
            head, field = rest, None
        record = next((d for (ns, n), d in state["datasets"].items() if f"{ns}:{n}" == head), None)
        if record is None:
            return None
        starts = (
            [(record["key"], field)] if field else [(record["key"], f["name"]) for f in self.fields(record)]
        )
        inputs: dict[tuple[tuple[str, str], str], list[dict[str, Any]]] = {}
        for key, data in state["datasets"].items():
            for column, spec in (data["columns"] or (None, {}))[1].items():
                inputs[(key, column)] = spec.get("inputFields") or []
        readers: dict[tuple[tuple[str, str], str], set[tuple[tuple[str, str], str]]] = {}
        for target, items in inputs.items():
            for item in items:
                readers.setdefault(((item["namespace"], item["name"]), item["field"]), set()).add(target)
        seen = {start: 0 for start in starts}
        queue = deque(starts)
        while queue:
            current = queue.popleft()
            if seen[current] >= depth:
                continue
            nxt = [((i["namespace"], i["name"]), i["field"]) for i in inputs.get(current, [])]
            if downstream:
                nxt += sorted(readers.get(current, ()))
            for other in nxt:
                if other not in seen:
                    seen[other] = seen[current] + 1
                    queue.append(other)

        def fid(key: tuple[tuple[str, str], str]) -> str:
            return f"datasetField:{key[0][0]}:{key[0][1]}:{key[1]}"

        graph = []
        for current in sorted(seen):
            items = inputs.get(current, [])
            known = state["datasets"].get(current[0])
            field_type = next(
                (f["type"] for f in (self.fields(known) if known else []) if f["name"] == current[1]), None
            )
            first = ((items[0].get("transformations") or [{}])[0]) if items else {}
            graph.append(
                {
                    "id": fid(current),
                    "type": "DATASET_FIELD",
                    "data": {
                        "namespace": current[0][0],
                        "dataset": current[0][1],
                        "field": current[1],
                        "fieldType": field_type,
                        "transformationDescription": first.get("description"),
                        "transformationType": first.get("subtype"),
                        "inputFields": [
                            {
                                "namespace": i["namespace"],
                                "dataset": i["name"],
                                "field": i["field"],
                                "transformations": i.get("transformations") or [],
                            }
                            for i in items
                        ],
                    },
                    "inEdges": [
                        {
                            "origin": fid(((i["namespace"], i["name"]), i["field"])),
                            "destination": fid(current),
                        }
                        for i in items
                    ],
                    "outEdges": [
                        {"origin": fid(current), "destination": fid(r)}
                        for r in sorted(readers.get(current, ()))
                        if r in seen
                    ],
                }
            )
        return {"graph": graph}


class FakeMarquez:
    """``with FakeMarquez(api_key="k") as marquez: marquez.url``"""

    def __init__(self, api_key: str | None = None) -> None:
        self.state = MarquezState()
        self.api_key = api_key
        self.delay = 0.0
        self.fail_status: int | None = None
        self.ignore_offset = False  # answer every page as the first (a proxy or an old server that drops it)
        self.responses: list[tuple[str, Any]] = []  # (path, body) of every JSON answer, for contract checks
        self._server = ThreadingHTTPServer(("127.0.0.1", 0), self._handler())
        self._server.daemon_threads = True
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)

    @property
    def url(self) -> str:
        host, port = self._server.server_address[:2]
        return f"http://{host}:{port}"

    def __enter__(self) -> FakeMarquez:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._server.shutdown()
        self._server.server_close()

    def _handler(self) -> type[BaseHTTPRequestHandler]:
        fake = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, format: str, *args: Any) -> None:
                pass

            def _send(self, status: int, body: Any) -> None:
                data = json.dumps(body).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def _guard(self) -> bool:
                if fake.delay:
                    time.sleep(fake.delay)
                if fake.fail_status:
                    self._send(fake.fail_status, {"code": fake.fail_status, "message": "injected failure"})
                    return False
                if fake.api_key and self.headers.get("Authorization") != f"Bearer {fake.api_key}":
                    self._send(401, {"code": 401, "message": "HTTP 401 Unauthorized"})
                    return False
                return True

            def do_POST(self) -> None:
                if not self._guard():
                    return
                if urlparse(self.path).path != "/api/v1/lineage":
                    self._send(404, {"code": 404, "message": "not found"})
                    return
                length = int(self.headers.get("Content-Length") or 0)
                fake.state.ingest(json.loads(self.rfile.read(length)))
                self._send(201, {})

            def do_GET(self) -> None:
                if not self._guard():
                    return
                parsed = urlparse(self.path)
                query = {k: v[0] for k, v in parse_qs(parsed.query).items()}
                body = fake.route(parsed.path, query)
                if body is None:
                    self._send(404, {"code": 404, "message": "not found"})
                else:
                    fake.responses.append((parsed.path, body))
                    self._send(200, body)

        return Handler

    def route(self, path: str, query: dict[str, str]) -> Any:
        parts = [unquote(p) for p in path.split("/")[3:]]  # after /api/v1
        state = self.state
        if parts == ["lineage"]:
            return state.lineage(query["nodeId"], int(query.get("depth", 20)))
        if parts == ["column-lineage"]:
            return state.column_lineage(
                query["nodeId"], int(query.get("depth", 20)), query.get("withDownstream", "false") == "true"
            )
        built = state.build()
        if parts == ["namespaces"]:
            return _namespaces(built)
        if parts == ["search"]:
            return _search(built, query.get("q", ""), int(query.get("limit", 10)))
        if len(parts) >= 3 and parts[0] == "namespaces":
            offset = 0 if self.ignore_offset else int(query.get("offset", 0))
            return self._namespaced(built, parts[1:], int(query.get("limit", 100)), offset)
        if parts[:2] == ["jobs", "runs"] and len(parts) == 3:
            run = built["runs"].get(parts[2])
            return None if run is None else _run_details(state, built, run)
        return None

    def _namespaced(self, built: dict[str, Any], parts: list[str], limit: int, offset: int) -> Any:
        state, (namespace, kind), rest = self.state, parts[:2], parts[2:]
        if kind == "datasets" and not rest:
            items = [state.dataset_json(d) for k, d in sorted(built["datasets"].items()) if k[0] == namespace]
            return {"datasets": items[offset : offset + limit], "totalCount": len(items)}
        if kind == "jobs" and not rest:
            items = [state.job_json(j) for k, j in sorted(built["jobs"].items()) if k[0] == namespace]
            return {"jobs": items[offset : offset + limit], "totalCount": len(items)}
        if kind == "datasets":
            record = built["datasets"].get((namespace, rest[0]))
            if record is None or rest[1:] not in ([], ["versions"]):
                return None
            if rest[1:] == ["versions"]:
                versions = [state.version_json(record, v, built["runs"]) for v in _newest_versions(record)]
                return {"versions": versions[offset : offset + limit]}
            return state.dataset_json(record)
        if kind == "jobs":
            job = built["jobs"].get((namespace, rest[0]))
            if job is None or rest[1:] not in ([], ["runs"], ["versions"]):
                return None
            if rest[1:] == ["versions"]:
                versions = sorted(job["versions"].values(), key=lambda v: v["created"], reverse=True)
                return {
                    "versions": [state.job_version_json(job, v) for v in versions][offset : offset + limit]
                }
            if rest[1:] == ["runs"]:
                return {"runs": [state.run_json(r) for r in _runs_newest_first(job)[offset : offset + limit]]}
            return state.job_json(job)
        return None


def _namespaces(built: dict[str, Any]) -> dict[str, Any]:
    names = sorted({k[0] for k in built["jobs"]} | {k[0] for k in built["datasets"]})
    created = "2020-01-01T00:00:00Z"
    return {
        "namespaces": [
            {
                "name": n,
                "createdAt": created,
                "updatedAt": created,
                "ownerName": "anonymous",
                "description": None,
            }
            for n in names
        ]
    }


def _search(built: dict[str, Any], text: str, limit: int) -> dict[str, Any]:
    needle = text.lower()
    results = [
        {
            "type": kind,
            "name": n,
            "namespace": ns,
            "nodeId": f"{kind.lower()}:{ns}:{n}",
            "updatedAt": _iso(record["updated"]),
        }
        for kind, records in (("DATASET", built["datasets"]), ("JOB", built["jobs"]))
        for (ns, n), record in records.items()
        if needle in n.lower()
    ]
    return {"totalCount": len(results), "results": results[:limit]}


def _run_details(state: MarquezState, built: dict[str, Any], run: dict[str, Any]) -> dict[str, Any]:
    """``GET /jobs/runs/{id}``: the run with its job version and the dataset versions it read and wrote."""
    job = built["jobs"][run["job"]]

    def versions(keys: set[tuple[str, str]], written: bool) -> list[dict[str, Any]]:
        found = []
        for key in sorted(keys):
            record = built["datasets"][key]
            mine = [v for v in _newest_versions(record) if v["run"] == run["id"]] if written else []
            version = (mine or _newest_versions(record))[0]
            found.append(
                {
                    "datasetVersionId": {"namespace": key[0], "name": key[1], "version": version["id"]},
                    "facets": {},
                }
            )
        return found

    body = state.run_json(run)
    body["jobVersion"] = {
        "namespace": job["key"][0],
        "name": job["key"][1],
        "version": _version_id(job["key"], run["inputs"], run["outputs"]),
    }
    body["inputDatasetVersions"] = versions(run["inputs"], written=False)
    body["outputDatasetVersions"] = versions(run["outputs"], written=True)
    return body


class SilentMarquez:
    """A Marquez that never answers: it accepts every connection, reads, and sends nothing back.

    ``with SilentMarquez() as marquez: marquez.url``; ``connections`` counts what it accepted."""

    def __init__(self) -> None:
        self._socket = socket.socket()
        self._socket.bind(("127.0.0.1", 0))
        self._socket.listen(128)
        self._socket.settimeout(0.2)
        self._held: list[socket.socket] = []
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._accept, daemon=True)
        self.connections = 0

    @property
    def url(self) -> str:
        host, port = self._socket.getsockname()[:2]
        return f"http://{host}:{port}"

    def _accept(self) -> None:
        while not self._stop.is_set():
            try:
                connection, _ = self._socket.accept()
            except OSError:
                continue
            self.connections += 1
            self._held.append(connection)  # kept open, never written to

    def __enter__(self) -> SilentMarquez:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join(5)
        for connection in self._held:
            connection.close()
        self._socket.close()
