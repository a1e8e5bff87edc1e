"""A person logs into Airflow, clicks "Lineage", finds the mart table and sees which upstream job failed.

A real ``airflow api-server`` runs with the plugin (installed entry point) over the events of the sample
pipelines run for real (``dags/ecommerce_orders.py``: a good day, an empty day, a day whose dbt model
fails: the mart is built by a dbt model that a task runs; ``dags/crm_contacts_ingestion.py``: the demo's
five days, the last two changed on purpose; see ``ui_pipeline.record_sample_pipeline``). The Chromium
found on ``PATH`` (Debian's, installed by ``scripts/system-deps.sh``), headless, is driven by Playwright
through Airflow's own login page and navigation. The screenshots go to a temporary folder, or to
``$LINEAGE_PLUS_SCREENSHOT_DIR``: ``bash scripts/update-screenshot.sh`` refreshes
``docs/images/lineage-view.png`` and ``docs/images/what-changed.png`` that way.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import urllib.parse
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.support.run_report import SHARED_RECORDINGS
from tests.support.servers import SERVER_LOGS, free_port, stop, wait_until_serving
from tests.ui.browser_support import PASSWORD, USER, listed, open_lineage_from_navigation, search_and_open
from tests.ui.ui_pipeline import (
    DAG_ID,
    HOSTILE_ID,
    HOSTILE_NAME,
    MART_MODEL,
    SamplePipeline,
    record_sample_pipeline,
)

pytestmark = [pytest.mark.airflow, pytest.mark.browser, pytest.mark.xdist_group(SHARED_RECORDINGS)]

SCREENSHOT_NAME = "lineage-view.png"
WHAT_CHANGED_SCREENSHOT = "what-changed.png"
NAMESPACE = "test-airflow"
DBT_MODEL = f"job:{NAMESPACE}:{MART_MODEL}"
LOAD_STG_CONTACTS = f"job:{NAMESPACE}:crm_contacts_ingestion.load_stg_contacts"


@pytest.fixture(scope="module")
def sample(airflow_db: Path, demo_runs: Any, tmp_path_factory: pytest.TempPathFactory) -> SamplePipeline:
    pipeline = record_sample_pipeline(tmp_path_factory.getbasetemp(), demo_runs)
    assert pipeline.failed_run.returncode != 0, "the sample's failing day must fail"
    return pipeline


@pytest.fixture(scope="module")
def airflow_ui(sample: SamplePipeline, tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """Base URL of a real ``airflow api-server`` (same metadata DB as the recorded DAG runs)."""
    workdir = tmp_path_factory.mktemp("api-server")
    passwords = workdir / "passwords.json"
    passwords.write_text(json.dumps({USER: PASSWORD}))
    port = free_port()
    env = {
        **os.environ,
        "AIRFLOW__LINEAGE_PLUS__EVENT_LOG_PATH": str(sample.log),
        "AIRFLOW__CORE__SIMPLE_AUTH_MANAGER_USERS": f"{USER}:viewer",
        "AIRFLOW__CORE__SIMPLE_AUTH_MANAGER_PASSWORDS_FILE": str(passwords),
        "AIRFLOW__CORE__SIMPLE_AUTH_MANAGER_ALL_ADMINS": "False",
        "AIRFLOW__API_AUTH__JWT_SECRET": "lineage-plus-browser-test-" + "k" * 64,
        "AIRFLOW__API__BASE_URL": f"http://127.0.0.1:{port}/",
        # The recorded runs are seconds apart: asked ten minutes later (other tests of the group first),
        # every dataset would be "later than usual" on the first page and in What changed. Lateness past a
        # day instead keeps what they show the same all the test run long.
        "AIRFLOW__LINEAGE_PLUS__WHAT_CHANGED_LATE_MINUTES": "1440",
    }
    airflow = str(Path(sys.executable).parent / "airflow")
    log = (workdir / "api-server.log").open("wb")
    SERVER_LOGS[f"http://127.0.0.1:{port}"] = workdir / "api-server.log"
    proc = subprocess.Popen(
        [airflow, "api-server", "--host", "127.0.0.1", "--port", str(port), "--workers", "1"],
        env=env,
        stdout=log,
        stderr=subprocess.STDOUT,
        start_new_session=True,
    )
    base = f"http://127.0.0.1:{port}"
    try:
        wait_until_serving(f"{base}/lineage-plus/", proc)
        yield base
    finally:
        stop(proc)
        log.close()


def test_user_finds_the_mart_table_sees_three_hops_and_the_failed_job(
    logged_in_page: Any, sample: SamplePipeline, tmp_path: Path
) -> None:
    page = logged_in_page
    frame = open_lineage_from_navigation(page)
    search_and_open(frame, "fct_daily_orders", sample.mart_id)

    nodes = frame.locator("#viewport g.node")
    drawn = {nodes.nth(i).get_attribute("data-node-id") for i in range(nodes.count())}
    assert set(sample.job_ids.values()) <= drawn, "the three hops of the orders pipeline are drawn"
    edges = frame.locator("#viewport path.edge")
    drawn_edges = {
        (edges.nth(i).get_attribute("data-origin"), edges.nth(i).get_attribute("data-destination"))
        for i in range(edges.count())
    }
    assert (sample.job_ids["fct_daily_orders"], sample.mart_id) in drawn_edges
    stg = next(d for o, d in drawn_edges if o == sample.job_ids["load_stg_orders"])
    assert (stg, sample.job_ids["fct_daily_orders"]) in drawn_edges
    assert any(d == sample.job_ids["load_stg_orders"] for _, d in drawn_edges)
    assert any(o == sample.job_ids["ingest_orders_to_s3"] for o, _ in drawn_edges)

    # the mart's writer is the dbt model, drawn in the task that ran dbt; it failed on the latest day
    failed = frame.locator(f'#viewport g.node[data-node-id="{sample.job_ids["fct_daily_orders"]}"]')
    assert failed.get_attribute("data-state") == "FAILED"
    assert "failed-upstream" in (failed.get_attribute("class") or "")
    assert failed.locator("text.pill-text").text_content() == "FAILED"
    assert failed.get_attribute("data-owner") == sample.dbt_task_id
    subtitle = failed.locator("text.subtitle").text_content() or ""
    assert subtitle.startswith("in ") and subtitle.endswith("orders.fct_daily_orders")  # the end if cut
    staged = frame.locator(f'#viewport g.node[data-node-id="{sample.job_ids["load_stg_orders"]}"]')
    assert staged.get_attribute("data-state") == "COMPLETED"

    banner = frame.locator("#banner")
    assert banner.is_visible()
    assert MART_MODEL in banner.text_content()

    failed.click()
    details = frame.locator("#details")
    details.get_by_text("failed on purpose").first.wait_for(timeout=30_000)
    assert details.locator(".badge.state-FAILED").first.is_visible()
    link = details.get_by_role("link", name="Open the task instance in Airflow")
    href = link.get_attribute("href")
    assert href is not None and href.startswith("/dags/ecommerce_orders/runs/")
    assert href.endswith("/tasks/fct_daily_orders")  # the task that ran dbt

    screenshot = Path(os.environ.get("LINEAGE_PLUS_SCREENSHOT_DIR") or tmp_path) / SCREENSHOT_NAME
    page.screenshot(path=str(screenshot))
    assert screenshot.stat().st_size > 10_000
    assert page.dialogs == []


def test_the_first_page_needs_attention_and_a_dataset_says_what_changed_upstream_of_it(
    logged_in_page: Any, sample: SamplePipeline, tmp_path: Path
) -> None:
    page = logged_in_page
    stg, dim = (
        f"dataset:{sample.warehouse}:analytics.{name}"
        for name in ("staging.stg_contacts", "marts.dim_contacts")
    )
    frame = open_lineage_from_navigation(page)
    details = frame.locator("#details")
    details.locator("h2", has_text="Needs attention").wait_for(timeout=90_000)  # the first request loads
    # every run was today: the jobs whose latest run failed (the sample's failing dbt day, ui_orders' failed
    # staging load), each with its DAG run; no freshness target missed (the marts' SLO is 26 hours)
    assert listed(frame, "ul.attention-failed li") == [
        (None, job)
        for job in (
            DBT_MODEL,
            f"job:{NAMESPACE}:dbt-run-shop",
            f"job:{NAMESPACE}:ecommerce_orders",
            sample.dbt_task_id,
            f"job:{NAMESPACE}:{DAG_ID}",
            f"job:{NAMESPACE}:{DAG_ID}.load_stg_orders",
        )
    ]
    assert details.get_by_text("Every dataset with a freshness target is within it.").is_visible()
    # the ten largest changes of the last day: the failed and skipped runs, the two new SQL versions (the
    # CRM staging's deploy, the dbt model's failing day), then the fewer contacts the new SQL keeps and the
    # higher null rates among them
    assert listed(frame, "ul.attention-changes li") == [
        ("state", DBT_MODEL),
        ("state", f"job:{NAMESPACE}:{DAG_ID}.fct_daily_orders"),
        ("state", f"job:{NAMESPACE}:{DAG_ID}.load_stg_orders"),
        ("sql", DBT_MODEL),
        ("sql", LOAD_STG_CONTACTS),
        ("rowCount", dim),
        ("rowCount", stg),
        ("nullRate", dim),
        ("nullRate", stg),
        ("nullRate", dim),
    ]

    # a change is a click away from its dataset: its graph, and what changed upstream of it
    frame.locator(f'ul.attention-changes li[data-kind="rowCount"] button[title="{dim}"]').click()
    frame.locator(f'#viewport g.node.target[data-node-id="{dim}"]').wait_for(timeout=30_000)
    frame.locator(".what-changed ol.changes li").first.wait_for(timeout=30_000)
    assert listed(frame, ".what-changed ol.changes li") == [
        ("sql", LOAD_STG_CONTACTS),
        ("rowCount", stg),
        ("rowCount", dim),
        ("nullRate", stg),
        ("nullRate", stg),
        ("nullRate", dim),
        ("nullRate", dim),
    ]
    top = frame.locator(".what-changed p.top-cause").text_content() or ""
    assert top.startswith("Most likely cause: crm_contacts_ingestion.load_stg_contacts sql: "), top
    assert top.endswith(" (changed), 3 hop(s) upstream."), top
    rows = frame.locator(".what-changed ol.changes li").nth(2).text_content() or ""
    assert "rowCount: 60 \u2192 52 (-13 %)" in rows, rows

    screenshot = Path(os.environ.get("LINEAGE_PLUS_SCREENSHOT_DIR") or tmp_path) / WHAT_CHANGED_SCREENSHOT
    frame.locator(".what-changed").scroll_into_view_if_needed()
    page.screenshot(path=str(screenshot))
    assert screenshot.stat().st_size > 10_000
    assert page.dialogs == []


def test_the_runs_of_the_task_that_ran_dbt_collapse_into_it_and_expand_again(
    logged_in_page: Any, airflow_ui: str, sample: SamplePipeline
) -> None:
    frame = open_lineage_from_navigation(logged_in_page)
    search_and_open(frame, "fct_daily_orders", sample.mart_id)
    model_id = sample.job_ids["fct_daily_orders"]
    model = frame.locator(f'#viewport g.node[data-node-id="{model_id}"]')
    model.locator("text.group-toggle").click()
    task = frame.locator(f'#viewport g.node[data-node-id="{sample.dbt_task_id}"]')
    task.wait_for(timeout=30_000)
    # the model and the run of its tests (it reads the mart) are drawn as the task
    assert task.get_attribute("data-group-size") == "2"
    assert task.locator("text.kind-label").text_content() == "TASK"
    assert model.count() == 0
    edges = frame.locator("#viewport path.edge")
    drawn = {
        (edges.nth(i).get_attribute("data-origin"), edges.nth(i).get_attribute("data-destination"))
        for i in range(edges.count())
    }
    assert (sample.dbt_task_id, sample.mart_id) in drawn
    assert model_id not in {node for edge in drawn for node in edge}
    task.locator("text.group-toggle").click()
    model.wait_for(timeout=30_000)
    assert task.count() == 0
    # the task's own Lineage tab shows the dbt jobs it ran (the task reports no datasets itself)
    runs = logged_in_page.request.get(f"{airflow_ui}/api/v2/dags/ecommerce_orders/dagRuns").json()["dag_runs"]
    [good_day] = [r["dag_run_id"] for r in runs if str(r["logical_date"]).startswith("2024-06-01")]
    logged_in_page.goto(
        f"{airflow_ui}/dags/ecommerce_orders/runs/{good_day}/tasks/fct_daily_orders/plugin/lineage-task-instance"
    )
    tab = logged_in_page.frame_locator("iframe[title=Lineage]")
    tab.locator(f'#viewport g.node.target[data-node-id="{sample.dbt_task_id}"]').wait_for(timeout=30_000)
    tab.locator(f'#viewport g.node[data-node-id="{model_id}"]').wait_for(timeout=30_000)


def test_hostile_dataset_name_is_shown_as_text_and_never_runs(logged_in_page: Any) -> None:
    page = logged_in_page
    frame = open_lineage_from_navigation(page)
    search_and_open(frame, "<img", HOSTILE_ID)
    node = frame.locator(f'#viewport g.node[data-node-id="{HOSTILE_ID}"]')
    assert node.locator("text.name").text_content() == HOSTILE_NAME
    frame.locator("#details h2").filter(has_text=HOSTILE_NAME).wait_for(timeout=30_000)
    page.wait_for_timeout(500)
    assert frame.locator("img[src=x]").count() == 0
    assert page.dialogs == []


def failing_day_run_id(sample: SamplePipeline) -> str:
    """The Airflow run id of the sample's failing day (other tests of this worker may have failed runs of
    the DAG in its database)."""
    (run_id,) = {
        event["run"]["facets"]["airflow"]["dagRun"]["run_id"]
        for event in sample.failed_run.task_events("load_stg_orders")
        if "airflow" in event["run"].get("facets", {})
    }
    return str(run_id)


def _task_tab_details(page: Any) -> tuple[Any, Any]:
    """The Lineage tab's frame and its details panel once it shows "This run"; a timeout says which step
    did not come (Airflow's tab, the view in it, the task's answer) and what the view's status line said."""
    iframe = page.locator("iframe[title=Lineage]")
    iframe.wait_for(timeout=60_000)
    frame = page.frame_locator("iframe[title=Lineage]")
    details = frame.locator("#details")
    try:
        details.get_by_text("This run").wait_for(timeout=90_000)  # the first request loads the log
    except Exception as error:  # Playwright's TimeoutError: say what the tab showed instead
        status = frame.locator("#status")
        raise AssertionError(
            f"the Lineage tab ({iframe.get_attribute('src')}) did not show the run: status "
            f"{status.inner_text() if status.count() else '(no view)'!r}, details "
            f"{details.inner_text()[:500] if details.count() else '(none)'!r}"
        ) from error
    return frame, details


