"""The transport ``dbt-ol`` reports to when a task runs dbt: dbt's runs made to fit the task's lineage.

``dbt-ol`` (openlineage-dbt) turns dbt's artifacts into OpenLineage events after dbt exits. The task-side
helpers (:mod:`airflow_lineage_plus.dbt.dbt_run`) give it :class:`DbtLineageTransport`, which wraps the
transport the OpenLineage provider uses, so the events land where the task's own events land. On the
way, in the ``dbt-ol`` process, each event gets what ``dbt-ol`` leaves out or gets wrong:

1. **Dataset identity.** Names go through :meth:`airflow_lineage_plus.datasets.DatasetRef.of`, the rules
   the Airflow side names the same tables by: DuckDB and SQLite files absolute and normalised (a relative
   profile ``path`` is relative to dbt's working directory), table names lower-cased there, hosts and ports
   normalised elsewhere; a source declared with ``identifier:`` is named by its table, not its logical
   name. So the staging table an Airflow task writes is the node the dbt model reads. A dataset dbt
   reads loses dbt's ``schema`` facet: it lists only the columns the yml declares, without types, and
   would read as a schema change of the table its writer describes in full.
2. **Failed models.** A model's FAIL carries dbt's error (``errorMessage``) and still names the table it
   was building, as the provider's FAIL events do (``dbt-ol`` drops both).
3. **Tests.** The assertions of tests dbt skipped (their model failed) are removed: ``dbt-ol`` reports them
   as failed. A test run left with none becomes an ABORT with the ``lineagePlus_skipState`` facet.
4. **Skipped models.** ``dbt-ol`` emits nothing for a model dbt skipped; here it gets one ABORT record with
   the skip facet (``TRIGGER_RULE``/``all_success``, state ``upstream_failed``, the failed upstream node),
   as a child of the dbt run, like the provider-side records of tasks the scheduler skipped.
5. **Owners and service level.** A model's job carries the task's job facets (owners, ``SloTier``,
   ``OwningTeam``: freshness and alerts look at the jobs that write tables); a model's ``meta`` owner
   becomes its table's ``ownership``.
6. **Redaction and limits** of :func:`airflow_lineage_plus.deliver.event_budget.enforce`, with the values the
   task read (this process does not import Airflow): an event that cannot be checked is not sent.

Nothing here can fail dbt or the task: an event that cannot be rewritten is sent as ``dbt-ol`` made it,
and the problem is logged once (:mod:`airflow_lineage_plus.containment`).
"""

from __future__ import annotations

import json
import os
import sys
import time
from collections import Counter
from collections.abc import Iterable, Mapping
from datetime import datetime
from typing import Any

import attr
from openlineage.client.event_v2 import InputDataset, Job, OutputDataset, Run, RunEvent, RunState
from openlineage.client.facet_v2 import error_message_run, job_type_job, ownership_dataset, parent_run
from openlineage.client.transport import get_default_factory
from openlineage.client.transport.noop import NoopConfig, NoopTransport
from openlineage.client.transport.transport import Config, Transport
from openlineage.client.uuid import generate_static_uuid

from airflow_lineage_plus import _compat, custom_facets
from airflow_lineage_plus import facet_keys as fk
from airflow_lineage_plus.containment import contained, report
from airflow_lineage_plus.datasets import DatasetRef
from airflow_lineage_plus.datasets.identity import EMBEDDED_SCHEMES
from airflow_lineage_plus.dbt.dbt_artifacts import FAILED, DbtArtifacts, target_path_of_command_line
from airflow_lineage_plus.deliver.event_budget import Limits, enforce
from airflow_lineage_plus.deliver.serialize import describe
from airflow_lineage_plus.provider_info import OPTIONS

WRAPPER, MODEL, SNAPSHOT, TEST = "JOB", "MODEL", "SNAPSHOT", "TEST"
TERMINAL = frozenset({RunState.COMPLETE, RunState.FAIL, RunState.ABORT})
STRUCTURED_LOGS = "--consume-structured-logs"
LIMIT_OPTIONS = ("sql_max_length", "schema_max_columns", "event_size_budget", "quality_include_values")


