"""Give a generated event log the provider's Airflow facets, as real Airflow events carry them.

``generate_events.py`` writes no ``airflow`` / ``airflowDagRun`` facet; the lineage store keys each run by
the Airflow ``run_id`` those facets name (``lineage_plus_run.airflow_run_key``, docs/graph.md). This adds
them (a task run gets its parent DAG run's, a DAG run its own), so an import measures that work too:

    python benchmarks/generate_events.py --out /tmp/ev100k.jsonl --events 100000
    python benchmarks/with_airflow_facets.py /tmp/ev100k.jsonl /tmp/ev100k_af.jsonl
    time lineage-plus import /tmp/ev100k_af.jsonl --store sqlite:////tmp/ev100k_af.db
"""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

import orjson

FACET = {
    "_producer": "https://github.com/apache/airflow",
    "_schemaURL": "https://openlineage.io/spec/2-0-2/OpenLineage.json#/$defs/RunFacet",
}


def with_airflow_facets(event: dict[str, Any]) -> dict[str, Any]:
    """``event`` with the provider's ``airflow`` (a task: job ``dag.task``) or ``airflowDagRun`` facet."""
    job = event["job"]["name"]
    facets = event["run"].setdefault("facets", {})
    if "." in job:
        dag, task = job.split(".", 1)
        parent = ((facets.get("parent") or {}).get("run") or {}).get("runId", "")
        facets["airflow"] = {
            **FACET,
            "dag": {"dag_id": dag},
            "dagRun": {"dag_id": dag, "run_id": f"scheduled__{parent}"},
            "task": {"task_id": task},
            "taskInstance": {"try_number": 1, "map_index": -1},
        }
    else:
        run_id = f"scheduled__{event['run']['runId']}"
        facets["airflowDagRun"] = {
            **FACET,
            "dag": {"dag_id": job},
            "dagRun": {"dag_id": job, "run_id": run_id},
        }
    return event


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("log", type=Path, help="a log of generate_events.py")
    parser.add_argument("out", type=Path, help="where to write it with the facets")
    args = parser.parse_args()
    with args.log.open("rb") as source, args.out.open("wb") as out:
        for line in source:
            out.write(orjson.dumps(with_airflow_facets(orjson.loads(line))) + b"\n")


if __name__ == "__main__":
    main()
