"""Freshness: datasets whose last successful write is older than their SLO, and the job responsible.

A dataset's freshness target is the ``lineagePlus_sloTier.freshnessMinutes`` of the jobs that write it
(``SloTier(tier=..., freshnessMinutes=...)`` declared on the task; the smallest when several do). Its last
successful write is the end of the latest COMPLETED run of those jobs (a skipped run wrote nothing). It is
in breach when that is longer ago than the target, or when it was never written. The job responsible is,
in this order: a writer whose latest run failed (``FAILED``), the nearest upstream job whose latest run
failed (``FAILED``), a writer whose latest run was skipped (``SKIPPED``), else the writer, which simply
has not written since (``LATE``: still running, not scheduled, or slower than its target).

Read from the lineage store (it needs every job with a target, which Marquez's neighbourhood API does
not list).

A reader of some DAGs only (``may_read_dag``, :mod:`airflow_lineage_plus.graph.visibility`) gets the
breaches of the datasets they may see, counted among those only, by the targets and the runs of the
writers they may see (a hidden writer's SLO and run times are not theirs), and a responsible job they
may see: the
walk upstream does not pass through jobs they may not see, and a writer they may not see is never named
(nor is its state a cause).
"""

from __future__ import annotations

from datetime import datetime, timezone
from typing import Any

import attr

from airflow_lineage_plus.act.alert_impact import DEPTH, Impact, downstream_impact
from airflow_lineage_plus.act.message import (
    FRESHNESS,
    Alert,
    Tell,
    Telling,
    first_node,
    lineage_link,
    make_alerts,
    node_label,
)
from airflow_lineage_plus.graph import LineageSource
from airflow_lineage_plus.graph.model import LineageGraph
from airflow_lineage_plus.graph.queries import node_dict
from airflow_lineage_plus.graph.runs import FAILED_STATES
from airflow_lineage_plus.graph.visibility import DagAccess, DagPredicate, Visibility
from airflow_lineage_plus.graph.walk import walk
from airflow_lineage_plus.store import wire as w

FAILED, SKIPPED, LATE = "FAILED", "SKIPPED", "LATE"
_MINUTE = 60 * 1_000_000


@attr.frozen
class Breach:
    """A dataset older than its freshness target."""

    dataset: dict[str, Any]
    freshness_minutes: int
    last_success: int | None  # epoch microseconds
    age_minutes: float | None
    cause: str
    responsible: dict[str, Any] | None

    @property
    def key(self) -> str:
        """One breach: the dataset and the write it has been stale since (alerts go once per breach)."""
        since = self.last_success if self.last_success is not None else "never"
        return f"freshness:{self.dataset['id']}:{since}"

    def to_json(self) -> dict[str, Any]:
        return {
            "dataset": self.dataset,
            "freshnessMinutes": self.freshness_minutes,
            "lastSuccess": w.format_micros(self.last_success),
            "ageMinutes": None if self.age_minutes is None else round(self.age_minutes, 1),
            "cause": self.cause,
            "responsible": self.responsible,
        }


def _targets(graph: LineageGraph, visibility: Visibility | None = None) -> dict[str, int]:
    """dataset id -> freshness target in minutes (the smallest of its writers': the jobs whose current
    edges write it, not a dataset a job stopped writing; only writers ``visibility`` shows)."""
    targets: dict[str, int] = {}
    for job_id in graph.job_ids_with_slo():
        job = graph.jobs[job_id]
        if job.slo_minutes is None or (visibility is not None and not visibility.job(job.id)):
            continue
        for dataset_id, _ in graph.neighbours(job.id, upstream=False, declared_too=False):
            if dataset_id in graph.datasets:
                targets[dataset_id] = min(job.slo_minutes, targets.get(dataset_id, job.slo_minutes))
    return targets


def _writers(graph: LineageGraph, dataset_id: str) -> list[str]:
    """The jobs that write the dataset now (current edges)."""
    found = graph.neighbours(dataset_id, upstream=True, declared_too=False)
    return sorted(j for j, _ in found if j in graph.jobs)


def _last_success(graph: LineageGraph, writers: list[str], at: int) -> int | None:
    ends = [
        run.end
        for job_id in writers
        for run in graph.all_runs(graph.jobs[job_id])
        if run.state == "COMPLETED" and run.end is not None and run.end <= at
    ]
    return max(ends, default=None)


def _latest_state(graph: LineageGraph, job_id: str) -> str | None:
    run = graph.latest_run(graph.jobs[job_id])
    return run.state if run is not None else None


def _job(graph: LineageGraph, job_id: str, depth: int) -> dict[str, Any]:
    return {**node_dict(graph, job_id, depth), "owners": list(graph.jobs[job_id].owners)}


