"""``lineage-plus diff`` between two real versions of the sample DAGs (``dags/``), as git refs of a temporary
repository: the head removes a column from a staging output, adds an input and removes a task. The diff
parses both refs (each in its own process), weighs each change over the current graph (the base's declared
lineage, published with ``publish-static``) and fails the check on the breaking ones."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from airflow_lineage_plus.cli import run
from airflow_lineage_plus.declared.render import render_markdown, render_text
from tests.support.harness import REPO

if str(REPO) not in sys.path:
    sys.path.insert(0, str(REPO))

from demo.environment import warehouse_connection

pytestmark = pytest.mark.airflow

NS = "test-airflow"
# The three changes of the head version: (file, text in the base, text in the head).
EDITS = [
    (  # a column removed from a staging output (stg_contacts' declared schema is this list)
        "dags/lineage_samples/catalog.py",
        '    ("contact_id", "VARCHAR"),\n    ("email", "VARCHAR"),\n    ("account_id", "VARCHAR"),\n'
        '    ("first_name", "VARCHAR"),',
        '    ("contact_id", "VARCHAR"),\n    ("account_id", "VARCHAR"),\n    ("first_name", "VARCHAR"),',
    ),
    (  # a new input of load_stg_contacts
        "dags/crm_contacts_ingestion.py",
        "        inputs=[catalog.RAW_CONTACTS],\n",
        '        inputs=[catalog.RAW_CONTACTS, "s3://raw-data-lake/crm/accounts/"],\n',
    ),
    (  # a task removed: build_dim_contacts is no longer instantiated
        "dags/crm_contacts_ingestion.py",
        "extract_contacts_to_s3() >> load_stg_contacts() >> build_dim_contacts()",
        "extract_contacts_to_s3() >> load_stg_contacts()",
    ),
]


def _git(repo: Path, *args: str) -> str:
    env = {**os.environ, "GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@example.com"}
    env |= {"GIT_COMMITTER_NAME": "t", "GIT_COMMITTER_EMAIL": "t@example.com"}
    done = subprocess.run(
        ["git", "-C", str(repo), *args], env=env, capture_output=True, text=True, check=True
    )
    return done.stdout.strip()


@pytest.fixture(scope="module")
def diffed(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    """Both versions committed, the base published as the current graph, then one diff (JSON)."""
    root = tmp_path_factory.mktemp("diff")
    repo = root / "repo"
    shutil.copytree(REPO / "dags", repo / "dags", ignore=shutil.ignore_patterns("__pycache__"))
    _git(repo, "init", "-q", "-b", "main")
    _git(repo, "add", "-A")
    _git(repo, "commit", "-q", "-m", "base")
    patch = pytest.MonkeyPatch()
    patch.setenv("AIRFLOW_CONN_WAREHOUSE", warehouse_connection(root / "analytics.duckdb"))
    current = root / "current.jsonl"
    publish = ["--events", str(current), "publish-static", "--dags", str(repo / "dags")]
    published = subprocess.run(
        [sys.executable, "-m", "airflow_lineage_plus.cli", *publish],
        capture_output=True,
        text=True,
        timeout=300,
        env=dict(os.environ),
    )
    assert published.returncode == 0, published.stderr[-3000:]
    for path, old, new in EDITS:
        text = (repo / path).read_text()
        assert text.count(old) == 1, f"the sample changed: {path} no longer has {old!r}"
        (repo / path).write_text(text.replace(old, new))
    _git(repo, "commit", "-q", "-am", "head")
    status = _git(repo, "status", "--porcelain")
    versions = ["--repo", str(repo), "--base", "HEAD~1", "--head", "main"]
    code, out, err = run(
        ["--events", str(current), "diff", *versions, "--format", "json", "--fail-on", "breaking"]
    )
    patch.undo()
    return {
        "code": code,
        "answer": json.loads(out) if out else None,
        "err": err,
        "repo": repo,
        "status": status,
    }


def _warehouse(root: Path) -> str:
    """The warehouse namespace the connection gives (``duckdb:///<file>``)."""
    return f"duckdb://{root / 'analytics.duckdb'}"


def test_diff_reports_exactly_the_three_changes_and_fails_on_breaking(diffed: dict[str, Any]) -> None:
    assert diffed["code"] == 3, diffed["err"]
    answer = diffed["answer"]
    wh = _warehouse(diffed["repo"].parent)
    found = [
        (c["kind"], c["severity"], c["job"], c.get("dataset"), c.get("column")) for c in answer["changes"]
    ]
    assert found == [
        ("JOB_REMOVED", "breaking", f"job:{NS}:crm_contacts_ingestion.build_dim_contacts", None, None),
        (
            "INPUT_ADDED",
            "compatible",
            f"job:{NS}:crm_contacts_ingestion.load_stg_contacts",
            "dataset:s3://raw-data-lake:crm/accounts",
            None,
        ),
        (
            "COLUMN_REMOVED",
            "breaking",
            f"job:{NS}:crm_contacts_ingestion.load_stg_contacts",
            f"dataset:{wh}:analytics.staging.stg_contacts",
            "email",
        ),
    ]
    assert answer["datasets"] == {
        "added": ["dataset:s3://raw-data-lake:crm/accounts"],
        "removed": [f"dataset:{wh}:analytics.marts.dim_contacts"],
    }
    assert len(answer["edges"]["added"]) == 1 and len(answer["edges"]["removed"]) == 2
    assert answer["unresolvedConnections"] == []
    assert diffed["status"] == ""  # the repository's checkout was not touched


def test_each_breaking_change_names_the_impacted_downstream_jobs_and_owners(diffed: dict[str, Any]) -> None:
    removed_task, _, removed_column = diffed["answer"]["changes"]
    # dim_contacts: nothing reads it
    assert removed_task["impact"] == {"level": "LOW", "jobs": [], "owners": [], "unknownDatasets": []}
    # stg_contacts is read by build_dim_contacts; the mart's dbt model reads it too, but a task running dbt
    # declares no tables, so the declared graph (before any run) knows only the first reader
    assert removed_column["impact"] == {
        "level": "LOW",
        "jobs": [f"job:{NS}:crm_contacts_ingestion.build_dim_contacts"],
        "owners": ["team:analytics"],
        "unknownDatasets": [],
    }


def test_markdown_and_text_render_the_same_diff(diffed: dict[str, Any]) -> None:
    answer = diffed["answer"]
    markdown = render_markdown(answer)
    assert markdown.startswith("### Lineage changes: `HEAD~1 (")
    assert "**2 breaking changes, 1 compatible**" in markdown
    assert len([line for line in markdown.splitlines() if line.startswith("| :")]) == 3
    assert "LOW: 1 downstream job | `team:analytics` |" in markdown
    picture = markdown.split("```mermaid\n", 1)[1].split("\n```", 1)[0]
    edges = answer["edges"]
    assert picture.count("==>|added|") == len(edges["added"]) and picture.count("-.->|removed|") == len(
        edges["removed"]
    )
    text = render_text(answer)
    assert "BREAKING   column email (VARCHAR) removed from analytics.staging.stg_contacts" in text
