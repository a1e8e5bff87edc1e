"""``lineage-plus diff`` without Airflow: the changes between two declared lineages, their severity, their
downstream impact over a lineage graph, and the Markdown a pull request shows."""

from __future__ import annotations

import subprocess
from pathlib import Path
from typing import Any

from airflow_lineage_plus.cli import run
from airflow_lineage_plus.declared.change_impact import add_impact
from airflow_lineage_plus.declared.compare import compare
from airflow_lineage_plus.declared.render import render_markdown, render_text
from airflow_lineage_plus.graph import LineageQueries, open_source
from tests.support.graph_builders import dataset_node, ds, job_event, job_node, orders_pipeline, write_log

STG, FCT = dataset_node("stg_orders"), dataset_node("fct_daily_orders")
LOAD = job_node("orders.load_orders")


def _versions() -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    stg_v1 = ds(
        "stg_orders",
        fields=[("order_id", "INT"), ("amount", "DECIMAL"), ("coupon", "VARCHAR")],
        columns={
            "order_id": [("raw_orders", "order_id", "IDENTITY")],
            "amount": [("raw_orders", "amount", "IDENTITY")],
        },
    )
    stg_v2 = ds(
        "stg_orders",
        fields=[("order_id", "BIGINT"), ("amount", "DECIMAL"), ("day", "DATE")],
        columns={
            "order_id": [("raw_orders", "order_id", "IDENTITY")],
            "amount": [("raw_orders", "amount_cents", "TRANSFORMATION")],
        },
    )
    base = [
        job_event("orders.load_orders", 0, inputs=[ds("raw_orders")], outputs=[stg_v1]),
        job_event("orders.build_fct", 0, inputs=[ds("stg_orders")], outputs=[ds("fct_daily_orders")]),
        job_event("orders.legacy", 0, inputs=[ds("stg_orders")], outputs=[ds("legacy_orders")]),
        job_event("orders.check", 0, inputs=[ds("fct_daily_orders")]),
    ]
    head = [
        job_event(
            "orders.load_orders", 1, inputs=[ds("raw_orders"), ds("fx_rates")], outputs=[stg_v2, ds("audit")]
        ),
        job_event("orders.build_fct", 1, inputs=[ds("stg_orders")]),
        job_event("orders.new_report", 1, inputs=[ds("fct_daily_orders")], outputs=[ds("report")]),
    ]
    return base, head


def test_every_kind_of_change_is_found_once_with_its_severity() -> None:
    answer = compare(*_versions())
    found = [
        (
            c["kind"],
            c["severity"],
            c["job"].split(":")[-1],
            c.get("dataset", "").split(":")[-1],
            c.get("column"),
        )
        for c in answer["changes"]
    ]
    assert found == [
        ("JOB_ADDED", "compatible", "orders.new_report", "", None),
        ("JOB_REMOVED", "compatible", "orders.check", "", None),  # it only read
        ("JOB_REMOVED", "breaking", "orders.legacy", "", None),  # legacy_orders is no longer refreshed
        ("OUTPUT_REMOVED", "breaking", "orders.build_fct", "fct_daily_orders", None),
        ("INPUT_ADDED", "compatible", "orders.load_orders", "fx_rates", None),
        ("OUTPUT_ADDED", "compatible", "orders.load_orders", "audit", None),
        ("COLUMN_REMOVED", "breaking", "orders.load_orders", "stg_orders", "coupon"),
        ("TYPE_CHANGED", "breaking", "orders.load_orders", "stg_orders", "order_id"),
        ("COLUMN_ADDED", "compatible", "orders.load_orders", "stg_orders", "day"),
        ("COLUMN_LINEAGE_CHANGED", "compatible", "orders.load_orders", "stg_orders", "amount"),
    ]
    lineage = answer["changes"][-1]
    assert lineage["added"] == ["warehouse/raw_orders.amount_cents [DIRECT/TRANSFORMATION]"]
    assert lineage["removed"] == ["warehouse/raw_orders.amount [DIRECT/IDENTITY]"]
    assert answer["summary"] == {"breaking": 4, "compatible": 6}
    assert answer["datasets"] == {
        "added": [dataset_node(n) for n in ("audit", "fx_rates", "report")],
        "removed": [dataset_node("legacy_orders")],
    }
    assert len(answer["edges"]["added"]) == 4 and len(answer["edges"]["removed"]) == 4