def dataset_identity(
    namespace: str, name: str, cwd: str, tables: Mapping[str, str] | None = None
) -> tuple[str, str]:
    """(namespace, name) of a dataset as dbt-ol named it, in this project's identity.

    ``cwd`` is dbt's working directory (a relative DuckDB/SQLite path is relative to it); ``tables`` maps a
    source's logical name to its table (:meth:`DbtArtifacts.source_tables`). A pair the identity rules
    reject is kept as it was.
    """
    scheme, sep, rest = namespace.partition("://")
    name = (tables or {}).get(name.lower(), name)
    if sep and scheme.lower() in EMBEDDED_SCHEMES:
        if ":" in rest or not rest:  # :memory:, md:<database> (MotherDuck): not a file to resolve
            return f"{scheme.lower()}://{rest}", name.lower()
        if not rest.startswith("/"):
            namespace = f"{scheme}://{os.path.normpath(os.path.join(cwd, rest))}"
    try:
        ref = DatasetRef.of(namespace, name)
    except ValueError:
        return namespace, name
    return ref.namespace, ref.name


def _default_limits() -> Limits:
    """The shipped defaults, for a config without limits (read without importing Airflow)."""
    return Limits.from_dict({option: OPTIONS[option]["default"] for option in LIMIT_OPTIONS})


@attr.define
class DbtLineageConfig(Config):
    """Settings of :class:`DbtLineageTransport` (``run_dbt`` and the templates fill them in).

    Attributes:
        transport: the config of the transport the events go to (the provider's ``[openlineage]``
            transport).
        target_path: dbt's target folder (default: as ``dbt-ol`` finds it from its command line).
        limits: the ``[lineage_plus]`` limits (:meth:`Limits.as_dict`); the defaults when missing.
        job_facets: job facets (as JSON) of the task running dbt that its model jobs carry too (owners,
            service level: :func:`airflow_lineage_plus.dbt.dbt_run.task_job_facets`).
        secrets: the secrets of the task's masker (``re.escape``-d), redacted here too.

    ``config_file``: a JSON file holding these settings (the task writes it, ``0600``, so that the
    transport's credentials and the secrets never sit in an environment variable or a rendered template).
    """

    transport: dict[str, Any] | None = None
    target_path: str | None = None
    limits: dict[str, Any] | None = None
    job_facets: dict[str, Any] | None = None
    secrets: list[str] = attr.Factory(list)

    @classmethod
    def from_dict(cls, params: dict[str, Any]) -> DbtLineageConfig:
        if params.get("config_file"):
            with open(str(params["config_file"]), "rb") as handle:
                params = {**json.load(handle), **{k: v for k, v in params.items() if k != "config_file"}}

        def mapping(key: str) -> dict[str, Any] | None:
            value = params.get(key)
            return dict(value) if isinstance(value, dict) else None

        return cls(
            transport=mapping("transport"),
            target_path=str(params["target_path"]) if params.get("target_path") else None,
            limits=mapping("limits"),
            job_facets=mapping("job_facets"),
            secrets=[str(p) for p in params.get("secrets") or ()],
        )