def responsible(
    graph: LineageGraph, dataset_id: str, writers: list[str], visibility: Visibility | None = None
) -> tuple[str, dict[str, Any] | None]:
    """(cause, job) of a stale dataset: see the module doc for the order (only jobs ``visibility``
    shows are looked at)."""
    if visibility is not None:
        writers = [job_id for job_id in writers if visibility.job(job_id)]
    for job_id in writers:
        if _latest_state(graph, job_id) in FAILED_STATES:
            return FAILED, _job(graph, job_id, 1)
    visible = visibility.node if visibility is not None else None
    seen = walk(graph, dataset_id, DEPTH, upstream=True, visible=visible).seen
    failed = sorted(
        (depth, node)
        for node, depth in seen.items()
        if node in graph.jobs and _latest_state(graph, node) in FAILED_STATES
    )
    if failed:
        return FAILED, _job(graph, failed[0][1], failed[0][0])
    for job_id in writers:
        if _latest_state(graph, job_id) == "SKIPPED":
            return SKIPPED, _job(graph, job_id, 1)
    return LATE, (_job(graph, writers[0], 1) if writers else None)


def breaches(
    source: LineageSource, at: datetime | None = None, may_read_dag: DagPredicate | None = None
) -> tuple[int, list[Breach]]:
    """(how many datasets have a freshness target, those in breach at ``at`` (default now)), oldest first;
    only what a reader of the DAGs ``may_read_dag`` allows is counted and shown (None: everything)."""
    moment = at or datetime.now(timezone.utc)
    now = w.to_micros(moment.isoformat())
    found = []
    with source.guard():
        graph = source.whole_graph()
        visibility = Visibility(graph, may_read_dag) if may_read_dag is not None else None
        targets = _targets(graph, visibility)  # a hidden writer's SLO is not the reader's to see
        for dataset_id, minutes in sorted(targets.items()):
            writers = _writers(graph, dataset_id)
            if visibility is not None:  # nor are its run times
                writers = [job_id for job_id in writers if visibility.job(job_id)]
            last = _last_success(graph, writers, now)
            if last is not None and now - last <= minutes * _MINUTE:
                continue
            cause, job = responsible(graph, dataset_id, writers, visibility)
            dataset = {**node_dict(graph, dataset_id, 0), "owners": list(graph.datasets[dataset_id].owners)}
            age = None if last is None else (now - last) / _MINUTE
            found.append(Breach(dataset, minutes, last, age, cause, job))
    found.sort(key=lambda b: (b.last_success if b.last_success is not None else -1, b.dataset["id"]))
    return len(targets), found


def report(
    source: LineageSource, at: datetime | None = None, may_read_dag: DagPredicate | None = None
) -> dict[str, Any]:
    """The JSON answer of ``lineage-plus freshness`` and the API route (scoped to ``may_read_dag``)."""
    moment = at or datetime.now(timezone.utc)
    checked, found = breaches(source, moment, may_read_dag)
    return {
        "at": w.format_micros(w.to_micros(moment.isoformat())),
        "checked": checked,
        "breaches": [b.to_json() for b in found],
    }


def _breach_head(breach: Breach, job: dict[str, Any] | None) -> list[str]:
    since = w.format_micros(breach.last_success) or "never"
    head = [
        f"Dataset {node_label(breach.dataset)} is stale "
        f"(freshness target: {breach.freshness_minutes} minutes).",
        f"  last successful write: {since}"
        + (f" ({breach.age_minutes:.0f} minutes ago)" if breach.age_minutes is not None else ""),
        f"  Cause: {breach.cause}"
        + (f", job {node_label(job)} ({(job.get('latestRun') or {}).get('state', 'no run')})" if job else ""),
    ]
    error = ((job or {}).get("latestRun") or {}).get("errorMessage")
    if error:
        head.append(f"  Error: {error}")
    return head


def _teller(breach: Breach, graph: LineageGraph, base_url: str) -> Tell:
    """How one breach is told to each reader: the dataset and the job responsible only to one who may see
    them (the Lineage view's rule); to a recipient with no Airflow user, that an upstream dataset is stale."""
    dataset_id = breach.dataset["id"]

    def tell(access: DagAccess | None, shown: Impact, owner: str) -> Telling:
        visibility = Visibility(graph, access.predicate() or (lambda _: True)) if access is not None else None
        if visibility is None or not visibility.dataset(dataset_id):
            link = lineage_link(base_url, first_node(shown, owner))
            head = ["An upstream dataset is stale (it missed its freshness target)."]
            return Telling("[lineage-plus] stale: an upstream dataset", head, link, {"kind": FRESHNESS})
        job = breach.responsible
        if job is not None and not visibility.job(job["id"]):
            job = None
        cause = breach.cause if job is not None or breach.responsible is None else "an upstream job"
        subject = f"[lineage-plus] stale: {breach.dataset['name']} ({cause})"
        facts = {"kind": FRESHNESS, "breach": {**breach.to_json(), "cause": cause, "responsible": job}}
        return Telling(
            subject,
            _breach_head(attr.evolve(breach, cause=cause), job),
            lineage_link(base_url, dataset_id),
            facts,
        )

    return tell


def freshness_alerts(
    source: LineageSource, found: list[Breach], *, base_url: str, recipients: dict[str, list[str]]
) -> list[Alert]:
    """One alert per owner (and recipient) of each breached dataset and of what is downstream of it, each
    telling what the recipient may read (docs/alerts.md)."""
    alerts: list[Alert] = []
    with source.guard():
        graph = source.whole_graph()
    for breach in found:
        impact = downstream_impact(source, [breach.dataset["id"]])
        tell = _teller(breach, graph, base_url)
        alerts += make_alerts(FRESHNESS, breach.key, impact, recipients, tell)
    return alerts
