"""Column mode and the time slider of the Lineage view, in Debian's Chromium against a real api-server.

A real ``airflow api-server`` with the plugin serves an event log holding the orders pipeline (schema
versions and column lineage over three hops) and a job that switched its input (a retired edge). A viewer
logs in through Airflow's login page (``logged_in_page``, ``tests/ui/conftest.py``), then:

* traces a column: the path of ``fct_daily_orders.total_usd`` up to the raw orders and down to the report
  is drawn, hop by hop, and the way back returns to datasets and jobs;
* moves the time slider to before the input switched: the old input is drawn as current, the new one is
  gone; back to now, the old edge shows only with "Retired edges", dashed;
* downloads the drawn graph with the "SVG" and "PNG" buttons: a standalone SVG of the drawn nodes, a PNG.

Screenshots go to the test's temporary directory.
"""

from __future__ import annotations

import struct
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any
from xml.etree import ElementTree

import pytest

from tests.support.graph_builders import dataset_node, job_node, orders_pipeline, retirement_events, write_log
from tests.support.run_report import SHARED_RECORDINGS
from tests.support.servers import SERVER_LOGS

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO / "benchmarks"))

from api_server_memory import api_server, login  # noqa: E402

pytestmark = [pytest.mark.airflow, pytest.mark.browser, pytest.mark.xdist_group(SHARED_RECORDINGS)]

MART = dataset_node("fct_daily_orders")
LOADED = dataset_node("loaded")