class DbtLineageTransport(Transport):
    """Rewrites ``dbt-ol``'s events (see the module docstring), then hands them to the wrapped transport."""

    kind = "lineage_plus_dbt"
    config_class = DbtLineageConfig

    def __init__(self, config: DbtLineageConfig) -> None:
        self.config = config
        _compat.add_secret_patterns(config.secrets)  # the task's masker's, before any event is redacted
        self.started = time.time()
        self.cwd = os.getcwd()
        self.inner = _inner_transport(config.transport)
        self.limits = _default_limits()
        with contained("the [lineage_plus] limits passed to dbt-ol (the defaults apply)"):
            if config.limits:
                self.limits = Limits.from_dict(config.limits)
        self.target_path = config.target_path or target_path_of_command_line()
        # dbt-ol --consume-structured-logs sends events live, by other job names, with its own ABORTs for
        # skipped nodes: its events get names, redaction and limits, nothing from the artifacts
        self.live = STRUCTURED_LOGS in sys.argv[1:]
        self._artifacts: DbtArtifacts | None = None
        self._loaded = self.live
        self.wrapper: Any = None  # the START event of dbt-ol's run of the whole command
        self.planned_outputs: dict[str, list[Any]] = {}  # runId -> outputs named at START
        self.namespaces: Counter[str] = Counter()  # dataset namespaces seen, for skip records' inputs

    def emit(self, event: Any) -> None:
        for out in self.rewrite(event):
            try:
                checked = enforce(out, self.limits)
            except Exception as exc:  # fail closed, as BudgetTransformer: unchecked events are not sent
                report(f"{describe(out)} from dbt-ol, which could not be checked for secrets and size", exc)
                continue
            # the checked JSON-ready dict, as BudgetTransformer hands on: every client transport takes dicts
            self.inner.emit(checked)  # type: ignore[arg-type]

    def close(self, timeout: float = -1) -> bool:
        return bool(self.inner.close(timeout))

    # -- rewriting ------------------------------------------------------------------------------------

    def artifacts(self) -> DbtArtifacts | None:
        """This invocation's run results and manifest (read once; None before dbt wrote them)."""
        if not self._loaded:
            self._artifacts = DbtArtifacts.read(self.target_path, not_before=self.started - 1)
            self._loaded = self._artifacts is not None
        return self._artifacts

    def rewrite(self, event: Any) -> list[Any]:
        """The events to send for one event of ``dbt-ol`` (itself, changed; before the end of the dbt run
        also the records of the models dbt skipped)."""
        out = [event]
        with contained("dbt lineage fixes (dataset names, errors, skipped nodes) of a dbt-ol event"):
            out = self._rewrite(event)
        return out

    def _rewrite(self, event: Any) -> list[Any]:
        if not isinstance(event, RunEvent):
            return [event]
        artifacts = self.artifacts()
        self._rename_datasets(event, artifacts)
        kind = _job_type(event)
        if kind == WRAPPER:
            if event.eventType == RunState.START:
                self.wrapper = event
                return [event]
            if event.eventType in TERMINAL and artifacts is not None:
                _add_error(event, _failure_summary(artifacts))
                return [*self._skip_records(artifacts, event), event]
        elif kind in (MODEL, SNAPSHOT) and artifacts is not None:
            self._model_event(event, artifacts)
        elif kind == TEST and artifacts is not None:
            _test_event(event, artifacts)
        return [event]

    def _rename_datasets(self, event: RunEvent, artifacts: DbtArtifacts | None) -> None:
        tables = artifacts.source_tables() if artifacts is not None else {}
        for dataset in event.inputs or ():
            # dbt describes what it reads by the columns its yml declares (no types): the writer's schema
            # stays the table's schema, rather than a partial view that would look like a schema change
            (dataset.facets or {}).pop(fk.SCHEMA, None)
        for dataset in [*(event.inputs or ()), *(event.outputs or ())]:
            old = dataset.namespace
            dataset.namespace, dataset.name = dataset_identity(
                dataset.namespace, dataset.name, self.cwd, tables
            )
            self.namespaces[dataset.namespace] += 1
            dataset_facets = dataset.facets or {}
            source = dataset_facets.get("dataSource")
            if source is not None and old in (source.name, source.uri):
                source.name = source.uri = dataset.namespace
            lineage = dataset_facets.get(fk.COLUMN_LINEAGE)
            if lineage is None:
                continue
            fields = [f for spec in (lineage.fields or {}).values() for f in spec.inputFields or ()]
            for field in [*fields, *(getattr(lineage, "dataset", None) or ())]:
                field.namespace, field.name = dataset_identity(field.namespace, field.name, self.cwd, tables)

    def _model_event(self, event: RunEvent, artifacts: DbtArtifacts) -> None:
        """The task's job facets and the model's owner on a model's events; remember what its START says
        it builds; give its FAIL dbt's error and that output."""
        self._add_task_facets(event)
        node = artifacts.nodes.get(_unique_id(event) or "") or {}
        owners = _meta_owners(node)
        for dataset in event.outputs or ():
            if owners and dataset.facets is not None and fk.OWNERSHIP not in dataset.facets:
                owned = [ownership_dataset.Owner(name=owner) for owner in owners]
                dataset.facets[fk.OWNERSHIP] = ownership_dataset.OwnershipDatasetFacet(owners=owned)
        run_id = str(event.run.runId)
        if event.eventType == RunState.START:
            self.planned_outputs[run_id] = [OutputDataset(d.namespace, d.name) for d in event.outputs or ()]
        elif event.eventType == RunState.FAIL:
            result = artifacts.results.get(_unique_id(event) or "")
            _add_error(event, result.message if result is not None else None)
            if not event.outputs:
                event.outputs = list(self.planned_outputs.get(run_id, ()))

    def _add_task_facets(self, event: RunEvent) -> None:
        """The job facets of the task running dbt (owners, service level) on a model job's event."""
        facets = self.config.job_facets or {}
        if facets:
            event.job.facets = {**facets, **(event.job.facets or {})}

    def _skip_records(self, artifacts: DbtArtifacts, end: RunEvent) -> list[RunEvent]:
        """One ABORT per model or snapshot dbt skipped, a child of the dbt run, at the run's end."""
        if self.wrapper is None:
            return []
        records = []
        for node in artifacts.skipped_models():
            with contained(f"the skip record of dbt node {node.get('unique_id')}"):
                records.append(self._skip_record(artifacts, node, end))
        return records

    def _skip_record(self, artifacts: DbtArtifacts, node: Mapping[str, Any], end: RunEvent) -> RunEvent:
        unique_id = str(node["unique_id"])
        kind = SNAPSHOT if node.get("resource_type") == "snapshot" else MODEL
        suffix = (
            {MODEL: ".build.run", SNAPSHOT: ".build.snapshot"}[kind] if artifacts.command == "build" else ""
        )
        if kind == SNAPSHOT and artifacts.command == "snapshot":
            suffix = ".snapshot"
        local = unique_id.split(".", 1)[1]
        job_name = ".".join(str(p) for p in (node.get("database"), node.get("schema"), local) if p) + suffix
        run_facets: dict[str, Any] = {
            "parent": self._dbt_run_as_parent(),
            custom_facets.SkipStateRunFacet.key: _skip_facet(artifacts, unique_id),
        }
        engine = (self.wrapper.run.facets or {}).get("processing_engine")
        if engine is not None:
            run_facets["processing_engine"] = engine
        job_type = job_type_job.JobTypeJobFacet(processingType="BATCH", integration="DBT", jobType=kind)
        started = _parse_time(self.wrapper.eventTime)
        record = RunEvent(
            eventType=RunState.ABORT,
            eventTime=end.eventTime,
            run=Run(
                runId=str(generate_static_uuid(started, f"{artifacts.invocation_id}/{unique_id}".encode())),
                facets=run_facets,
            ),
            job=Job(namespace=_node_namespace(), name=job_name, facets={"jobType": job_type}),
            inputs=self._inputs_of(artifacts, unique_id),
            outputs=[],
            producer=end.producer,
        )
        self._add_task_facets(record)
        return record

    def _dbt_run_as_parent(self) -> parent_run.ParentRunFacet:
        """The parent facet of dbt-ol's node runs: the dbt run, and the dbt run's own root."""
        wrapper = self.wrapper
        own = (wrapper.run.facets or {}).get("parent")
        root = getattr(own, "root", None)
        if own is not None and root is None:
            root = parent_run.Root(
                run=parent_run.RootRun(runId=own.run.runId),
                job=parent_run.RootJob(namespace=own.job.namespace, name=own.job.name),
            )
        return parent_run.ParentRunFacet(
            run=parent_run.Run(runId=str(wrapper.run.runId)),
            job=parent_run.Job(namespace=wrapper.job.namespace, name=wrapper.job.name),
            root=root,
        )

    def _inputs_of(self, artifacts: DbtArtifacts, unique_id: str) -> list[InputDataset]:
        """The tables a skipped model would have read (its parent models, seeds and sources)."""
        if not self.namespaces:
            return []
        namespace = self.namespaces.most_common(1)[0][0]
        inputs = []
        for parent in artifacts.parent_map.get(unique_id) or ():
            node = artifacts.nodes.get(parent) or artifacts.sources.get(parent)
            if not node or node.get("resource_type") not in {"model", "seed", "snapshot", "source"}:
                continue
            table = node.get("identifier") if node.get("resource_type") == "source" else node.get("alias")
            name = ".".join(
                str(p) for p in (node.get("database"), node.get("schema"), table or node["name"]) if p
            )
            ns, nm = dataset_identity(namespace, name, self.cwd)
            inputs.append(InputDataset(ns, nm))
        return inputs


