"""Freshness as a reader of some DAGs sees it (``act/freshness.py`` with ``may_read_dag``): the breaches of
the datasets they may see, counted among those only, and no job they may not see named as responsible.

The world is ``graph_builders.permissions_world`` (the reader may read DAG ``alpha`` only) with a freshness
target on two beta jobs: the failing ``beta.score`` writes the shared ``scores``, the child job
``beta_model.x`` a beta-only table. The FAB API-server test asks the same of ``/api/freshness``."""

from __future__ import annotations

from datetime import datetime, timezone
from pathlib import Path

from airflow_lineage_plus.act.freshness import report
from airflow_lineage_plus.graph import open_source
from tests.support.graph_builders import dataset_node, facet, job_node, permissions_world, write_log

LATER = datetime(2031, 1, 1, tzinfo=timezone.utc)


def test_a_one_dag_reader_gets_only_the_stale_tables_and_jobs_they_may_see(tmp_path: Path) -> None:
    events = permissions_world()
    for event in events:
        if event.get("job", {}).get("name") in ("beta.score", "beta_model.x"):
            event["job"].setdefault("facets", {})["lineagePlus_sloTier"] = facet(
                tier="gold", freshnessMinutes=60
            )
    source = open_source(events=write_log(tmp_path / "events.jsonl", events))
    everything = report(source, LATER)
    assert everything["checked"] == 2
    causes = {
        b["dataset"]["id"]: (b["cause"], (b["responsible"] or {}).get("id")) for b in everything["breaches"]
    }
    assert causes == {
        dataset_node("scores"): ("FAILED", job_node("beta.score")),
        dataset_node("beta_model_out"): ("LATE", job_node("beta_model.x")),
    }
    # the shared table's target is beta.score's SLO, and its last write beta.score's run: not alpha's
    alpha = report(source, LATER, may_read_dag=lambda dag_id: dag_id == "alpha")
    assert alpha == {"at": everything["at"], "checked": 0, "breaches": []}
