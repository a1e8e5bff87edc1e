"""What a lineage source provides to the queries (errors: :mod:`airflow_lineage_plus.exceptions`)."""

from __future__ import annotations

import abc
import contextlib
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from airflow_lineage_plus.exceptions import SourceUnavailable
from airflow_lineage_plus.graph.model import LineageGraph
from airflow_lineage_plus.graph.records import Fields

if TYPE_CHECKING:
    from airflow_lineage_plus.graph.history import History, LatestAssertions


#: runs of one job in one Airflow DAG run a source reads at most (:meth:`LineageSource.airflow_runs`): a
#: task instance's tries are a handful; a producer naming one DAG run in thousands of runs costs no more
MAX_AIRFLOW_RUNS = 100


class LineageSource(abc.ABC):
    """A place lineage is read from. Queries work on the :class:`LineageGraph` it hands out."""

    #: counts of skipped or trimmed input (malformed, invalid, salvaged, too_large ...)
    problems: dict[str, int]

    def guard(self) -> contextlib.AbstractContextManager[Any]:
        """Held by LineageQueries around each question; a source that mutates in refresh() locks here."""
        return contextlib.nullcontext()

    def one_view(self) -> contextlib.AbstractContextManager[Any]:
        """The questions this thread asks inside the block share one graph (what one question read,
        the next does not read again): for several questions that answer one request."""
        return contextlib.nullcontext()

    @abc.abstractmethod
    def graph_for(
        self, node_id: str, depth: int, *, as_of: int | None = None, retired: bool = False
    ) -> LineageGraph:
        """A graph holding every node within ``depth`` edges of ``node_id`` both ways (as of ``as_of``,
        epoch microseconds, when given; with the retired edges too when ``retired``; ``graph.exact`` False
        where the source can only approximate that); NodeNotFound."""

    @abc.abstractmethod
    def column_graph(
        self, dataset_id: str, column: str, depth: int, *, as_of: int | None = None
    ) -> LineageGraph:
        """A graph whose datasets carry the column lineage within ``depth`` column hops."""

    @abc.abstractmethod
    def schema_versions(self, dataset_id: str, *, as_of: int | None = None) -> list[Fields]:
        """Distinct schemas of the dataset, newest first."""

    @abc.abstractmethod
    def dataset_names(self) -> list[tuple[str, str]]:
        """(namespace, name) of every dataset."""

    @abc.abstractmethod
    def search(self, text: str, limit: int) -> list[tuple[str, str, str]]:
        """(type, namespace, name) of nodes whose name contains ``text`` (case-insensitive)."""

    @abc.abstractmethod
    def node_details(self, node_id: str, *, as_of: int | None = None) -> dict[str, Any]:
        """Everything known about one node (see docs/graph.md)."""

    @abc.abstractmethod
    def run_details(self, run_id: str) -> dict[str, Any]:
        """Inputs, outputs and facets of one run."""

    def airflow_runs(self, job_id: str, airflow_run_id: str) -> list[str]:
        """Ids of the job's runs in one Airflow DAG run (``airflow_run_id``: its ``run_id``), newest first:
        the tries of a task instance, at most :data:`MAX_AIRFLOW_RUNS`. This default looks among the runs
        :meth:`node_details` lists (the newest only); the lineage store finds them however old the DAG run
        is."""
        found = []
        for run in self.node_details(job_id).get("runs") or ():
            if run.get("runId") and (run.get("airflow") or {}).get("run_id") == airflow_run_id:
                found.append(str(run["runId"]))
        return found

    def jobs_of_run(self, run_id: str) -> list[str] | None:
        """Ids of the jobs that may hold the run, found without reading its details (empty: no such run);
        None when the source cannot tell without reading them (Marquez)."""
        return None

    @abc.abstractmethod
    def summary(self) -> tuple[int, int, LineageGraph, list[str]]:
        """(dataset count, job count, a graph holding the failed jobs, ids of jobs whose latest run failed)"""

    def run_history(
        self,
        node_ids: Sequence[str],
        runs: int,
        *,
        as_of: int | None = None,
        dataset_runs: int | None = None,
    ) -> dict[str, History]:
        """The newest ``runs`` runs of each job and ``dataset_runs`` (default ``runs``) of each dataset (at
        or before ``as_of``), newest first, as plain records: what ``what-changed`` compares (the
        contract, for every source: :mod:`.history`)."""
        raise SourceUnavailable(
            f"{type(self).__name__} does not give runs' histories; what-changed reads the lineage store or "
            "an event log ([lineage_plus] graph_source = store or events, or --events)"
        )

    def latest_assertions(
        self, dataset_ids: Sequence[str], *, as_of: int | None = None
    ) -> dict[str, list[LatestAssertions]]:
        """The ``dataQualityAssertions`` the latest finished run of each job next to each dataset recorded
        on it (at or before ``as_of``), newest first (:class:`~.history.LatestAssertions`); a source that
        cannot read them back (Marquez) knows none: ``{}``."""
        return {}

    def time_range(self) -> tuple[int | None, int | None]:
        """The earliest and the latest event time known (epoch microseconds; None when unknown)."""
        return None, None

    def whole_graph(self) -> LineageGraph:
        """The whole graph for a question about every job (the failed jobs, freshness), which finds the
        nodes it needs by :meth:`~.LineageGraph.maybe_failed_job_ids` and the like (the store's reads just
        those); a source that only fetches neighbourhoods (Marquez) cannot give it."""
        raise SourceUnavailable(
            f"{type(self).__name__} cannot list every job; freshness reads the lineage store or an event "
            "log ([lineage_plus] graph_source = store or events, or --events)"
        )

    def refresh(self) -> int:
        """Pick up new lineage; returns how many new events were read (0 when not applicable)."""
        return 0

    def close(self) -> None:  # noqa: B027 - optional hook
        """Release resources."""