@pytest.fixture(scope="module")
def airflow_ui(airflow_db: Path, tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """A real api-server over this file's event log (``logged_in_page`` logs in to it)."""
    workdir = tmp_path_factory.mktemp("graph-views")
    log = write_log(workdir / "events.jsonl", orders_pipeline() + retirement_events())
    with api_server(log, workdir) as (base, _):
        SERVER_LOGS[base] = workdir / "api-server.log"
        login(base)  # up and answering
        yield base


def _view(page: Any, base: str, query: str) -> None:
    page.goto(f"{base}/lineage-plus/?{query}")
    page.locator("body[data-ready=true]").wait_for(timeout=30_000)


def _drawn(page: Any, selector: str = "#viewport g.node") -> set[str]:
    nodes = page.locator(selector)
    return {nodes.nth(i).get_attribute("data-node-id") for i in range(nodes.count())}


def _edges(page: Any) -> dict[tuple[str, str], bool]:
    edges = page.locator("#viewport path.edge")
    found = {}
    for i in range(edges.count()):
        edge = edges.nth(i)
        key = (edge.get_attribute("data-origin"), edge.get_attribute("data-destination"))
        found[key] = "retired-edge" in (edge.get_attribute("class") or "")
    return found


def _column(dataset: str, column: str) -> str:
    return f'["{dataset_node(dataset)}","{column}"]'


def test_column_mode_draws_the_path_of_a_column_up_and_down(
    logged_in_page: Any,
    airflow_ui: str,
    tmp_path: Path,
) -> None:
    page = logged_in_page
    _view(page, airflow_ui, f"node={dataset_node('stg_orders')}")
    details = page.locator("#details")
    details.locator("button[data-action=impact]").click()
    details.locator(".impact .level[data-level=MEDIUM]").wait_for(timeout=30_000)  # build_fct, report
    assert details.locator(".impact-owners li").all_text_contents() == ["team:bi", "team:finance"]
    details.locator(".schema-versions table").wait_for(timeout=30_000)  # the two versions side by side
    assert details.locator(".schema-versions .change-removed").all_text_contents() == ["amount (removed)"]
    details.locator("#proposed-schema").fill('{"order_id": "BIGINT", "amount_usd": "DECIMAL"}')
    details.get_by_role("button", name="Compare with the latest schema").click()
    details.locator(".proposal-result li").first.wait_for(timeout=30_000)
    assert details.locator(".proposal-result li").all_text_contents() == ["removed day DATE"]
    page.screenshot(path=str(tmp_path / "impact-and-schema.png"))

    _view(page, airflow_ui, f"node={MART}")
    page.locator("#details button.trace-column[data-column=total_usd]").click()
    page.locator("#viewport g.node.column.target").wait_for(timeout=30_000)
    assert page.locator("#mode-bar").is_visible()
    drawn = _drawn(page)
    expected = {
        _column("fct_daily_orders", "total_usd"),
        _column("stg_orders", "amount_usd"),
        _column("raw_orders", "amount"),
        _column("orders_report", "total_usd"),
    }
    assert expected <= drawn, drawn
    edges = _edges(page)
    assert (_column("raw_orders", "amount"), _column("stg_orders", "amount_usd")) in edges
    assert (_column("stg_orders", "amount_usd"), _column("fct_daily_orders", "total_usd")) in edges
    assert (_column("fct_daily_orders", "total_usd"), _column("orders_report", "total_usd")) in edges
    assert "column=total_usd" in page.url
    page.screenshot(path=str(tmp_path / "column-mode.png"))
    page.locator("#leave-columns").click()
    page.locator(f'#viewport g.node.target[data-node-id="{MART}"]').wait_for(timeout=30_000)
    assert page.locator("#mode-bar").is_hidden() and page.dialogs == []


def test_the_time_slider_shows_the_old_input_and_retired_edges_are_dashed(
    logged_in_page: Any,
    airflow_ui: str,
    tmp_path: Path,
) -> None:
    page = logged_in_page
    _view(page, airflow_ui, f"node={LOADED}&depth=2&direction=upstream")
    page.locator(f'#viewport g.node[data-node-id="{dataset_node("src_b")}"]').wait_for(timeout=30_000)
    load = job_node("etl.load")
    assert (dataset_node("src_a"), load) not in _edges(page)  # retired: not drawn by default

    page.locator("#retired").check()
    page.locator(f'#viewport path.edge.retired-edge[data-origin="{dataset_node("src_a")}"]').wait_for(
        timeout=30_000
    )
    edges = _edges(page)
    assert edges[(dataset_node("src_a"), load)] is True and edges[(dataset_node("src_b"), load)] is False
    page.screenshot(path=str(tmp_path / "retired-edges.png"))

    # the log spans minutes 0 to 73 of the test day; the input switched at minute 60
    slider = page.locator("#as-of")
    assert slider.is_enabled()
    slider.fill(str(round(1000 * 55 / 73)))
    page.locator("body.time-travel").wait_for(timeout=30_000)
    page.locator(f'#viewport path.edge[data-origin="{dataset_node("src_a")}"]:not(.retired-edge)').wait_for(
        timeout=30_000
    )
    assert dataset_node("src_b") not in _drawn(page)
    assert page.locator("#as-of-label").text_content().startswith("as of ")
    assert "asOf=" in page.url
    page.screenshot(path=str(tmp_path / "time-slider.png"))

    page.locator("#as-of-now").click()
    page.locator("body:not(.time-travel)").wait_for(timeout=30_000)
    page.locator(f'#viewport g.node[data-node-id="{dataset_node("src_c")}"]').wait_for(timeout=30_000)
    assert page.dialogs == []


def test_the_svg_and_png_buttons_download_the_drawn_graph(
    logged_in_page: Any,
    airflow_ui: str,
    tmp_path: Path,
) -> None:
    page = logged_in_page
    _view(page, airflow_ui, f"node={MART}&depth=2&direction=upstream")
    page.locator(f'#viewport g.node[data-node-id="{job_node("orders.build_fct")}"]').wait_for(timeout=30_000)
    drawn = _drawn(page)
    with page.expect_download(timeout=30_000) as svg_download:
        page.locator("#export-svg").click()
    assert svg_download.value.suggested_filename == "lineage-fct_daily_orders.svg"
    svg = Path(svg_download.value.path()).read_bytes()
    root = ElementTree.fromstring(svg)  # parses as XML, standalone
    ns = "{http://www.w3.org/2000/svg}"
    assert root.tag == f"{ns}svg" and root.find(f"{ns}style") is not None  # the page's styles inlined
    ids = {g.get("data-node-id") for g in root.iter(f"{ns}g") if g.get("data-node-id")}
    assert MART in ids and ids == drawn  # the drawn graph, the target's node included
    assert b"<script" not in svg and b"foreignObject" not in svg
    (tmp_path / "graph.svg").write_bytes(svg)

    with page.expect_download(timeout=30_000) as png_download:
        page.locator("#export-png").click()
    assert png_download.value.suggested_filename == "lineage-fct_daily_orders.png"
    png = Path(png_download.value.path()).read_bytes()
    assert png[:8] == b"\x89PNG\r\n\x1a\n" and len(png) > 1000
    width, height = struct.unpack(">II", png[16:24])  # IHDR: the image's size, the SVG's at ratio 1
    assert (width, height) == (int(root.get("width")), int(root.get("height")))
    assert page.dialogs == []
