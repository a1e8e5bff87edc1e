"""A person who may read one DAG signs in to Airflow (FAB) and sees that DAG's lineage, not the other's.

The real API server with the FAB auth manager is the session's (``tests/ui/conftest.py``); Debian's
Chromium, headless, is driven by Playwright through FAB's login form and Airflow's navigation. The
screenshot of what ``alpha`` sees is written to a temporary folder (its path is printed).
"""

from __future__ import annotations

from typing import Any

import pytest

from tests.support.fab_airflow import FabAirflow
from tests.support.run_report import SHARED_RECORDINGS
from tests.ui.browser_support import listed, open_lineage_from_navigation, search_and_open
from tests.ui.ui_pipeline import ALPHA_DAG, ALPHA_TASK, BETA_DAG, BETA_STRINGS, PermissionPipeline

pytestmark = [pytest.mark.airflow, pytest.mark.browser, pytest.mark.xdist_group(SHARED_RECORDINGS)]

SCORES = "dataset:postgres://warehouse:5432:analytics.shared.customer_scores"
ALPHA_JOB = f"job:test-airflow:{ALPHA_DAG}.{ALPHA_TASK}"
BETA_JOB = f"job:test-airflow:{BETA_DAG}.score_customers"


def signed_in(browser: Any, server: FabAirflow, user: str) -> Any:
    """A page signed in as ``user`` through FAB's own login form."""
    context = browser.new_context(viewport={"width": 1920, "height": 960})
    page = context.new_page()
    page.dialogs = []  # type: ignore[attr-defined]
    page.on("dialog", lambda dialog: (page.dialogs.append(dialog.message), dialog.dismiss()))
    page.goto(f"{server.base}/auth/login/?next=/")
    page.fill("#username", user)
    page.fill("#password", user)
    with page.expect_navigation(url=f"{server.base}/", timeout=60_000):
        page.click("input[type=submit]")
    return page


def test_a_one_dag_user_sees_that_dags_lineage_and_nothing_of_the_other(
    browser: Any, fab_server: FabAirflow, tmp_path_factory: pytest.TempPathFactory
) -> None:
    page = signed_in(browser, fab_server, "alpha")
    try:
        frame = open_lineage_from_navigation(page)
        frame.locator("#search").fill("customer")
        results = frame.locator("#search-results li")
        results.first.wait_for(timeout=30_000)
        listed = {results.nth(i).get_attribute("data-node-id") for i in range(results.count())}
        assert SCORES in listed and not [n for n in listed if "beta" in str(n)]

        search_and_open(frame, "customer_scores", SCORES)
        frame.locator(f'#viewport g.node[data-node-id="{ALPHA_JOB}"]').wait_for(timeout=30_000)
        nodes = frame.locator("#viewport g.node")
        drawn = {
            nodes.nth(i).get_attribute("data-node-id"): nodes.nth(i).get_attribute("data-type")
            for i in range(nodes.count())
        }
        assert drawn[f"restricted:upstream:{SCORES}"] == "RESTRICTED"
        assert not [node for node in drawn if "beta" in str(node)]
        name = frame.locator(f'#viewport g.node[data-node-id="{ALPHA_JOB}"] text.name')
        assert name.text_content() == f"{ALPHA_DAG}.{ALPHA_TASK}", (
            "a long job name is shown whole, on two lines"
        )
        restricted = frame.locator(f'#viewport g.node[data-node-id="restricted:upstream:{SCORES}"]')
        assert "Restricted" in (restricted.text_content() or "")
        frame.locator("#details h2").filter(has_text="analytics.shared.customer_scores").wait_for(
            timeout=30_000
        )
        frame.locator("#details").get_by_text("jobs of DAGs you may not read").wait_for(timeout=30_000)

        everything = (frame.locator("body").text_content() or "") + (
            page.locator("body").text_content() or ""
        )
        assert [secret for secret in BETA_STRINGS if secret in everything] == []
        screenshot = tmp_path_factory.mktemp("screenshots") / "one-dag-user-lineage.png"
        page.screenshot(path=str(screenshot))
        print(f"screenshot of what the one-DAG user sees: {screenshot}")
        assert screenshot.stat().st_size > 10_000
        assert page.dialogs == []
    finally:
        page.context.close()


def test_a_user_of_every_dag_sees_the_task_that_never_ran_as_upstream_failed(
    browser: Any, fab_server: FabAirflow
) -> None:
    page = signed_in(browser, fab_server, "viewer")
    try:
        node_id = f"job:test-airflow:{BETA_DAG}.notify_beta"
        page.goto(f"{fab_server.base}/lineage-plus/?node={node_id}&depth=2")
        node = page.locator(f'#viewport g.node.target[data-node-id="{node_id}"]')
        node.wait_for(timeout=30_000)
        assert node.get_attribute("data-state") == "UPSTREAM_FAILED"
        assert node.locator("text.pill-text").text_content() == "UPSTREAM FAILED"
        page.locator("#details .badge.state-UPSTREAM_FAILED").first.wait_for(timeout=30_000)
    finally:
        page.context.close()


def test_the_first_page_and_what_changed_show_a_one_dag_user_nothing_of_the_other_dag(
    browser: Any, fab_server: FabAirflow, permission_pipeline: PermissionPipeline
) -> None:
    audit = "dataset:postgres://warehouse:5432:analytics.beta_vault.score_audit"
    pages = {user: signed_in(browser, fab_server, user) for user in ("viewer", "alpha")}
    try:
        frames = {
            # FAB's Viewer role may not read Plugins (no Lineage button): the view's own address
            "viewer": pages["viewer"],
            "alpha": open_lineage_from_navigation(pages["alpha"]),
        }
        pages["viewer"].goto(f"{fab_server.base}/lineage-plus/")
        shown = {}
        for user, frame in frames.items():
            frame.locator("#details h2", has_text="Needs attention").wait_for(timeout=90_000)
            shown[user] = [
                listed(frame, f"ul.{items} li")
                for items in ("attention-failed", "attention-stale", "attention-changes")
            ]
        # a reader of every DAG: beta's failed task and its DAG run, its two tables never written (past
        # their target of zero minutes), the failed run and the shared table's lateness among the changes
        assert shown["viewer"] == [
            [(None, f"job:test-airflow:{BETA_DAG}"), (None, BETA_JOB)],
            [(None, audit), (None, SCORES)],
            [("state", BETA_JOB), ("freshnessSlo", SCORES)],
        ]
        # alpha may read perm_alpha only: nothing of beta, not even the shared table's target (beta's SLO)
        assert shown["alpha"] == [[], [], []]
        alpha = frames["alpha"]
        search_and_open(alpha, "customer_scores", SCORES)
        panel = alpha.locator(".what-changed")
        panel.locator("p.cannot-tell").wait_for(timeout=30_000)
        assert panel.locator("ol.changes li").count() == 0
        assert [
            panel.locator("p.note").nth(i).text_content() for i in range(panel.locator("p.note").count())
        ] == [
            "No change found in what was recorded; some datasets cannot tell (below).",
            "Cannot tell analytics.shared.customer_scores: its latest run recorded no figures.",
        ]
        everything = (alpha.locator("body").text_content() or "") + (
            pages["alpha"].locator("body").text_content() or ""
        )
        assert [secret for secret in BETA_STRINGS if secret in everything] == []
        assert pages["alpha"].dialogs == pages["viewer"].dialogs == []
    finally:
        for page in pages.values():
            page.context.close()