def test_identical_versions_have_no_changes() -> None:
    base, _ = _versions()
    answer = compare(base, list(reversed(base)))
    assert answer["changes"] == [] and answer["summary"] == {"breaking": 0, "compatible": 0}
    assert answer["edges"] == {"added": [], "removed": []}


def test_impact_names_downstream_jobs_and_owners_from_the_current_graph(tmp_path: Path) -> None:
    answer = compare(*_versions())
    queries = LineageQueries(open_source(events=write_log(tmp_path / "events.jsonl", orders_pipeline())))
    add_impact(answer, queries)
    by_kind = {(c["kind"], c.get("column")): c for c in answer["changes"]}
    removed = by_kind[("COLUMN_REMOVED", "coupon")]["impact"]
    assert removed == {
        "level": "MEDIUM",
        "jobs": [job_node("orders.build_fct"), job_node("orders.report")],
        "owners": ["team:bi", "team:finance"],
        "unknownDatasets": [],
    }
    assert by_kind[("OUTPUT_REMOVED", None)]["impact"]["jobs"] == [job_node("orders.report")]
    legacy = next(c for c in answer["changes"] if c["job"] == job_node("orders.legacy"))
    assert legacy["impact"] == {
        "level": None,
        "jobs": [],
        "owners": [],
        "unknownDatasets": [dataset_node("legacy_orders")],
    }
    assert "impact" not in by_kind[("INPUT_ADDED", None)]  # a task's own input affects nobody downstream
    assert answer["impact"] == {
        "breakingJobs": [job_node("orders.build_fct"), job_node("orders.report")],
        "breakingOwners": ["team:bi", "team:finance"],
    }


def _labelled(answer: dict[str, Any]) -> dict[str, Any]:
    answer["base"] = {"label": "main (1111111)", "dags": 1}
    answer["head"] = {"label": "feature (2222222)", "dags": 1}
    return answer


def test_markdown_has_one_table_row_per_change_and_names_cannot_break_out() -> None:
    hostile = "orders|<img src=x onerror=alert(1)>`\n@team"
    base = [job_event("orders.load", 0, outputs=[ds(hostile, fields=[("a", "INT"), ("b", "INT")])])]
    head = [job_event("orders.load", 1, outputs=[ds(hostile, fields=[("a", "INT")])])]
    markdown = render_markdown(_labelled(compare(base, head)))
    rows = [line for line in markdown.splitlines() if line.startswith("| :")]
    assert len(rows) == 1
    cells = [cell for cell in rows[0].replace("\\|", "").split("|")]
    assert len(cells) == 6  # 4 cells between 5 pipes: the name's own pipe is escaped
    # one line, inside a double-backtick code span (literal text: no HTML, no mention, no link)
    span = "`` orders\\|<img src=x onerror=alert(1)>` @team ``"
    assert span in rows[0]
    assert markdown.count("<img") == markdown.count(span) == 1


def test_text_and_markdown_say_the_same_changes() -> None:
    answer = _labelled(compare(*_versions()))
    text, markdown = render_text(answer), render_markdown(answer)
    assert text.splitlines()[0].endswith("4 breaking changes, 6 compatible")
    assert "**4 breaking changes, 6 compatible**" in markdown
    for phrase in ("task `orders.legacy` removed", "column `coupon` (`VARCHAR`) removed from `stg_orders`"):
        assert phrase in markdown and phrase.replace("`", "") in text


