"""A stand-in for a Marquez server, for tests: stdlib HTTP on 127.0.0.1, shaped as Marquez's openapi.yml.

It ingests OpenLineage events like ``POST /api/v1/lineage`` and answers from them with its own,
deliberately plain implementation: events are sorted by eventTime and replayed in order (what an
ordered stream would give), with no code shared with ``airflow_lineage_plus.graph``. Like Marquez, a run
that finishes (COMPLETE, FAIL, ABORT) makes a *job version* of the inputs and outputs its events
reported, and that version becomes the job's current one: a job's edges (``/lineage``, the job's
``inputs``/``outputs``) are those of its current version; ``/jobs/{job}/versions`` lists them all.
Knobs: ``api_key`` (Bearer check), ``delay`` (seconds before answering), ``fail_status``.
"""

from __future__ import annotations

import json
import threading
import time
from collections import deque
from datetime import datetime, timezone
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import parse_qs, unquote, urlparse

TERMINAL = {"COMPLETE": "COMPLETED", "FAIL": "FAILED", "ABORT": "ABORTED"}


def _time(value: str) -> datetime:
    moment = datetime.fromisoformat(value)
    return moment if moment.tzinfo else moment.replace(tzinfo=timezone.utc)


def _iso(moment: datetime | None) -> str | None:
    return None if moment is None else moment.astimezone(timezone.utc).isoformat().replace("+00:00", "Z")


def _drop_none(value: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in value.items() if v is not None}


