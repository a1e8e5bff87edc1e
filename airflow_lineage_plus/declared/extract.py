"""The lineage a folder of DAG files declares, read by parsing it: one OpenLineage JobEvent per task.

A task's declaration is the one its runs will report: the ``@lineage`` / ``LineageMixin`` spec kept on the
operator (built into inputs and outputs by the same code as the run's events, schema, column lineage,
owners and facets included), or, for tasks without one, their ``inlets``/``outlets`` (Airflow Assets,
OpenLineage datasets). The job is named as the OpenLineage provider names a task's job
(``[openlineage] namespace``, ``<dag_id>.<task_id>``), so a task's run meets its declaration in the graph.

**Tables behind a connection** (``sql_table("warehouse", "analytics.staging.stg_orders")``) are named
after the connection, which is only known where the connection can be looked up. Here it is looked up
(with a deadline) where it is defined (``AIRFLOW_CONN_<ID>``, a secrets backend, the metadata database),
giving the names the task's runs will report; where it is not, the table keeps the name its Airflow Asset
has: namespace ``x-sql-conn://<conn_id>``, name the table, and the connection id is listed in
:attr:`StaticLineage.unresolved_connections`.

Run as ``python -m airflow_lineage_plus.declared.extract --dags DIR --out FILE`` it writes the result as
JSON: :mod:`.versions` parses each version of a DAG folder in a process of its own this way.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from collections.abc import Iterable, Sequence
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

import attr

from airflow_lineage_plus import _compat, datasets
from airflow_lineage_plus.__about__ import __version__
from airflow_lineage_plus.author import build, validation
from airflow_lineage_plus.author.mixins import SPEC_ATTRIBUTE, spec_from_kwargs
from airflow_lineage_plus.author.spec import LineageSpec
from airflow_lineage_plus.containment import call_within
from airflow_lineage_plus.deliver.serialize import plain
from airflow_lineage_plus.exceptions import LineagePlusError

PRODUCER = f"https://github.com/airflow-lineage-plus/airflow-lineage-plus/tree/{__version__}"
#: Seconds one connection lookup may take before the table keeps its connection name.
CONNECTION_LOOKUP_SECONDS = 5.0


@attr.frozen
class StaticLineage:
    """What a DAG folder declares: JobEvents (objects, or JSON-ready dicts when read back from JSON)."""

    events: list[Any]
    #: DAG file (relative to the folder) -> why it did not parse (or why a task's declaration is invalid)
    import_errors: dict[str, str]
    dag_count: int
    #: connection ids that could not be looked up: their tables are named ``x-sql-conn://<conn_id>``
    unresolved_connections: tuple[str, ...] = ()

    def to_json(self) -> dict[str, Any]:
        return {
            "events": [plain(event) for event in self.events],
            "importErrors": self.import_errors,
            "dagCount": self.dag_count,
            "unresolvedConnections": list(self.unresolved_connections),
        }

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> StaticLineage:
        return cls(
            events=list(data["events"]),
            import_errors=dict(data["importErrors"]),
            dag_count=int(data["dagCount"]),
            unresolved_connections=tuple(data.get("unresolvedConnections") or ()),
        )


class ConnectionNames:
    """The dataset identity of tables behind connections, outside a task run (see the module doc)."""

    def __init__(self, resolve: bool = True, seconds: float = CONNECTION_LOOKUP_SECONDS) -> None:
        self.resolve = resolve
        self.seconds = seconds
        self.names: dict[datasets.ConnectionTableRef, datasets.DatasetRef] = {}
        self.unresolved: set[str] = set()

    def __call__(self, ref: datasets.ConnectionTableRef) -> datasets.DatasetRef:
        known = self.names.get(ref)
        if known is not None:
            return known
        name = None
        if self.resolve and ref.conn_id not in self.unresolved:
            try:
                what = f"looking up connection {ref.conn_id!r}"
                name = call_within(self.seconds, what, ref.resolve).with_partition(None)
            except Exception:  # undefined, unreachable or too slow: the table keeps its connection name
                name = None
        if name is None:
            self.unresolved.add(ref.conn_id)
            name = datasets.DatasetRef(f"{datasets.CONNECTION_TABLE_SCHEME}://{ref.conn_id}", ref.table)
        self.names[ref] = name
        return name


def default_namespace() -> str:
    """The job namespace the provider gives task runs (``[openlineage] namespace``)."""
    from airflow.providers.openlineage import conf as openlineage_conf

    return str(openlineage_conf.namespace())


def read_dag_folder(
    folder: str | Path,
    *,
    namespace: str | None = None,
    resolve_connections: bool = True,
    now: datetime | None = None,
) -> StaticLineage:
    """Parse the DAG files under ``folder`` (as the DAG processor would) and read every task's declaration.

    The folder is put on ``sys.path`` while parsing, as Airflow does for its DAG folder, so DAG files
    import their helper modules the same way.
    """
    root = Path(folder).resolve()
    added = str(root) not in sys.path
    if added:
        sys.path.insert(0, str(root))
    try:
        bag = _compat.dag_bag(str(root))
    finally:
        if added:
            sys.path.remove(str(root))
    names = ConnectionNames(resolve_connections)
    errors = {_relative(root, path): str(error) for path, error in bag.import_errors.items()}
    events = []
    when = (now or datetime.now(timezone.utc)).isoformat()
    job_namespace = namespace or default_namespace()
    for dag_id in sorted(bag.dags):
        dag = bag.dags[dag_id]
        for task in sorted(dag.tasks, key=lambda t: t.task_id):
            try:
                event = task_event(dag, task, namespace=job_namespace, names=names, event_time=when)
            except (LineagePlusError, TypeError, ValueError) as exc:
                errors[f"{_relative(root, dag.fileloc)} (task {task.task_id})"] = str(exc)
                continue
            if event is not None:
                events.append(event)
    return StaticLineage(events, errors, len(bag.dags), tuple(sorted(names.unresolved)))


def _relative(root: Path, path: str | None) -> str:
    try:
        return str(Path(path or "").resolve().relative_to(root))
    except ValueError:
        return str(path)


def declared_spec(task: Any, dag_file: str | None = None) -> LineageSpec | None:
    """The task's declaration: the spec on the operator, or on a mapped task still in its arguments."""
    spec = getattr(task, SPEC_ATTRIBUTE, None)
    if spec is None and isinstance(getattr(task, "partial_kwargs", None), dict):
        spec = spec_from_kwargs(dict(task.partial_kwargs))
        if spec is not None:  # an operator checks its declaration when built: a mapped one only at run time
            validation.validate(spec, task.task_id, dag_file)
    return spec if isinstance(spec, LineageSpec) else None