def test_diff_refuses_a_ref_the_repository_does_not_have(tmp_path: Path) -> None:
    subprocess.run(["git", "init", "-q", str(tmp_path)], check=True)
    code, out, err = run(["diff", "--repo", str(tmp_path), "--base", "no-such-branch", "--head", "HEAD"])
    assert (code, out) == (1, "")
    assert "'no-such-branch' is neither a directory nor a git ref" in err
    code, _, err = run(["diff", "--repo", str(tmp_path), "--base", "--upload-pack=x", "--head", "HEAD"])
    assert code in (1, 2) and "upload-pack" not in err.replace("'--upload-pack=x'", "")


#: names a DAG author (or an attacker with a pull request) can give datasets and tasks
HOSTILE = [
    "a``![pixel](https://evil.example/p.png)``b",  # two backticks: once closed the code span early (#27)
    "``[click me](https://evil.example/)``",
    "x\\|![pixel](https://evil.example/q.png)",  # a backslash before the escaped pipe
    "``` <img src=x onerror=alert(1)> ```",
    "<script>alert(1)</script>",
    "```mermaid\nclick n0 href https://evil.example/",
    "https://evil.example/autolink @someone",
]


def _hostile_diff() -> dict[str, Any]:
    base = [job_event("orders.load", 0, outputs=[ds(HOSTILE[0], fields=[("a", "INT"), ("b", "INT")])])]
    head = [
        job_event("orders.load", 1, outputs=[ds(HOSTILE[0], fields=[("a", "INT")])]),
        job_event(HOSTILE[1], 1, inputs=[ds(name) for name in HOSTILE[2:5]], outputs=[ds(HOSTILE[5])]),
        job_event("orders.report", 1, inputs=[ds(HOSTILE[5])], outputs=[ds(HOSTILE[6])]),
    ]
    answer = _labelled(compare(base, head))
    answer["base"]["label"] = "main``![x](https://evil.example/r.png)``"
    return answer


def test_hostile_names_give_no_live_link_image_or_html_in_the_pull_request_comment() -> None:
    from markdown_it import MarkdownIt

    markdown = render_markdown(_hostile_diff())
    # GitHub's dialect: CommonMark, tables, autolinked URLs, raw HTML allowed (GitHub then sanitises it)
    parser = MarkdownIt("gfm-like", {"html": True})
    tokens = [t for token in parser.parse(markdown) for t in [token, *(token.children or [])]]
    kinds = {t.type for t in tokens}
    assert not kinds & {"link_open", "image", "autolink_open"}, markdown
    html = [t.content.strip() for t in tokens if t.type in ("html_inline", "html_block")]
    ours = {"<details><summary>", "</summary>", "</details>", "<sub>", "</sub>"}
    assert {h for h in html if not any(h.startswith(o) for o in ours)} == set(), html
    rendered = parser.render(markdown)
    assert "<img" not in rendered and "<script" not in rendered and "<a " not in rendered
    # every hostile name is shown, literally, in code
    spans = {" ".join(t.content.split()) for t in tokens if t.type == "code_inline"}
    for name in HOSTILE[:2]:
        assert any(name in span for span in spans), name
    # one Mermaid picture, no name can end its block: the rest of the comment is still Markdown
    [fence] = [t for t in tokens if t.type == "fence"]
    assert fence.info == "mermaid" and "`" not in fence.content and "<" not in fence.content
    assert markdown.rstrip().endswith("</sub>") and tokens[-1].type != "fence"


def test_the_markdown_picture_shows_added_removed_and_changed_edges() -> None:
    answer = _labelled(compare(*_versions()))
    markdown = render_markdown(answer)
    block = markdown.split("```mermaid\n", 1)[1].split("\n```", 1)[0]
    arrows = [line.strip() for line in block.splitlines() if "-->" in line or "-.->" in line or "==>" in line]
    added, removed = len(answer["edges"]["added"]), len(answer["edges"]["removed"])
    assert sum("==>|added|" in a for a in arrows) == added == 4
    assert sum("-.->|removed|" in a for a in arrows) == removed == 4
    # stg_orders keeps being written by load_orders, with other columns: that edge is "changed"
    assert sum("-->|changed|" in a for a in arrows) == 1
    assert len(arrows) == added + removed + 1
