"""``lineage-plus --help`` and each command's help: every command listed with a one-line help, every
option with help, an example and the exit codes in each epilog; the text is snapshot-tested.

The snapshots (``tests/cli/snapshots/<command>.txt``) are rendered 100 columns wide without colour
(``COLUMNS=100``, ``NO_COLOR=1``, ``TERM=dumb``), whatever the terminal. After changing a help text,
refresh them with::

    LINEAGE_PLUS_UPDATE_SNAPSHOTS=1 .venv/bin/python -m pytest tests/cli/test_help.py -p no:randomly -n 0

and review the diff (``git diff tests/cli/snapshots``).
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
from pathlib import Path

import pytest

from airflow_lineage_plus.cli import commands
from airflow_lineage_plus.cli.parser import build

SNAPSHOTS = Path(__file__).resolve().parent / "snapshots"
ALL_COMMANDS = [
    "upstream",
    "downstream",
    "failed-upstream",
    "impact",
    "schema-diff",
    "columns",
    "lint-names",
    "report",
    "freshness",
    "replay",
    "publish-static",
    "diff",
    "what-changed",
    "import",
    "refold",
    "retention",
]
FIXED = {"COLUMNS": "100", "NO_COLOR": "1", "TERM": "dumb"}


@pytest.fixture
def fixed_terminal(monkeypatch: pytest.MonkeyPatch) -> None:
    for key, value in FIXED.items():
        monkeypatch.setenv(key, value)
    monkeypatch.delenv("FORCE_COLOR", raising=False)


def _subcommands(parser: argparse.ArgumentParser) -> dict[str, argparse.ArgumentParser]:
    [action] = [a for a in parser._actions if isinstance(a, argparse._SubParsersAction)]
    return dict(action.choices)


def _check_snapshot(name: str, text: str) -> None:
    path = SNAPSHOTS / f"{name}.txt"
    if os.environ.get("LINEAGE_PLUS_UPDATE_SNAPSHOTS"):
        path.write_text(text)
    assert path.exists(), f"no snapshot {path}: refresh the snapshots (see this module's docstring)"
    assert text == path.read_text(), f"{name}'s help changed: refresh the snapshots (this module's docstring)"


def test_lineage_plus_help_lists_every_command_with_its_one_line_help(fixed_terminal: None) -> None:
    parser = build()
    assert list(_subcommands(parser)) == ALL_COMMANDS
    [action] = [a for a in parser._actions if isinstance(a, argparse._SubParsersAction)]
    helps = {choice.dest: choice.help for choice in action._choices_actions}
    assert list(helps) == ALL_COMMANDS and all(h and "\n" not in h for h in helps.values())
    text = parser.format_help()
    listed = [line.split()[0] for line in text.splitlines() if line.startswith("    ") and line.split()]
    assert [name for name in listed if name in ALL_COMMANDS] == ALL_COMMANDS
    for code in commands.EXIT_CODES:
        assert f"\n  {code}  {commands.EXIT_CODES[code]}" in text
    _check_snapshot("lineage-plus", text)


@pytest.mark.parametrize("name", ALL_COMMANDS)
def test_each_command_has_help_on_every_option_an_example_and_its_exit_codes(
    fixed_terminal: None, name: str
) -> None:
    command = _subcommands(build())[name]
    silent = [a.option_strings or [a.dest] for a in command._actions if not a.help]
    assert silent == [], f"{name}: options without help"
    assert command.epilog and f"examples:\n  lineage-plus {name}" in command.epilog.replace(
        "lineage-plus --events lineage/events.jsonl ", "lineage-plus "
    ).replace("lineage-plus --marquez http://marquez:5000 ", "lineage-plus ")
    assert "exit codes:\n  0  " in command.epilog
    text = command.format_help()
    flat = " ".join(text.split())
    lost = [a.help for a in command._actions if " ".join(str(a.help).split()) not in flat]
    assert lost == [], "help shown otherwise than written (rich markup?)"
    _check_snapshot(name, text)


def test_only_failed_upstream_and_diff_document_their_own_exit_codes(fixed_terminal: None) -> None:
    own = {
        name: [
            c for c in (commands.CHANGE_FOUND, commands.FAILED_UPSTREAM) if f"\n  {c}  " in (p.epilog or "")
        ]
        for name, p in _subcommands(build()).items()
    }
    assert {name: codes for name, codes in own.items() if codes} == {
        "failed-upstream": [commands.FAILED_UPSTREAM],
        "diff": [commands.CHANGE_FOUND],
    }
    assert len(set(commands.EXIT_CODES)) == len(commands.EXIT_CODES) == 5


def test_the_console_script_prints_the_same_help_whatever_the_terminal() -> None:
    env = {**{k: v for k, v in os.environ.items() if k != "FORCE_COLOR"}, **FIXED}
    script = Path(sys.executable).parent / "lineage-plus"
    done = subprocess.run([str(script), "--help"], capture_output=True, text=True, timeout=120, env=env)
    assert done.returncode == 0 and "\x1b[" not in done.stdout
    assert done.stdout == (SNAPSHOTS / "lineage-plus.txt").read_text()
    wide = subprocess.run(
        [str(script), "--help"], capture_output=True, text=True, timeout=120, env={**env, "COLUMNS": "180"}
    )
    assert wide.stdout != done.stdout  # the width does change it: the snapshot's fixed width matters


def test_a_command_another_module_adds_gets_the_same_help_and_epilog() -> None:
    parser = argparse.ArgumentParser(prog="lineage-plus")
    sub = parser.add_subparsers(dest="command")
    added = commands.add_command(
        sub, "refold", help="fold the store again", example="refold --since 2026-01-01"
    )
    assert added.epilog == (
        "examples:\n  lineage-plus refold --since 2026-01-01\n\n"
        "exit codes:\n  0  an answer was found (or the work was done)\n"
        "  1  an error (the source or a DAG file could not be read, an event could not be sent)\n"
        "  2  a usage mistake (bad arguments, an unknown dataset or job)"
    )
    assert added.description == "Fold the store again." and added.formatter_class is commands.HelpFormatter
    with pytest.raises(ValueError, match="one line"):
        commands.add_command(sub, "bad", help="two\nlines", example="bad")
    with pytest.raises(ValueError, match="example"):
        commands.add_command(sub, "bad2", help="no example", example=[])


def test_the_readme_shows_the_help_as_it_is() -> None:
    readme = (Path(__file__).resolve().parents[2] / "README.md").read_text()
    shown = readme.split("$ lineage-plus --help\n", 1)[1].split("\n```", 1)[0] + "\n"
    assert shown == (SNAPSHOTS / "lineage-plus.txt").read_text(), "copy the snapshot into the README"
