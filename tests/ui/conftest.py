"""Fixtures the Lineage view's tests share: one real FAB API server per session, headless Chromium per module,
and a page of it logged in to the module's own API server (``airflow_ui``). A browser test that fails
reports the page's console messages and errors, and the tail of its API server's log.

Starting the FAB server costs a minute (roles and users, then the API server), so ``test_permissions_fab.py``
and ``test_permissions_browser.py`` share it; it starts only when a test asks for it.
"""

from __future__ import annotations

import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.support.fab_airflow import FabAirflow, fab_airflow
from tests.support.servers import free_port, log_tail
from tests.ui.browser_support import PASSWORD, USER
from tests.ui.ui_pipeline import ALPHA_DAG, PermissionPipeline, record_permission_pipeline


@pytest.fixture(scope="session")
def permission_pipeline(airflow_db: Path, tmp_path_factory: pytest.TempPathFactory) -> PermissionPipeline:
    pipeline = record_permission_pipeline(tmp_path_factory.getbasetemp() / "permission-pipeline")
    assert pipeline.alpha.returncode == 0, pipeline.alpha.output[-3000:]
    assert pipeline.beta.returncode != 0, "perm_beta's scoring task must fail"
    return pipeline


@pytest.fixture(scope="session")
def fab_server(
    permission_pipeline: PermissionPipeline, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[FabAirflow]:
    with fab_airflow(
        tmp_path_factory.mktemp("fab"), permission_pipeline.log, ALPHA_DAG, free_port()
    ) as server:
        yield server


CHROMIUM_ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]


def chromium_path() -> str:
    """The Chromium on ``PATH`` (Debian's ``chromium``, or ``chromium-browser`` elsewhere)."""
    found = shutil.which("chromium") or shutil.which("chromium-browser")
    assert found, "no chromium on PATH: run `bash scripts/system-deps.sh` (apt-get install chromium)"
    return found


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    """Debian's Chromium, headless, driven by Playwright (every browser test file)."""
    from playwright.sync_api import sync_playwright

    with sync_playwright() as playwright:
        chromium = playwright.chromium.launch(
            executable_path=chromium_path(), args=CHROMIUM_ARGS, headless=True
        )
        yield chromium
        chromium.close()


@pytest.hookimpl(wrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo[None]) -> Any:
    """A failed browser test's report says what the page logged and how its API server's log ends."""
    report = yield
    page = getattr(item, "funcargs", {}).get("logged_in_page")
    if report.when == "call" and report.failed and page is not None:
        report.sections.append(("browser console", "\n".join(page.console) or "(nothing logged)"))
        report.sections.append(("API server log (tail)", log_tail(page.server)))
    return report


@pytest.fixture
def logged_in_page(browser: Any, airflow_ui: str) -> Iterator[Any]:
    """A page logged in through the simple auth manager's real login form (``airflow_ui``: the test file's
    API server); collects JS dialogs."""
    context = browser.new_context(viewport={"width": 1920, "height": 960})
    page = context.new_page()
    page.dialogs = []  # type: ignore[attr-defined]
    page.on("dialog", lambda dialog: (page.dialogs.append(dialog.message), dialog.dismiss()))
    page.console = []  # type: ignore[attr-defined]
    page.on("console", lambda message: page.console.append(f"{message.type}: {message.text}"))
    page.on("pageerror", lambda error: page.console.append(f"page error: {error}"))
    page.server = airflow_ui  # type: ignore[attr-defined]
    page.goto(f"{airflow_ui}/")
    page.wait_for_selector("input[name=username]", timeout=60_000)
    page.fill("input[name=username]", USER)
    page.fill("input[name=password]", PASSWORD)
    page.click("button[type=submit]")
    page.wait_for_url(f"{airflow_ui}/", timeout=60_000)
    yield page
    context.close()
