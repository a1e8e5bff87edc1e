"""How a ``lineage-plus`` subcommand is declared, so every command looks and reads the same.

A module that brings a command registers it with :func:`add_command`: a one-line help (what
``lineage-plus --help`` lists), an example (the epilog of ``lineage-plus COMMAND --help``) and the exit
codes, with help text formatted by ``rich-argparse`` as Airflow's own CLI does. Options take a help
text each (``tests/cli/test_help.py`` fails on one that has none); :func:`add_format` gives ``--format``
the same wording everywhere.

Exit codes (docs/cli.md) are the constants below: scripts may rely on them.
"""

from __future__ import annotations

import argparse
from collections.abc import Sequence

from rich_argparse import RawDescriptionRichHelpFormatter

#: an answer was found (or the work was done)
OK = 0
#: an error: the source or a DAG file could not be read, an event could not be sent
ERROR = 1
#: a usage mistake: bad or missing arguments, an unknown dataset or job
USAGE = 2
#: ``diff --fail-on``: a change of that severity was found
CHANGE_FOUND = 3
#: ``failed-upstream``: an upstream job whose latest run failed, or a failed assertion, was found
FAILED_UPSTREAM = 4

EXIT_CODES = {
    OK: "an answer was found (or the work was done)",
    ERROR: "an error (the source or a DAG file could not be read, an event could not be sent)",
    USAGE: "a usage mistake (bad arguments, an unknown dataset or job)",
    CHANGE_FOUND: "diff --fail-on: a change of that severity was found",
    FAILED_UPSTREAM: "failed-upstream: a failed upstream job or assertion was found",
}

FORMAT_HELP = {
    "text": "text for a terminal",
    "json": "JSON (docs/graph.md)",
    "markdown": "Markdown for a pull-request comment",
    "mermaid": "a Mermaid flowchart",
    "dot": "a Graphviz DOT graph",
}


class HelpFormatter(RawDescriptionRichHelpFormatter):
    """rich-argparse's formatter (Airflow's CLI uses it), keeping the examples' line breaks; help texts
    are plain text, not rich markup (``[lineage_plus] event_log_path`` is a config section, not a style)."""

    help_markup = False
    text_markup = False


def exit_codes_text(codes: Sequence[int] = (OK, ERROR, USAGE)) -> str:
    """The epilog lines that list ``codes`` with their meaning."""
    return "exit codes:\n" + "\n".join(f"  {code}  {EXIT_CODES[code]}" for code in codes)


def add_command(
    subcommands: argparse._SubParsersAction[argparse.ArgumentParser],
    name: str,
    *,
    help: str,
    example: str | Sequence[str],
    exit_codes: Sequence[int] = (OK, ERROR, USAGE),
    description: str | None = None,
) -> argparse.ArgumentParser:
    """Add the subcommand ``name``: ``help`` is its line in ``lineage-plus --help``; ``example`` (one
    command line or several, without the leading ``lineage-plus``) and ``exit_codes`` are its epilog."""
    if not help or "\n" in help:
        raise ValueError(f"{name}: the help of a command is one line")
    if not example:
        raise ValueError(f"{name}: a command shows an example")
    examples = [example] if isinstance(example, str) else list(example)
    epilog = "examples:\n" + "\n".join(f"  lineage-plus {line}" for line in examples)
    return subcommands.add_parser(
        name,
        help=help,
        description=description or help[:1].upper() + help[1:] + ".",
        epilog=f"{epilog}\n\n{exit_codes_text(exit_codes)}",
        formatter_class=HelpFormatter,
    )


def add_format(parser: argparse.ArgumentParser, choices: Sequence[str], default: str = "text") -> None:
    """``--format`` with one help text listing what each choice gives."""
    parts = "; ".join(f"{choice}: {FORMAT_HELP[choice]}" for choice in choices)
    parser.add_argument(
        "--format",
        choices=tuple(choices),
        default=default,
        help=f"output format (default: {default}); {parts}",
    )