def _inner_transport(config: dict[str, Any] | None) -> Transport:
    """The wrapped transport: the given config, else what the client finds without this one
    (``OPENLINEAGE_URL``, ``openlineage.yml``, ...: the provider's fallback too); a no-op one (and one
    warning) when neither can be built."""
    try:
        if config:
            return get_default_factory().create(dict(config))
        return _discovered_transport()
    except Exception as exc:
        report("dbt's OpenLineage events (dbt-ol's transport config cannot be used)", exc)
        return NoopTransport(NoopConfig())


def _discovered_transport() -> Transport:
    from openlineage.client.client import OpenLineageClient

    ours = {key: os.environ.pop(key) for key in list(os.environ) if key.startswith("OPENLINEAGE__TRANSPORT")}
    try:
        return OpenLineageClient().transport
    finally:
        os.environ.update(ours)


def _meta_owners(node: Mapping[str, Any]) -> list[str]:
    """The owners a dbt node names in its ``meta`` (``owner: team:analytics`` or a list), dbt's convention."""
    meta = {**(node.get("meta") or {}), **((node.get("config") or {}).get("meta") or {})}
    owner = meta.get("owner")
    names = owner if isinstance(owner, list) else [owner]
    return [str(name) for name in names if isinstance(name, str) and name.strip()]


def _job_type(event: RunEvent) -> str | None:
    job_type = (event.job.facets or {}).get("jobType")
    if job_type is None or str(getattr(job_type, "integration", "")).upper() != "DBT":
        return None
    return str(getattr(job_type, "jobType", "")).upper() or None


