"""Generate a realistic synthetic OpenLineage event log for benchmarking the lineage graph.

Airflow-shaped: DAGs of tasks (jobs ``<dag>.<task>``) with DAG-run events carrying ``airflowState``,
task START/COMPLETE/FAIL events with parent facets, schemas (that change now and then), column
lineage, ownership, output statistics, error messages and skip facets. The graph has deep chains
(DAG families feed each other) and wide fan-out (hub datasets read by hundreds of jobs). A few events
arrive out of order or twice, as they do from real transports.

    python benchmarks/generate_events.py --out /tmp/events.jsonl --events 1000000
"""

from __future__ import annotations

import argparse
import random
import time
import uuid
from dataclasses import dataclass, field
from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import Any

import orjson

PRODUCER = "https://github.com/apache/airflow/tree/providers-openlineage/2.20.3"
SCHEMA_URL = "https://openlineage.io/spec/2-0-2/OpenLineage.json#/$defs/RunEvent"
JOB_NAMESPACE = "airflow-prod"
DATASET_NAMESPACES = ("postgres://warehouse:5432", "s3://raw-data-lake", "snowflake://acme-prod")
TASKS_PER_DAG = 20
OUTPUTS_PER_JOB = 3
HUBS = 50
FAMILY = 10  # consecutive DAGs chained into one deep pipeline
TYPES = ("INTEGER", "VARCHAR", "DECIMAL(12,2)", "TIMESTAMP", "BOOLEAN", "DATE")
TEAMS = tuple(f"team:{t}" for t in ("analytics", "data-eng", "finance", "growth", "ml", "ops", "sales"))


def _facet(name: str, **body: Any) -> dict[str, Any]:
    return {
        "_producer": PRODUCER,
        "_schemaURL": f"https://openlineage.io/spec/facets/1-0-0/{name}.json",
        **body,
    }


@dataclass
class Plan:
    """The shape of the generated graph, returned so benchmarks can pick targets."""

    datasets: list[tuple[str, str]] = field(default_factory=list)
    jobs: list[str] = field(default_factory=list)
    inputs: dict[str, list[int]] = field(default_factory=dict)
    outputs: dict[str, list[int]] = field(default_factory=dict)
    hubs: list[int] = field(default_factory=list)
    events: int = 0