def _asset_ref(item: Any) -> datasets.AnyRef | None:
    """The dataset an inlet or outlet names: an Asset (by its URI), an OpenLineage dataset, or a ref."""
    if isinstance(item, datasets.DatasetRef | datasets.ConnectionTableRef):
        return item
    if isinstance(getattr(item, "uri", None), str):
        try:
            return datasets.parse_ref(item)
        except datasets.DatasetNameError:
            translated = _compat.translate_asset(item)  # a scheme of another provider
            return None if translated is None else datasets.DatasetRef(translated.namespace, translated.name)
    namespace, name = getattr(item, "namespace", None), getattr(item, "name", None)
    if isinstance(namespace, str) and isinstance(name, str) and namespace and name:
        return datasets.DatasetRef(namespace, name)
    return None


def _asset_datasets(items: Iterable[Any] | None, names: ConnectionNames, *, output: bool) -> list[Any]:
    """The OpenLineage datasets of a task's inlets or outlets (an OpenLineage dataset keeps its facets)."""
    from openlineage.client.event_v2 import InputDataset, OutputDataset

    kind = OutputDataset if output else InputDataset
    found = []
    for item in items or ():
        ref = _asset_ref(item)
        if ref is None:
            continue
        name = names(ref) if isinstance(ref, datasets.ConnectionTableRef) else ref
        facets = getattr(item, "facets", None) if not hasattr(item, "uri") else None
        found.append(kind(namespace=name.namespace, name=name.name, facets=dict(facets or {})))
    return found


def task_event(dag: Any, task: Any, *, namespace: str, names: ConnectionNames, event_time: str) -> Any | None:
    """The JobEvent of one task, or None when it declares no lineage."""
    from openlineage.client.event_v2 import Job, JobEvent

    spec = declared_spec(task, getattr(dag, "fileloc", None))
    if spec is not None:
        resolved = {ref: names(ref) for ref in spec.connection_refs()}
        lineage = build.to_operator_lineage(spec, resolved_refs=resolved)
        inputs, outputs, job_facets = list(lineage.inputs), list(lineage.outputs), lineage.job_facets
    else:
        inputs = _asset_datasets(getattr(task, "inlets", None), names, output=False)
        outputs = _asset_datasets(getattr(task, "outlets", None), names, output=True)
        job_facets = {}
        if not inputs and not outputs:
            return None
    return JobEvent(
        eventTime=event_time,
        producer=PRODUCER,
        job=Job(
            namespace=namespace,
            name=f"{dag.dag_id}.{task.task_id}",
            facets={**_task_facets(dag, task), **job_facets},
        ),
        inputs=inputs,
        outputs=outputs,
    )


def _task_facets(dag: Any, task: Any) -> dict[str, Any]:
    """The job facets the provider builds from the task: type, documentation and owners."""
    from openlineage.client.facet_v2 import documentation_job, job_type_job, ownership_job

    facets: dict[str, Any] = {
        "jobType": job_type_job.JobTypeJobFacet(processingType="BATCH", integration="AIRFLOW", jobType="TASK")
    }
    doc, doc_type = _compat.task_documentation(task, dag)
    if doc:
        facets["documentation"] = documentation_job.DocumentationJobFacet(
            description=doc, contentType=doc_type
        )
    owner = getattr(task if getattr(task, "owner", "airflow") != "airflow" else dag, "owner", None)
    owners = sorted({part.strip() for part in str(owner or "").split(",") if part.strip()})
    if owners:
        facets["ownership"] = ownership_job.OwnershipJobFacet(
            owners=[ownership_job.Owner(name=o) for o in owners]
        )
    return facets


def main(argv: Sequence[str] | None = None) -> int:
    """``--dags DIR --out FILE``: write the folder's :class:`StaticLineage` as JSON (see :mod:`.versions`)."""
    parser = argparse.ArgumentParser(prog="python -m airflow_lineage_plus.declared.extract")
    parser.add_argument("--dags", required=True)
    parser.add_argument("--out", required=True)
    parser.add_argument("--namespace")
    parser.add_argument("--no-resolve-connections", dest="resolve", action="store_false")
    args = parser.parse_args(argv)
    found = read_dag_folder(args.dags, namespace=args.namespace, resolve_connections=args.resolve)
    with open(args.out + ".part", "w") as handle:
        json.dump(found.to_json(), handle)
    os.replace(args.out + ".part", args.out)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