def _unique_id(event: RunEvent) -> str | None:
    node = (event.job.facets or {}).get("dbt_node")
    value = getattr(node, "unique_id", None)
    return str(value) if value else None


def _node_namespace() -> str:
    """The namespace of dbt-ol's node jobs: OPENLINEAGE_NAMESPACE, as dbt-ol reads it."""
    return os.environ.get("OPENLINEAGE_NAMESPACE", "dbt")


def _parse_time(value: str) -> datetime:
    return datetime.fromisoformat(str(value).replace("Z", "+00:00"))


def _add_error(event: RunEvent, message: str | None) -> None:
    if event.eventType != RunState.FAIL or not message:
        return
    run_facets = dict(event.run.facets or {})
    if fk.ERROR_MESSAGE not in run_facets:
        run_facets[fk.ERROR_MESSAGE] = error_message_run.ErrorMessageRunFacet(
            message=message, programmingLanguage="SQL"
        )
        event.run = attr.evolve(event.run, facets=run_facets)


def _failure_summary(artifacts: DbtArtifacts) -> str | None:
    failed = artifacts.failed()
    if not failed:
        return None
    lines = [f"{r.unique_id}: {(r.message or r.status).strip()}" for r in failed]
    return f"dbt {artifacts.command} failed on {len(failed)} node(s):\n" + "\n".join(lines)


def _skip_facet(artifacts: DbtArtifacts, unique_id: str) -> custom_facets.SkipStateRunFacet:
    cause = artifacts.failed_ancestor(unique_id)
    if cause is not None:
        return custom_facets.SkipStateRunFacet(
            skipped=True,
            reason=custom_facets.TRIGGER_RULE,
            message=f"dbt skipped {unique_id}: its upstream {cause} failed (dbt builds a node only when "
            f"everything upstream succeeded, like the all_success trigger rule)",
            causedBy=cause,
            triggerRule="all_success",
            state="upstream_failed",
        )
    result = artifacts.results.get(unique_id)
    said = result.message if result is not None and result.message else "no reason given"
    return custom_facets.SkipStateRunFacet(
        skipped=True,
        reason=custom_facets.UNKNOWN,
        message=f"dbt skipped {unique_id}: {said}",
        state="skipped",
    )


def _assertion_facets(event: RunEvent) -> Iterable[Any]:
    for dataset in event.inputs or ():
        for group in (dataset.inputFacets, dataset.facets):
            facet = (group or {}).get(fk.DATA_QUALITY_ASSERTIONS)
            if facet is not None:
                yield facet


def _test_event(event: RunEvent, artifacts: DbtArtifacts) -> None:
    """Drop the assertions of tests dbt skipped; a test run left with none is an ABORT (skipped)."""
    unique_id = _unique_id(event)
    tests = artifacts.tests_of(unique_id) if unique_id else {}
    skipped = {name for name, result in tests.items() if result.status == "skipped"}
    kept: list[Any] = []
    for facet in _assertion_facets(event):
        facet.assertions = [a for a in facet.assertions or () if a.name not in skipped]
        kept = facet.assertions
    if skipped and not kept:
        for dataset in event.inputs or ():
            for group in (dataset.inputFacets, dataset.facets):
                (group or {}).pop(fk.DATA_QUALITY_ASSERTIONS, None)
    if event.eventType not in TERMINAL:
        return
    if skipped and not kept and unique_id:
        event.eventType = RunState.ABORT
        failed_itself = artifacts.status(unique_id) in FAILED
        skip = _skip_of_failed(unique_id) if failed_itself else _skip_facet(artifacts, unique_id)
        event.run = attr.evolve(event.run, facets={**(event.run.facets or {}), skip.key: skip})
        return
    failing = [a for a in kept if not a.success and (a.severity or "error").lower() != "warn"]
    event.eventType = RunState.FAIL if failing else RunState.COMPLETE
    if failing:
        messages = {name: r.message for name, r in tests.items() if r.status in FAILED}
        _add_error(event, "\n".join(f"{a.name}: {messages.get(a.name) or 'failed'}" for a in failing))


def _skip_of_failed(unique_id: str) -> custom_facets.SkipStateRunFacet:
    """The tests of a model that failed itself were skipped because of it."""
    return custom_facets.SkipStateRunFacet(
        skipped=True,
        reason=custom_facets.TRIGGER_RULE,
        message=f"dbt skipped the tests of {unique_id}: it failed",
        causedBy=unique_id,
        triggerRule="all_success",
        state="upstream_failed",
    )
