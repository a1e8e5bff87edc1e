"""One run of a job, folded from all its events whatever their arrival order.

Each fact of a run carries the event time it came from; a later (by event time, not by arrival) fact
wins, with ties broken by content, so a shuffled or repeated stream folds to the same record.
"""

from __future__ import annotations

import sys

from airflow_lineage_plus.graph import wire as w

# event type -> (run state, priority when two terminal events have the same time)
_TERMINAL = {"COMPLETE": ("COMPLETED", 1), "ABORT": ("ABORTED", 2), "FAIL": ("FAILED", 3)}
FAILED_STATES = frozenset({"FAILED", "ABORTED"})
#: the states of a run that did no work: skipped, or never run because an upstream task failed
NOT_RUN_STATES = frozenset({"SKIPPED", "UPSTREAM_FAILED"})
SCHEDULER_SKIP_REASON = "skipped by the scheduler (DAG run airflowState.tasksState)"
NO_EDGES: frozenset[tuple[str, str]] = frozenset()
NO_REFS: tuple[int, ...] = ()
UPSTREAM_FAILED_REASON = "upstream failed (DAG run airflowState.tasksState)"
#: the Airflow task-instance state the skip facet and ``tasksState`` use for "an upstream task failed"
AIRFLOW_UPSTREAM_FAILED = "upstream_failed"


class RunRecord:
    """One run, folded from all its events whatever their arrival order."""

    __slots__ = (
        "dag_id",
        "end",
        "error",
        "error_key",
        "exec_mode",
        "exec_mode_time",
        "first_seen",
        "io",
        "job_id",
        "parent_job_id",
        "parent_run_id",
        "rank",
        "refs",
        "run_id",
        "skip_reason",
        "skipped",
        "start",
        "upstream_failed",
    )

    def __init__(self, run_id: str | None, job_id: str) -> None:
        self.run_id = run_id
        self.job_id = job_id
        self.start: int | None = None  # time of the earliest START
        self.first_seen: int | None = None
        # the priority of the winning terminal event (0: none yet), at ``end``: kept beside ``end`` rather
        # than as a (time, priority) tuple, since a year of history holds millions of runs (docs/graph.md)
        self.rank = 0
        self.end: int | None = None
        self.error: str | None = None
        self.error_key: tuple[int, str] | None = None
        self.skipped = False
        self.skip_reason: str | None = None
        self.exec_mode: str | None = None
        self.exec_mode_time = -1
        self.parent_run_id: str | None = None
        # kept only by graphs that show details (``LineageGraph.keep_refs``); others share one empty tuple
        self.refs: list[int] | tuple[int, ...] = NO_REFS
        #: the edges (origin, destination) its events reported, shared between runs of a job that reported
        #: the same ones (see :meth:`LineageGraph.current_io`)
        self.io: frozenset[tuple[str, str]] = NO_EDGES
        self.upstream_failed = False  # with skipped: the run never ran because an upstream task failed
        self.parent_job_id: str | None = None  # the parent facet's job, as a job node id
        self.dag_id: str | None = None  # the Airflow DAG the run belongs to, from the provider's facets

    @property
    def terminal(self) -> tuple[int, int] | None:
        """(time, priority) of the winning terminal event, None while the run has none."""
        return (self.end if self.end is not None else 0, self.rank) if self.rank else None

    @terminal.setter
    def terminal(self, value: tuple[int, int] | None) -> None:
        if value is None:
            self.rank = 0
            return
        if value[0] != (self.end if self.end is not None else 0):
            self.end = value[0]
        self.rank = value[1]

    @property
    def state(self) -> str:
        if not self.rank:
            return "RUNNING"
        if self.skipped and self.rank != _TERMINAL["FAIL"][1]:
            return "UPSTREAM_FAILED" if self.upstream_failed else "SKIPPED"
        return {1: "COMPLETED", 2: "ABORTED", 3: "FAILED"}[self.rank]

    @property
    def completed(self) -> bool:
        """``state == "COMPLETED"``, without building the state."""
        return self.rank == 1 and not self.skipped

    @property
    def started_at(self) -> int | None:
        return self.start if self.start is not None else self.first_seen

    def sort_key(self) -> tuple[int, str]:
        started = self.start if self.start is not None else self.first_seen  # started_at, inlined
        return (started if started is not None else -(2**62), self.run_id or "")

    def summary(self) -> dict[str, object]:
        return {
            "runId": self.run_id,
            "state": self.state,
            "startedAt": w.format_micros(self.started_at),
            "endedAt": w.format_micros(self.end),
            "errorMessage": self.error,
        }

    def observe(self, event_type: str | None, micros: int, facets: w.RunFacets | None) -> str | None:
        """Fold one event of the run; the parent run's id when the event gave the run its parent (the graph
        notes the parent's child), else None."""
        if self.first_seen is None or micros < self.first_seen:
            self.first_seen = micros
        if event_type == "START" and (self.start is None or micros < self.start):
            self.start = micros
        terminal = _TERMINAL.get(event_type or "")
        skip = facets.skipState if facets is not None else None
        if terminal is not None:
            rank, end = terminal[1], (self.end if self.end is not None else 0)  # as in ``terminal``
            if not self.rank or micros > end or (micros == end and rank > self.rank):
                self.rank = rank
                self.end = micros
                self.skipped = bool(skip and skip.skipped)
                self.skip_reason = skip.reason if skip and skip.skipped else None
                self.upstream_failed = bool(skip and skip.skipped and skip.state == AIRFLOW_UPSTREAM_FAILED)
            elif micros == end and rank == self.rank and skip is not None and skip.skipped:
                self.skipped = True
                self.upstream_failed = self.upstream_failed or skip.state == AIRFLOW_UPSTREAM_FAILED
                if skip.reason is not None and (self.skip_reason is None or skip.reason < self.skip_reason):
                    self.skip_reason = skip.reason
        if facets is None:
            return None
        dag_id = _dag_id(facets)
        if dag_id is not None and (self.dag_id is None or dag_id < self.dag_id):
            self.dag_id = dag_id  # the least of them if events disagree: the same in any order
        if facets.errorMessage is not None and facets.errorMessage.message is not None:
            error_key = (micros, facets.errorMessage.message)
            if self.error_key is None or error_key > self.error_key:
                self.error_key = error_key
                self.error = facets.errorMessage.message
        mode = facets.executionMode.mode if facets.executionMode is not None else None
        if mode is not None and (
            micros > self.exec_mode_time or (micros == self.exec_mode_time and mode < (self.exec_mode or ""))
        ):
            self.exec_mode = mode
            self.exec_mode_time = micros
        if facets.parent is not None and self.parent_run_id is None:
            self.parent_run_id = sys.intern(facets.parent.run.runId)  # shared by the DAG run's tasks
            parent_job = facets.parent.job
            if parent_job is not None:
                self.parent_job_id = sys.intern(f"job:{parent_job.namespace}:{parent_job.name}")
            return self.parent_run_id
        return None


def _dag_id(facets: w.RunFacets) -> str | None:
    """The DAG id the provider's ``airflow`` (task) or ``airflowDagRun`` (DAG run) facet names."""
    for facet in (facets.airflow, facets.airflowDagRun):
        if facet is not None and facet.dag is not None and facet.dag.dag_id:
            return sys.intern(facet.dag.dag_id)
    return None