def plan_graph(datasets: int, jobs: int, rng: random.Random) -> Plan:
    plan = Plan()
    dags = max(1, jobs // TASKS_PER_DAG)
    produced = dags * TASKS_PER_DAG * OUTPUTS_PER_JOB
    raw = max(HUBS + 1, datasets - produced)
    for i in range(raw):
        plan.datasets.append(("s3://raw-data-lake", f"raw/source_{i:06d}"))
    plan.hubs = list(range(HUBS))
    for d in range(dags):
        dag = f"dag_{d:05d}"
        previous_last: list[int] | None = None
        if d % FAMILY:
            previous_last = plan.outputs[f"dag_{d - 1:05d}.task_{TASKS_PER_DAG - 1:02d}"]
        for t in range(TASKS_PER_DAG):
            job = f"{dag}.task_{t:02d}"
            plan.jobs.append(job)
            outs = []
            for o in range(OUTPUTS_PER_JOB):
                namespace = DATASET_NAMESPACES[(d + o) % 2 * 2]
                outs.append(len(plan.datasets))
                plan.datasets.append((namespace, f"analytics.{dag}.t{t:02d}_out{o}"))
            plan.outputs[job] = outs
            ins: list[int] = []
            if t == 0:
                ins += previous_last[:2] if previous_last else [rng.randrange(HUBS, raw) for _ in range(2)]
            else:
                ins += rng.sample(plan.outputs[f"{dag}.task_{t - 1:02d}"], 2)
                if t > 2 and rng.random() < 0.5:
                    ins.append(rng.choice(plan.outputs[f"{dag}.task_{rng.randrange(0, t - 1):02d}"]))
            job_index = len(plan.jobs) - 1
            ins += [HUBS + (job_index * 2 + k) % (raw - HUBS) for k in range(2)]  # every raw source is read
            if rng.random() < 0.01 * HUBS / 5:  # about 10% of jobs read one hub: hubs have ~40 readers each
                ins.append(rng.randrange(HUBS))
            plan.inputs[job] = ins
    return plan


class _Writer:
    def __init__(self, handle: Any, rng: random.Random) -> None:
        self.handle = handle
        self.rng = rng
        self.count = 0
        self.held: list[bytes] = []

    def write(self, event: dict[str, Any], *, early_ok: bool = False) -> None:
        data = orjson.dumps(event) + b"\n"
        if early_ok and self.held:
            self.handle.write(data)  # a COMPLETE overtaking its START
            self.handle.write(self.held.pop())
            self.count += 2
            return
        self.handle.write(data)
        self.count += 1
        if self.rng.random() < 0.005:
            self.handle.write(data)  # delivered twice
            self.count += 1


def generate(
    out: Path, events: int = 1_000_000, datasets: int = 100_000, jobs: int = 20_000, seed: int = 7
) -> Plan:
    rng = random.Random(seed)
    plan = plan_graph(datasets, jobs, rng)
    schemas: dict[int, list[dict[str, str]]] = {}
    owners = {job: [{"name": rng.choice(TEAMS), "type": "team"}] for job in plan.jobs}
    dags = sorted({job.split(".")[0] for job in plan.jobs})
    start = datetime(2026, 1, 1, tzinfo=timezone.utc)
    per_dag_run = 2 + 2 * TASKS_PER_DAG
    dag_runs = max(1, events // per_dag_run)
    with open(out, "wb") as handle:
        writer = _Writer(handle, rng)
        for r in range(dag_runs):
            dag = dags[r % len(dags)]
            moment = start + timedelta(minutes=r)
            dag_run_id = str(uuid.UUID(int=rng.getrandbits(128), version=4))
            parent = _facet(
                "ParentRunFacet", run={"runId": dag_run_id}, job={"namespace": JOB_NAMESPACE, "name": dag}
            )
            writer.write(_dag_event("START", dag, dag_run_id, moment, None))
            states: dict[str, str] = {}
            for t in range(TASKS_PER_DAG):
                job = f"{dag}.task_{t:02d}"
                task_time = moment + timedelta(seconds=10 * t)
                states[f"task_{t:02d}"] = _task_run(
                    writer, plan, job, task_time, parent, schemas, owners[job], rng
                )
            writer.write(_dag_event("COMPLETE", dag, dag_run_id, moment + timedelta(seconds=300), states))
    plan.events = writer.count
    return plan


def _dataset(plan: Plan, index: int) -> dict[str, Any]:
    namespace, name = plan.datasets[index]
    return {"namespace": namespace, "name": name}


def _schema(schemas: dict[int, list[dict[str, str]]], index: int, rng: random.Random) -> list[dict[str, str]]:
    fields = schemas.get(index)
    if fields is None:
        fields = [{"name": f"col_{c}", "type": rng.choice(TYPES)} for c in range(rng.randint(4, 10))]
        schemas[index] = fields
    elif rng.random() < 0.01:
        fields = [*fields, {"name": f"col_{len(fields)}", "type": rng.choice(TYPES)}]
        schemas[index] = fields
    return fields


def _task_run(
    writer: _Writer,
    plan: Plan,
    job: str,
    moment: datetime,
    parent: dict[str, Any],
    schemas: dict[int, list[dict[str, str]]],
    owners: list[dict[str, str]],
    rng: random.Random,
) -> str:
    run_id = str(uuid.UUID(int=rng.getrandbits(128), version=4))
    ins = [_dataset(plan, i) for i in plan.inputs[job]]
    outs = [_dataset(plan, i) for i in plan.outputs[job]]
    job_block = {
        "namespace": JOB_NAMESPACE,
        "name": job,
        "facets": {"ownership": _facet("OwnershipJobFacet", owners=owners)},
    }
    start = {
        "eventType": "START",
        "eventTime": moment.isoformat(),
        "run": {"runId": run_id, "facets": {"parent": parent}},
        "job": job_block,
        "inputs": ins,
        "outputs": outs,
        "producer": PRODUCER,
        "schemaURL": SCHEMA_URL,
    }
    roll = rng.random()
    kind, state = ("FAIL", "failed") if roll < 0.03 else ("COMPLETE", "skipped" if roll < 0.05 else "success")
    run_facets: dict[str, Any] = {"parent": parent}
    if kind == "FAIL":
        run_facets["errorMessage"] = _facet(
            "ErrorMessageRunFacet",
            message=f"psycopg2.errors.UndefinedColumn in {job}",
            programmingLanguage="python",
        )
    if state == "skipped":
        run_facets["lineagePlus_skipState"] = _facet(
            "SkipStateRunFacet", skipped=True, reason="no new partitions"
        )
    out_full = []
    for index, out in zip(plan.outputs[job], outs, strict=True):
        fields = _schema(schemas, index, rng)
        facets: dict[str, Any] = {"schema": _facet("SchemaDatasetFacet", fields=fields)}
        if index % 3 == 0 and ins:  # a job emits the same column lineage every run
            source = ins[0]
            facets["columnLineage"] = _facet(
                "ColumnLineageDatasetFacet",
                fields={
                    f["name"]: {
                        "inputFields": [
                            {
                                **source,
                                "field": f["name"],
                                "transformations": [{"type": "DIRECT", "subtype": "IDENTITY"}],
                            }
                        ]
                    }
                    for f in fields[:3]
                },
            )
        out_full.append(
            {
                **out,
                "facets": facets,
                "outputFacets": {
                    "outputStatistics": _facet(
                        "OutputStatisticsOutputDatasetFacet", rowCount=rng.randint(1, 10**6)
                    )
                },
            }
        )
    end = {
        "eventType": kind,
        "eventTime": (moment + timedelta(seconds=rng.randint(1, 9))).isoformat(),
        "run": {"runId": run_id, "facets": run_facets},
        "job": job_block,
        "inputs": ins,
        "outputs": out_full,
        "producer": PRODUCER,
        "schemaURL": SCHEMA_URL,
    }
    if rng.random() < 0.01:
        writer.held.append(orjson.dumps(start) + b"\n")
        writer.write(end, early_ok=True)
    else:
        writer.write(start)
        writer.write(end)
    return state


def _dag_event(
    kind: str, dag: str, run_id: str, moment: datetime, states: dict[str, str] | None
) -> dict[str, Any]:
    facets: dict[str, Any] = {}
    if states is not None:
        facets["airflowState"] = _facet("AirflowStateRunFacet", dagRunState="success", tasksState=states)
    return {
        "eventType": kind,
        "eventTime": moment.isoformat(),
        "run": {"runId": run_id, "facets": facets},
        "job": {"namespace": JOB_NAMESPACE, "name": dag, "facets": {}},
        "inputs": [],
        "outputs": [],
        "producer": PRODUCER,
        "schemaURL": SCHEMA_URL,
    }


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--out", type=Path, required=True)
    parser.add_argument("--events", type=int, default=1_000_000)
    parser.add_argument("--datasets", type=int, default=100_000)
    parser.add_argument("--jobs", type=int, default=20_000)
    parser.add_argument("--seed", type=int, default=7)
    args = parser.parse_args()
    began = time.perf_counter()
    plan = generate(args.out, args.events, args.datasets, args.jobs, args.seed)
    size = args.out.stat().st_size
    print(
        f"wrote {plan.events} events, {len(plan.datasets)} datasets, {len(plan.jobs)} jobs, "
        f"{size / 2**20:.0f} MiB to {args.out} in {time.perf_counter() - began:.1f} s"
    )


if __name__ == "__main__":
    main()
