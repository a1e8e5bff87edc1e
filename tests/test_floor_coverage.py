"""The floor run (scripts/test-floor.sh, the oldest supported Airflow, provider and client) runs every test
file except those it names, each with a reason; this test runs there too."""

from __future__ import annotations

import re
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
SCRIPT = REPO / "scripts" / "test-floor.sh"


def left_out() -> dict[str, str]:
    """The floor script's LEFT_OUT entries: path -> reason."""
    body = re.search(r"^LEFT_OUT=\(\n(.*?)^\)", SCRIPT.read_text(), re.S | re.M)
    assert body is not None, "scripts/test-floor.sh has no LEFT_OUT=( ... ) list"
    entries = re.findall(r'^\s*"([^"|]+)\|([^"]*)"\s*$', body.group(1), re.M)
    assert len(entries) == len([line for line in body.group(1).splitlines() if line.strip()])
    return dict(entries)


def test_the_floor_runs_every_test_file_but_the_ones_it_names_each_with_a_reason() -> None:
    named = left_out()
    assert named, "the floor names no file: then the list and this test go"
    for path, reason in named.items():
        assert (REPO / path).exists(), f"{path}: named in scripts/test-floor.sh but gone"
        assert len(reason.split()) >= 8, f"{path}: the reason says too little: {reason!r}"
    script = SCRIPT.read_text()
    assert 'tests "${ignores[@]}"' in script  # the whole of tests/, less the named paths, and nothing else
    files = sorted(p.relative_to(REPO).as_posix() for p in (REPO / "tests").rglob("test_*.py"))
    run = [f for f in files if not any(f == path or f.startswith(path + "/") for path in named)]
    for needed in ("tests/test_floor_coverage.py", "tests/act/test_impact_alerts.py", "tests/test_cli.py"):
        assert needed in run
    for area in ("act", "reliability", "datasets", "declared", "deliver"):
        assert any(f.startswith(f"tests/{area}/") for f in run), f"nothing of tests/{area} runs on the floor"