def test_task_instance_tab_shows_that_try_inputs_and_outputs(
    logged_in_page: Any, airflow_ui: str, sample: SamplePipeline
) -> None:
    page = logged_in_page
    failed_run_id = failing_day_run_id(sample)
    runs = page.request.get(
        f"{airflow_ui}/api/v2/dags/ecommerce_orders/dagRuns/{urllib.parse.quote(failed_run_id, safe='')}"
    )
    assert runs.ok and runs.json()["state"] == "failed", runs.text()
    run_url = f"{airflow_ui}/dags/ecommerce_orders/runs/{failed_run_id}"
    tab = run_url + "/tasks/%s/plugin/lineage-task-instance"
    page.goto(tab % "load_stg_orders")  # on the failing day the staging load succeeded
    frame, details = _task_tab_details(page)
    assert details.locator(".badge.state-COMPLETED").first.is_visible()
    assert details.get_by_role("button", name="analytics.staging.stg_orders").is_visible()
    assert details.get_by_text("Inputs (1)").is_visible()
    target = f'#viewport g.node.target[data-node-id="{sample.job_ids["load_stg_orders"]}"]'
    frame.locator(target).wait_for(timeout=30_000)

    page.goto(tab % "fct_daily_orders")  # the task whose dbt model failed
    _, details = _task_tab_details(page)
    assert details.locator(".badge.state-FAILED").first.is_visible()
    assert details.locator("summary", has_text="errorMessage").is_visible()


