"""Freshness on the real event log of the alerted pipeline: the sample's staging and mart tables carry a
26-hour target (``SloTier`` on their writers); two days after the failing day both are stale, and the job
responsible is the staging load that failed. Alerts for the breaches go out once per owner and breach."""

from __future__ import annotations

import json
from datetime import datetime, timedelta, timezone

import pytest

from airflow_lineage_plus import cli
from tests.act.alert_pipeline import RECIPIENTS, AlertedPipeline

pytestmark = [pytest.mark.airflow, pytest.mark.minutes(2)]

STAGING_LOAD = "ecommerce_orders.load_stg_orders"


def _freshness(pipeline: AlertedPipeline, *extra: str) -> dict:
    code, out, err = cli.run(["--events", str(pipeline.log), "freshness", "--format", "json", *extra])
    assert code == 0, err
    return json.loads(out)


def test_fresh_tables_are_not_reported(alerted_pipeline: AlertedPipeline) -> None:
    answer = _freshness(alerted_pipeline)
    assert answer["checked"] == 2
    assert answer["breaches"] == []


def test_two_days_later_both_tables_are_stale_because_the_staging_load_failed(
    alerted_pipeline: AlertedPipeline,
) -> None:
    later = (datetime.now(timezone.utc) + timedelta(days=2)).isoformat()
    answer = _freshness(alerted_pipeline, "--at", later)
    assert answer["checked"] == 2
    breaches = {b["dataset"]["name"]: b for b in answer["breaches"]}
    assert sorted(breaches) == ["analytics.marts.fct_daily_orders", "analytics.staging.stg_orders"]
    for breach in breaches.values():
        assert breach["freshnessMinutes"] == 26 * 60
        assert breach["cause"] == "FAILED"
        assert breach["responsible"]["name"] == STAGING_LOAD
        assert breach["responsible"]["latestRun"]["state"] == "FAILED"
        assert 47 * 60 < breach["ageMinutes"] < 49 * 60
    # the mart's own writer did not run that day: its latest run is not a success
    mart = breaches["analytics.marts.fct_daily_orders"]
    assert mart["responsible"]["depth"] == 3
    # its last success: the end of the good day's run of the mart's writer (the latest COMPLETE writing it)
    writes = [
        datetime.fromisoformat(event["eventTime"].replace("Z", "+00:00"))
        for event in alerted_pipeline.good.events
        if event["eventType"] == "COMPLETE"
        and any(o["name"] == "analytics.marts.fct_daily_orders" for o in event.get("outputs", []))
    ]
    assert writes
    assert datetime.fromisoformat(mart["lastSuccess"].replace("Z", "+00:00")) == max(writes)


def test_freshness_alerts_go_once_per_breach_and_owner(
    alerted_pipeline: AlertedPipeline, monkeypatch: pytest.MonkeyPatch
) -> None:
    for name, value in alerted_pipeline.env.items():
        monkeypatch.setenv(name, value)
    later = (datetime.now(timezone.utc) + timedelta(days=2)).isoformat()
    first = _freshness(alerted_pipeline, "--at", later, "--notify")
    again = _freshness(alerted_pipeline, "--at", later, "--notify")
    # staging breach: its owner and the mart's; mart breach: the mart's owner
    assert first["alerts"] == {"sent": 3, "alreadySent": 0, "dropped": 0, "failed": 0}
    assert again["alerts"] == {"sent": 0, "alreadySent": 3, "dropped": 0, "failed": 0}
    stale = [(to, m) for to, m in alerted_pipeline.smtp.messages if "] stale:" in str(m["Subject"])]
    assert sorted((",".join(to), str(m["Subject"])) for to, m in stale) == [
        ("analytics@example.com", "[lineage-plus] stale: analytics.marts.fct_daily_orders (FAILED)"),
        ("analytics@example.com", "[lineage-plus] stale: analytics.staging.stg_orders (FAILED)"),
        (RECIPIENTS["team:commerce-data"], "[lineage-plus] stale: analytics.staging.stg_orders (FAILED)"),
    ]
    body = str(stale[0][1].get_body(("html",)).get_content())
    assert f"Cause: FAILED, job test-airflow / {STAGING_LOAD} (FAILED)" in body
    assert "Error: load_stg_orders failed on purpose" in body
