"""``lineage-plus``: ask the lineage graph questions from a terminal.

    lineage-plus [--events PATH | --marquez URL [--api-key KEY] | --airflow URL [--token T]] COMMAND [options]

:mod:`.parser` declares the commands and their options, :mod:`.commands` how a command is declared (help,
example, exit codes: modules that bring a command use it), :mod:`.app` runs one invocation. Exit codes and
formats: docs/cli.md.
"""

from __future__ import annotations

from airflow_lineage_plus.cli.app import main, run

__all__ = ["main", "run"]
