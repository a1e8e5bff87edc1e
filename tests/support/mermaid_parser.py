"""Mermaid's own parser (the npm ``mermaid`` package in Node, installed by scripts/js-deps.sh) over texts."""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parents[1] / "js"


def parse_all(texts: list[str]) -> list[dict[str, Any]]:
    """One result per text: ``{"ok": True, "type": ...}`` or ``{"ok": False, "error": ...}``."""
    node = shutil.which("node")
    if node is None or not (HERE / "node_modules" / "mermaid").is_dir():
        raise AssertionError("Mermaid's parser is not installed: run bash scripts/js-deps.sh")
    done = subprocess.run(
        [node, str(HERE / "mermaid_parse.mjs")],
        input=json.dumps(texts),
        capture_output=True,
        text=True,
        timeout=120,
        cwd=HERE,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    results: list[dict[str, Any]] = json.loads(done.stdout.strip().splitlines()[-1])
    return results
