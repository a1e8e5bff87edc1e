"""What needs attention (graph/attention.py): the first page of a reader of some DAGs holds the changes
of their DAGs, however many other DAGs wrote since."""

from __future__ import annotations

import json
from typing import Any

import pytest

from airflow_lineage_plus.graph import LineageQueries, attention
from airflow_lineage_plus.graph.changes import Thresholds
from airflow_lineage_plus.graph.store_source import StoreSource
from airflow_lineage_plus.store import LineageStore
from airflow_lineage_plus.timestamps import to_micros
from tests.support.graph_builders import airflow_facets, at, dataset_node, ds, run_pair, with_run_facets
from tests.support.what_changed_events import DAY, week

STG = dataset_node("stg.contacts")
#: the newest writes looked at by a reader of every DAG in these tests (fewer than DAG busy's)
SCANNED = 3


def _world() -> list[dict[str, Any]]:
    """A week of the CRM pipeline in DAG ``crm``, 20 % fewer rows on the last day; then five tasks of
    DAG ``busy`` each wrote a table of their own, later than any of crm's."""
    events = []
    for item in week(8, rows=800):
        task = item["job"]["name"]
        item["run"]["facets"].update(airflow_facets("crm", task_id=task))
        events.append(item)
    for number in range(5):
        start = 7 * DAY + 30 + number
        busy = run_pair(f"busy.w{number}", f"busy-{number}", start, start + 1, outputs=[ds(f"busy_{number}")])
        events += with_run_facets(busy, airflow_facets("busy", task_id=f"w{number}"))
    return events


def _changes(queries: LineageQueries) -> list[tuple[str, str]]:
    now = to_micros(at(7 * DAY + 60))
    found = attention.attention(queries, now=now, baseline_runs=7, thresholds=Thresholds())
    return [(change["node"], change["kind"]) for change in found["changes"]]


@pytest.mark.parametrize("lot", [500, 2])
def test_a_reader_of_one_dag_gets_its_changes_however_many_other_dags_wrote_since(
    store_url: str, monkeypatch: pytest.MonkeyPatch, lot: int
) -> None:
    from airflow_lineage_plus.graph import visible_jobs

    monkeypatch.setattr(attention, "MAX_SCANNED", SCANNED)
    monkeypatch.setattr(visible_jobs, "JOB_LOT", lot)
    store = LineageStore(store_url)
    try:
        store.append(json.dumps(item).encode() for item in _world())
        every = LineageQueries(StoreSource(store))
        # a reader of every DAG looks at the newest writes only: busy's, which changed nothing
        assert every.written_since(0, SCANNED) == [dataset_node(f"busy_{n}") for n in (4, 3, 2)]
        assert _changes(every) == []
        crm = every.scoped(lambda dag_id: dag_id == "crm")
        assert crm.written_since(0, SCANNED) == [STG, dataset_node("raw.contacts")]
        assert _changes(crm) == [(STG, "rowCount"), (STG, "bytes")]
        busy = every.scoped(lambda dag_id: dag_id == "busy")
        assert busy.written_since(0, 10) == [dataset_node(f"busy_{n}") for n in (4, 3, 2, 1, 0)]
        assert _changes(busy) == []
    finally:
        store.close()
