"""Pictures of lineage (``--format mermaid``, ``--format dot``): what they draw, how failed and skipped
jobs look, and that hostile names stay labels. DOT is checked by Graphviz itself (``dot -Tsvg``, installed
by scripts/system-deps.sh); Mermaid by its grammar's line forms here, and by Mermaid's own parser in
tests/test_pictures_mermaid.py."""

from __future__ import annotations

import re
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest

from airflow_lineage_plus.cli import run
from airflow_lineage_plus.pictures import Picture, dot_text, graph_picture, mermaid_text
from tests.support.graph_builders import at, cross_dag_world, orders_pipeline, run_pair, write_log
from tests.support.what_changed_events import DAY, week

FCT = ["--namespace", "warehouse", "--name", "fct_daily_orders"]
HOSTILE = 'x"];\n  click n0 href "https://evil.example/"\n  n9["`<img src=x>` #quot; %%{init}%% -->|y| ;'

#: every line a picture may have (Mermaid's flowchart forms this module writes)
MERMAID_LINE = re.compile(
    r"flowchart LR"
    r'|  n\d+(\[\("[^"]*"\)\]|\["[^"]*"\])'
    r"|  n\d+ (-->|-\.->|==>)(\|[a-z]+\|)? n\d+"
    r"|  linkStyle \d+ [a-z:#0-9,\-]+"
    r"|  classDef [A-Za-z]+ [a-z:#0-9,\- ]+"
    r"|  class n\d+(,n\d+)* [A-Za-z]+"
)


def _mermaid_lines_are_well_formed(text: str) -> None:
    bad = [line for line in text.splitlines() if not MERMAID_LINE.fullmatch(line)]
    assert bad == [], bad


def _svg(dot: str) -> str:
    if shutil.which("dot") is None:
        pytest.fail("Graphviz is missing: run scripts/system-deps.sh")
    done = subprocess.run(["dot", "-Tsvg"], input=dot, capture_output=True, text=True, timeout=60)
    assert done.returncode == 0 and not done.stderr, done.stderr
    return done.stdout


def _answer(log: Path, *query: str) -> tuple[int, str]:
    code, out, err = run(["--events", str(log), *query])
    assert code in (0, 4), err
    return code, out


#: what-changed of stg.contacts the morning after the CRM sent 880 rows and staging failed
STG = ["what-changed", "--namespace", "warehouse", "--name", "stg.contacts", "--as-of", at(7 * DAY + 60)]


def _what_changed(tmp_path: Path, form: str) -> str:
    log = write_log(tmp_path / "week.jsonl", week(raw_rows=880, state="FAIL"))
    return _answer(log, *STG, "--format", form)[1]


def test_upstream_as_mermaid_draws_every_node_and_edge_with_the_failed_job_styled(tmp_path: Path) -> None:
    log = write_log(tmp_path / "events.jsonl", orders_pipeline())
    _, out = _answer(log, "upstream", *FCT, "--format", "json")
    import json

    answer = json.loads(out)
    _, mermaid = _answer(log, "upstream", *FCT, "--format", "mermaid")
    _mermaid_lines_are_well_formed(mermaid)
    nodes = [line for line in mermaid.splitlines() if re.fullmatch(r"  n\d+\[.*", line)]
    arrows = [line for line in mermaid.splitlines() if " --> " in line or " -.-> " in line]
    assert len(nodes) == len(answer["nodes"]) + 1 and len(arrows) == len(answer["edges"])
    assert '  n0[("warehouse / fct_daily_orders")]' in mermaid  # the target, a dataset: a cylinder
    [failed] = [line for line in nodes if "orders.build_fct" in line]
    failed_id = failed.split("[")[0].strip()
    assert "orders.build_fct #183; FAILED" in failed
    assert f"  class {failed_id} failed" in mermaid and "  class n0 target" in mermaid


def test_failed_upstream_as_dot_is_a_graph_graphviz_draws(tmp_path: Path) -> None:
    log = write_log(tmp_path / "events.jsonl", orders_pipeline())
    code, dot = _answer(log, "failed-upstream", *FCT, "--format", "dot")
    assert code == 4
    svg = _svg(dot)
    assert svg.count('class="node"') == 2 and svg.count('class="edge"') == 1
    assert "orders.build_fct · FAILED" in svg and 'fill="#fde2e1"' in svg