def test_task_instance_view_reads_the_run_id_encoded_and_as_airflow_3_1_fills_it_in(
    logged_in_page: Any, airflow_ui: str, sample: SamplePipeline
) -> None:
    # Airflow 3.1 fills {RUN_ID} into the tab's URL as it is (run_id=manual__...+00:00), later versions
    # percent-encoded (%2B): either way the "+" is the run id's, not a space, and the view finds the run.
    run_id = failing_day_run_id(sample)
    assert "+" in run_id, run_id
    (lineage_run_id,) = {event["run"]["runId"] for event in sample.failed_run.task_events("load_stg_orders")}
    page = logged_in_page
    for filled in (run_id, urllib.parse.quote(run_id, safe="")):
        page.goto(
            f"{airflow_ui}/lineage-plus/?dag_id=ecommerce_orders&run_id={filled}&task_id=load_stg_orders"
        )
        details = page.locator("#details")
        details.get_by_text("This run").wait_for(timeout=90_000)  # the first request loads the log
        assert details.get_by_text(lineage_run_id, exact=True).is_visible(), filled


def test_anonymous_browser_gets_nothing(browser: Any, airflow_ui: str) -> None:
    context = browser.new_context()
    try:
        for path in ("/lineage-plus/", "/lineage-plus/api/search?q=fct_daily_orders"):
            response = context.request.get(f"{airflow_ui}{path}")
            assert response.status == 401
            assert "fct_daily_orders" not in response.text()
    finally:
        context.close()
