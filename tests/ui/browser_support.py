"""What the browser tests of the Lineage view share: the simple auth manager's user, and the steps a person
takes in Airflow's UI (open the Lineage page from the navigation, search and open a node). The page logged
in as that user is the ``logged_in_page`` fixture (``tests/ui/conftest.py``)."""

from __future__ import annotations

import re
from typing import Any

#: the viewer the simple auth manager is configured with (as benchmarks/api_server_memory.py's server is)
USER, PASSWORD = "viewer", "viewer-password"
LINEAGE_PAGE = re.compile(r"/plugin/lineage(?:/lineage-plus/)?(?:[?#].*)?$")


def open_lineage_from_navigation(page: Any) -> Any:
    page.get_by_role("link", name="Lineage").first.click()
    # Airflow 3.3 copies the same-origin iframe's path into the page's (``/plugin/lineage/lineage-plus/``),
    # sometimes before the navigation to ``/plugin/lineage`` has settled: either URL is the Lineage page.
    page.wait_for_url(LINEAGE_PAGE, timeout=30_000)
    frame = page.frame_locator("iframe[title=Lineage]")
    frame.locator("body[data-ready=true]").wait_for(timeout=30_000)
    return frame


def search_and_open(frame: Any, text: str, node_id: str) -> None:
    frame.locator("#search").fill(text)
    frame.locator(f'#search-results li[data-node-id="{node_id}"]').click()
    frame.locator(f'#viewport g.node.target[data-node-id="{node_id}"]').wait_for(timeout=30_000)


def listed(frame: Any, items: str) -> list[tuple[str | None, str | None]]:
    """(``data-kind``, the node id its link opens) of each item of a list of the panel."""
    found = frame.locator(items)
    return [
        (found.nth(i).get_attribute("data-kind"), found.nth(i).locator("button").first.get_attribute("title"))
        for i in range(found.count())
    ]