def test_skipped_and_upstream_failed_jobs_are_styled_apart() -> None:
    answer: dict[str, Any] = {
        "target": {"id": "dataset:w:t", "type": "DATASET", "namespace": "w", "name": "t"},
        "nodes": [
            {
                "id": f"job:p:{state}",
                "type": "JOB",
                "namespace": "p",
                "name": state,
                "latestRun": {"state": state},
            }
            for state in ("SKIPPED", "UPSTREAM_FAILED", "COMPLETED", "ABORTED")
        ],
        "edges": [
            {"origin": f"job:p:{s}", "destination": "dataset:w:t", "state": "current"} for s in ("SKIPPED",)
        ],
    }
    picture = graph_picture(answer)
    mermaid = picture.mermaid()
    _mermaid_lines_are_well_formed(mermaid)
    assert "  class n1 skipped" in mermaid and "  class n2 upstreamFailed" in mermaid
    assert "  class n4 failed" in mermaid  # ABORTED: the run did not complete
    assert not re.search(r"class [n0-9,]*n3[ ,]", mermaid)  # COMPLETED: plain
    svg = _svg(picture.dot())
    assert svg.count('stroke-dasharray="5,2"') == 2  # the skipped and the upstream-failed box


def test_hostile_names_stay_labels_in_mermaid_and_dot() -> None:
    picture = Picture(target="dataset:w:" + HOSTILE)
    picture.node("dataset:w:" + HOSTILE, "DATASET", HOSTILE)
    picture.edge("job:p:" + HOSTILE, "dataset:w:" + HOSTILE, "retired")
    mermaid = picture.mermaid()
    _mermaid_lines_are_well_formed(mermaid)  # no line of the name's own: one node line each, one arrow
    assert len(mermaid.splitlines()) == 1 + 2 + 1 + 1 + 2
    assert not set(mermaid_text(HOSTILE)) & set('"`<>[]()%|\n{}')  # ';' ends the entity codes
    svg = _svg(picture.dot())
    assert svg.count('class="node"') == 2 and svg.count('class="edge"') == 1
    assert "&lt;img src=x&gt;" in svg and "<img" not in svg  # shown, as text
    assert dot_text('a"b\\') == '"a\\"b\\\\"'


def test_declared_and_retired_edges_are_drawn_dashed(tmp_path: Path) -> None:
    events = run_pair("etl.load", "a", 0, 1, "COMPLETE", inputs=[{"namespace": "w", "name": "src"}])
    events += run_pair("etl.load", "b", 2, 3, "COMPLETE", inputs=[{"namespace": "w", "name": "other"}])
    log = write_log(tmp_path / "e.jsonl", events)
    query = ["downstream", "--namespace", "w", "--name", "src", "--include-retired"]
    _, mermaid = _answer(log, *query, "--format", "mermaid")
    _mermaid_lines_are_well_formed(mermaid)
    assert re.search(r"  n0 -\.->\|retired\| n1", mermaid) and "  linkStyle 0 stroke:#999999" in mermaid
    _, dot = _answer(log, *query, "--format", "dot")
    assert 'style=dashed color="#999999" label="retired"' in dot
    assert _svg(dot).count('stroke-dasharray="5,2"') == 1


def test_a_triggered_cross_dag_edge_is_drawn_apart_from_the_failed_dag_that_fed_it(tmp_path: Path) -> None:
    log = write_log(tmp_path / "e.jsonl", cross_dag_world())
    query = ["failed-upstream", "--namespace", "warehouse", "--name", "report"]
    _, mermaid = _answer(log, *query, "--format", "mermaid")
    _mermaid_lines_are_well_formed(mermaid)
    assert re.search(r"  n\d+ -\.->\|triggered\| n\d+", mermaid)
    assert "stroke:#7b4fc9" in mermaid and '  n1["pipeline / xdag_orders #183; FAILED"]' in mermaid
    assert "  class n1 failed" in mermaid
    _, dot = _answer(log, *query, "--format", "dot")
    assert dot.count('style=dashed color="#7b4fc9" label="triggered"') == 1
    assert _svg(dot).count('stroke="#7b4fc9"') == 2  # the edge's line and its arrow head