class MarquezState:
    """Everything the fake knows, recomputed from the stored events on each request."""

    def __init__(self) -> None:
        self.events: list[dict[str, Any]] = []
        self.lock = threading.Lock()

    def ingest(self, event: dict[str, Any]) -> None:
        with self.lock:
            self.events.append(event)

    def build(self) -> dict[str, Any]:
        with self.lock:
            events = sorted(self.events, key=lambda e: _time(e["eventTime"]))
        jobs: dict[tuple[str, str], dict[str, Any]] = {}
        datasets: dict[tuple[str, str], dict[str, Any]] = {}
        runs: dict[str, dict[str, Any]] = {}

        def dataset(item: dict[str, Any], moment: datetime, run_id: str | None) -> dict[str, Any]:
            key = (item["namespace"], item["name"])
            record = datasets.setdefault(
                key,
                {
                    "key": key,
                    "fields": None,
                    "facets": {},
                    "versions": [],
                    "created": moment,
                    "updated": moment,
                    "columns": {},
                },
            )
            record["updated"] = moment
            facets = item.get("facets") or {}
            record["facets"].update(facets)
            if "schema" in facets:
                record["fields"] = facets["schema"].get("fields") or []
                record["versions"].append({"fields": record["fields"], "created": moment, "run": run_id})
            if "columnLineage" in facets:
                record["columns"] = facets["columnLineage"].get("fields") or {}
            return record

        for event in events:
            moment = _time(event["eventTime"])
            if "job" not in event:
                if "dataset" in event:
                    dataset(event["dataset"], moment, None)
                continue
            key = (event["job"]["namespace"], event["job"]["name"])
            job = jobs.setdefault(
                key,
                {
                    "key": key,
                    "inputs": set(),
                    "outputs": set(),
                    "facets": {},
                    "created": moment,
                    "updated": moment,
                    "runs": [],
                    "versions": {},
                    "current": None,
                },
            )
            job["updated"] = moment
            job["facets"].update(event["job"].get("facets") or {})
            run_id = (event.get("run") or {}).get("runId")
            for item in event.get("inputs") or []:
                job["inputs"].add(dataset(item, moment, None)["key"])
            for item in event.get("outputs") or []:
                job["outputs"].add(dataset(item, moment, run_id)["key"])
            if run_id is None:
                continue
            run = runs.get(run_id)
            if run is None:
                run = runs[run_id] = {
                    "id": run_id,
                    "job": key,
                    "state": "NEW",
                    "started": None,
                    "ended": None,
                    "created": moment,
                    "facets": {},
                    "inputs": set(),
                    "outputs": set(),
                }
                job["runs"].append(run)
            run["facets"].update(event["run"].get("facets") or {})
            run["inputs"] |= {(d["namespace"], d["name"]) for d in event.get("inputs") or []}
            run["outputs"] |= {(d["namespace"], d["name"]) for d in event.get("outputs") or []}
            kind = event.get("eventType")
            if kind == "START" and run["started"] is None:
                run["started"] = moment
            if run["started"] is None:
                run["started"] = moment
            if kind in TERMINAL:
                run["state"], run["ended"] = TERMINAL[kind], moment
                self._version(jobs[run["job"]], run, moment)
            elif run["state"] == "NEW":
                run["state"] = "RUNNING"
        for job in jobs.values():
            current = job["versions"].get(job["current"]) if job["current"] is not None else None
            job["inputs"] = set(current["inputs"]) if current else set()
            job["outputs"] = set(current["outputs"]) if current else set()
        return {"jobs": jobs, "datasets": datasets, "runs": runs}

    @staticmethod
    def _version(job: dict[str, Any], run: dict[str, Any], moment: datetime) -> None:
        """The job version of a finished run (one per distinct inputs and outputs), now current."""
        key = (tuple(sorted(run["inputs"])), tuple(sorted(run["outputs"])))
        if key not in job["versions"]:
            job["versions"][key] = {
                "id": f"00000000-0000-4000-8000-{len(job['versions']) + 1:012d}",
                "created": moment,
                "inputs": key[0],
                "outputs": key[1],
            }
        job["current"] = key

    # -- shapes ---------------------------------------------------------------------------------
    @staticmethod
    def run_json(run: dict[str, Any]) -> dict[str, Any]:
        duration = None
        if run["started"] is not None and run["ended"] is not None:
            duration = int((run["ended"] - run["started"]).total_seconds() * 1000)
        return _drop_none(
            {
                "id": run["id"],
                "createdAt": _iso(run["created"]),
                "updatedAt": _iso(run["ended"] or run["started"]),
                "state": run["state"],
                "startedAt": _iso(run["started"]),
                "endedAt": _iso(run["ended"]),
                "durationMs": duration,
                "args": {},
                "facets": run["facets"],
            }
        )

    def job_json(self, job: dict[str, Any]) -> dict[str, Any]:
        namespace, name = job["key"]
        runs = sorted(job["runs"], key=lambda r: r["started"] or r["created"], reverse=True)
        body: dict[str, Any] = {
            "id": {"namespace": namespace, "name": name},
            "type": "BATCH",
            "name": name,
            "simpleName": name.rsplit(".", 1)[-1],
            "createdAt": _iso(job["created"]),
            "updatedAt": _iso(job["updated"]),
            "namespace": namespace,
            "inputs": [{"namespace": ns, "name": n} for ns, n in sorted(job["inputs"])],
            "outputs": [{"namespace": ns, "name": n} for ns, n in sorted(job["outputs"])],
            "latestRuns": [self.run_json(r) for r in runs[:10]],
            "facets": job["facets"],
        }
        # Marquez's latestRun is the most recently *updated* run (arrival-ish), not the one started last
        if job["runs"]:
            body["latestRun"] = self.run_json(job["runs"][-1])
        description = (job["facets"].get("documentation") or {}).get("description")
        if description:
            body["description"] = description
        return body

    @staticmethod
    def dataset_json(record: dict[str, Any]) -> dict[str, Any]:
        namespace, name = record["key"]
        body: dict[str, Any] = {
            "id": {"namespace": namespace, "name": name},
            "type": "DB_TABLE",
            "name": name,
            "physicalName": name,
            "createdAt": _iso(record["created"]),
            "updatedAt": _iso(record["updated"]),
            "namespace": namespace,
            "sourceName": namespace,
            "fields": [
                _drop_none(
                    {
                        "name": f["name"],
                        "type": f.get("type") or "",
                        "tags": [],
                        "description": f.get("description"),
                    }
                )
                for f in record["fields"] or []
            ],
            "tags": [],
            "facets": record["facets"],
        }
        description = (record["facets"].get("documentation") or {}).get("description")
        if description:
            body["description"] = description
        return body

    @staticmethod
    def job_version_json(job: dict[str, Any], version: dict[str, Any]) -> dict[str, Any]:
        namespace, name = job["key"]
        return {
            "id": {"namespace": namespace, "name": name, "version": version["id"]},
            "name": name,
            "version": version["id"],
            "createdAt": _iso(version["created"]),
            "namespace": namespace,
            "inputs": [{"namespace": ns, "name": n} for ns, n in version["inputs"]],
            "outputs": [{"namespace": ns, "name": n} for ns, n in version["outputs"]],
            "facets": {},
        }

    def version_json(
        self, record: dict[str, Any], index: int, version: dict[str, Any], runs: dict[str, Any]
    ) -> dict[str, Any]:
        namespace, name = record["key"]
        version_id = f"00000000-0000-4000-8000-{index:012d}"
        run = runs.get(version["run"]) if version["run"] else None
        created_by = None
        if run is not None:  # the run that wrote this version, with its job version (as Marquez says)
            created_by = {
                **self.run_json(run),
                "jobVersion": {
                    "namespace": run["job"][0],
                    "name": run["job"][1],
                    "version": "00000000-0000-4000-8000-000000000000",
                },
            }
        return _drop_none(
            {
                "id": {"namespace": namespace, "name": name, "version": version_id},
                "type": "DB_TABLE",
                "name": name,
                "physicalName": name,
                "createdAt": _iso(version["created"]),
                "version": version_id,
                "namespace": namespace,
                "sourceName": namespace,
                "fields": [
                    {"name": f["name"], "type": f.get("type") or "", "tags": []} for f in version["fields"]
                ],
                "description": "",
                "createdByRun": created_by,
            }
        )

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
            [(record["key"], field)]
            if field
            else [(record["key"], f["name"]) for f in record["fields"] or []]
        )
        inputs: dict[tuple[tuple[str, str], str], list[dict[str, Any]]] = {}
        for key, data in state["datasets"].items():
            for column, spec in data["columns"].items():
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
            field_type = next(
                (
                    f.get("type")
                    for f in state["datasets"].get(current[0], {}).get("fields") or []
                    if f["name"] == current[1]
                ),
                None,
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
        limit, offset = int(query.get("limit", 100)), int(query.get("offset", 0))
        if parts == ["lineage"]:
            return state.lineage(query["nodeId"], int(query.get("depth", 20)))
        if parts == ["column-lineage"]:
            return state.column_lineage(
                query["nodeId"], int(query.get("depth", 20)), query.get("withDownstream", "false") == "true"
            )
        built = state.build()
        if parts == ["namespaces"]:
            names = sorted({k[0] for k in built["jobs"]} | {k[0] for k in built["datasets"]})
            return {
                "namespaces": [
                    {
                        "name": n,
                        "createdAt": "2020-01-01T00:00:00Z",
                        "updatedAt": "2020-01-01T00:00:00Z",
                        "ownerName": "anonymous",
                    }
                    for n in names
                ]
            }
        if parts == ["search"]:
            needle = query.get("q", "").lower()
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
        if len(parts) >= 3 and parts[0] == "namespaces":
            namespace = parts[1]
            if parts[2] == "datasets" and len(parts) == 3:
                items = [
                    state.dataset_json(d) for k, d in sorted(built["datasets"].items()) if k[0] == namespace
                ]
                return {"datasets": items[offset : offset + limit], "totalCount": len(items)}
            if parts[2] == "jobs" and len(parts) == 3:
                items = [state.job_json(j) for k, j in sorted(built["jobs"].items()) if k[0] == namespace]
                return {"jobs": items[offset : offset + limit], "totalCount": len(items)}
            if parts[2] == "datasets":
                record = built["datasets"].get((namespace, parts[3]))
                if record is None:
                    return None
                if len(parts) == 4:
                    return state.dataset_json(record)
                if parts[4:] == ["versions"]:
                    versions = [
                        state.version_json(record, i, v, built["runs"])
                        for i, v in enumerate(record["versions"])
                    ]
                    versions.reverse()
                    return {"versions": versions[offset : offset + limit]}
            if parts[2] == "jobs":
                job = built["jobs"].get((namespace, parts[3]))
                if job is None:
                    return None
                if len(parts) == 4:
                    return state.job_json(job)
                if parts[4:] == ["versions"]:
                    versions = sorted(job["versions"].values(), key=lambda v: v["created"], reverse=True)
                    items = [state.job_version_json(job, v) for v in versions]
                    return {"versions": items[offset : offset + limit]}
                if parts[4:] == ["runs"]:
                    runs = sorted(job["runs"], key=lambda r: r["started"] or r["created"], reverse=True)
                    return {"runs": [state.run_json(r) for r in runs[offset : offset + limit]]}
        if parts[:2] == ["jobs", "runs"] and len(parts) == 3:
            run = built["runs"].get(parts[2])
            if run is None:
                return None
            body = state.run_json(run)
            body["jobVersion"] = {
                "namespace": run["job"][0],
                "name": run["job"][1],
                "version": "00000000-0000-4000-8000-000000000000",
            }
            body["inputDatasetVersions"] = [
                {
                    "datasetVersionId": {
                        "namespace": ns,
                        "name": n,
                        "version": "00000000-0000-4000-8000-000000000000",
                    },
                    "facets": {},
                }
                for ns, n in sorted(run["inputs"])
            ]
            body["outputDatasetVersions"] = [
                {
                    "datasetVersionId": {
                        "namespace": ns,
                        "name": n,
                        "version": "00000000-0000-4000-8000-000000000000",
                    },
                    "facets": {},
                }
                for ns, n in sorted(run["outputs"])
            ]
            return body
        return None
