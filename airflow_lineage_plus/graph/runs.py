"""One run of a job, as the folded state has it (the rules: :mod:`airflow_lineage_plus.store.fold`)."""

from __future__ import annotations

from airflow_lineage_plus.store import wire as w
from airflow_lineage_plus.store.facts import AIRFLOW_UPSTREAM_FAILED, TERMINAL_RANK

#: rank of the winning terminal event (:data:`~airflow_lineage_plus.store.facts.TERMINAL_RANK`) -> run state
_STATE = {
    TERMINAL_RANK[event]: state
    for event, state in (("COMPLETE", "COMPLETED"), ("ABORT", "ABORTED"), ("FAIL", "FAILED"))
}
#: run state -> rank (what a source that gives states, not events, ranks them by: Marquez)
RANK_OF_STATE = {state: rank for rank, state in _STATE.items()}
FAILED_STATES = frozenset({"FAILED", "ABORTED"})
#: the states of a run that did no work: skipped, or never run because an upstream task failed
NOT_RUN_STATES = frozenset({"SKIPPED", "UPSTREAM_FAILED"})
SCHEDULER_SKIP_REASON = "skipped by the scheduler (DAG run airflowState.tasksState)"
NO_EDGES: frozenset[tuple[str, str]] = frozenset()
NO_REFS: tuple[int, ...] = ()
UPSTREAM_FAILED_REASON = "upstream failed (DAG run airflowState.tasksState)"
__all__ = ["AIRFLOW_UPSTREAM_FAILED", "FAILED_STATES", "NOT_RUN_STATES", "RANK_OF_STATE", "RunRecord"]


class RunRecord:
    """One run: its times, its state (the winning terminal event), and what its events reported."""

    __slots__ = (
        "dag_id",
        "end",
        "error",
        "exec_mode",
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
        self.skipped = False
        self.skip_reason: str | None = None
        self.exec_mode: str | None = None
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
    def state(self) -> str:
        if not self.rank:
            return "RUNNING"
        if self.skipped and self.rank != TERMINAL_RANK["FAIL"]:
            return "UPSTREAM_FAILED" if self.upstream_failed else "SKIPPED"
        return _STATE[self.rank]

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