def test_what_changed_as_mermaid_draws_the_upstream_walk_and_marks_each_changed_node(tmp_path: Path) -> None:
    mermaid = _what_changed(tmp_path, "mermaid")
    _mermaid_lines_are_well_formed(mermaid)
    assert mermaid.splitlines()[1:5] == [
        '  n0[("warehouse / stg.contacts")]',
        '  n1["pipeline / stg_contacts #183; FAILED #183; '
        'the latest run was FAILED #40;usually COMPLETED#41;"]',
        '  n2[("warehouse / raw.contacts #183; '
        '880 rows #40;usually 1000#44; -12 #37;#41; #40;#43;1 more#41;")]',
        '  n3["pipeline / crm_extract #183; COMPLETED"]',
    ]  # the target, the failed job, the source with its top change (rows; its bytes the one more)
    assert mermaid.splitlines()[5:8] == ["  n2 --> n1", "  n3 --> n2", "  n1 --> n0"]
    assert "  class n1 failed" in mermaid  # a failed job keeps the failed style
    assert "  class n2 changed" in mermaid and "  class n0 target" in mermaid
    assert mermaid.count("  class ") == 3  # the unchanged job and the target's own look are left alone


def test_what_changed_as_dot_is_a_graph_graphviz_draws_with_the_changed_node_styled(tmp_path: Path) -> None:
    svg = _svg(_what_changed(tmp_path, "dot"))
    assert svg.count('class="node"') == 4 and svg.count('class="edge"') == 3
    assert "raw.contacts · 880 rows (usually 1000, &#45;12 %) (+1 more)" in svg
    assert svg.count('fill="#fef5e7"') == 1 and svg.count('fill="#fde2e1"') == 1


def test_a_marked_node_keeps_hostile_notes_as_text() -> None:
    picture = Picture(target="dataset:w:t")
    picture.edge("job:p:j", "dataset:w:t")
    picture.mark("dataset:w:t", "changed", HOSTILE)
    picture.mark("dataset:w:elsewhere", "changed", "not drawn")  # a node not in the picture: ignored
    mermaid = picture.mermaid()
    _mermaid_lines_are_well_formed(mermaid)
    assert len(mermaid.splitlines()) == 1 + 2 + 1 + 2 + 2 and "not drawn" not in mermaid
    assert _svg(picture.dot()).count('class="node"') == 2
    with pytest.raises(ValueError, match="unknown mark"):
        picture.mark("dataset:w:t", "red", "x")


def test_text_only_questions_do_not_take_picture_formats(tmp_path: Path) -> None:
    log = write_log(tmp_path / "events.jsonl", orders_pipeline())
    code, _, _ = run(["--events", str(log), "columns", *FCT, "--column", "total_usd", "--format", "mermaid"])
    assert code == 2


def test_mermaid_itself_parses_every_kind_of_picture_and_rejects_a_broken_one(tmp_path: Path) -> None:
    from airflow_lineage_plus.declared.compare import compare
    from airflow_lineage_plus.declared.render import picture
    from tests.support.mermaid_parser import parse_all

    log = write_log(tmp_path / "events.jsonl", orders_pipeline())
    pictures = [
        _answer(log, q, *FCT, "--format", "mermaid")[1] for q in ("upstream", "failed-upstream", "impact")
    ]
    hostile = Picture(target="dataset:w:" + HOSTILE)
    for kind in ("current", "retired", "declared", "added", "removed", "changed"):
        hostile.edge(f"job:p:{HOSTILE}{kind}", "dataset:w:" + HOSTILE, kind)
    pictures.append(hostile.mermaid())
    pictures.append(_what_changed(tmp_path, "mermaid"))
    asserted = write_log(tmp_path / "asserted.jsonl", week(raw_assertions=[("not_null", "email", False)]))
    failed = _answer(asserted, "failed-upstream", *STG[1:5], "--format", "mermaid")[1]
    assert "class n1 assertionFailed" in failed
    pictures.append(failed)
    from tests.support.graph_builders import ds, job_event

    base = [job_event("j", 0, inputs=[ds("a")], outputs=[ds("b", fields=[("x", "INT")])])]
    head = [job_event("j", 1, inputs=[ds(HOSTILE)], outputs=[ds("b", fields=[("x", "BIGINT")])])]
    pictures.append(picture(compare(base, head)).mermaid())
    repo = Path(__file__).resolve().parents[1]
    for doc in (repo / "README.md", repo / "docs" / "static-lineage.md"):  # the pictures the docs show
        pictures += [block.split("\n```", 1)[0] for block in doc.read_text().split("```mermaid\n")[1:]]
    assert len(pictures) == 10  # README: the mart and the cross-DAG example
    broken = pictures[0].replace('")]', '"]', 1)  # a cylinder left open
    results = parse_all([*pictures, broken])
    assert [r.get("type") for r in results[:-1]] == ["flowchart-v2"] * len(pictures), results
    assert results[-1]["ok"] is False and "Parse error" in results[-1]["error"]
