"""The ``lineage-plus`` argument parser: the global options and every command, each with its help, an
example and its exit codes (declared through :mod:`airflow_lineage_plus.cli.commands`)."""

from __future__ import annotations

import argparse

from airflow_lineage_plus.cli import commands as c
from airflow_lineage_plus.cli import store_commands
from airflow_lineage_plus.cli import what_changed_command as what_changed
from airflow_lineage_plus.declared import static_commands as declared
from airflow_lineage_plus.deliver import replay

DATASET_ONLY = {"failed-upstream", "impact", "schema-diff", "columns", what_changed.COMMAND}
#: what a quick scan of an event log answers (:mod:`airflow_lineage_plus.graph.scan`); others fold it whole
QUICK = {"upstream", "downstream", "failed-upstream", "impact", "schema-diff"}
WALKS = {"upstream", "downstream", "failed-upstream", "impact"}
PICTURES = ("text", "json", "mermaid", "dot")
_MART = "--namespace warehouse --name analytics.marts.fct_daily_orders"
_LOG = "--events lineage/events.jsonl"

#: command -> (one-line help, examples); the graph questions, in the order ``--help`` lists them
QUESTIONS = {
    "upstream": (
        "what a dataset or job is built from, hop by hop and across asset-triggered DAGs, with each job's "
        "latest run",
        [f"{_LOG} upstream {_MART} --depth 3", f"upstream {_MART} --format mermaid"],
    ),
    "downstream": (
        "what reads a dataset or job's outputs, hop by hop",
        ["downstream --job-namespace airflow --job ecommerce_orders.load_stg_orders --format dot"],
    ),
    "failed-upstream": (
        "upstream jobs (and triggering DAGs) whose latest run failed, datasets whose assertions failed "
        "(exit code 4 if any)",
        [f"failed-upstream {_MART}", f"failed-upstream {_MART} --format json || echo 'upstream failed'"],
    ),
    "impact": (
        "what a change to a dataset reaches downstream, its impact level and owners to notify",
        ["impact --namespace s3://raw-data-lake --name orders --format mermaid"],
    ),
    "schema-diff": (
        "how a dataset's schema changed between its last two versions, or against a proposed one",
        [f"schema-diff {_MART}", f"schema-diff {_MART} --proposed schema.json"],
    ),
    "columns": (
        "where a column of a dataset comes from, column by column",
        [f"columns {_MART} --column total_usd --depth 5"],
    ),
    "lint-names": (
        "datasets whose names look like spellings of one dataset (split islands)",
        [f"{_LOG} lint-names"],
    ),
    "report": (
        "a summary of the source: datasets, jobs, failed jobs and input problems",
        [f"{_LOG} report --format json"],
    ),
}


def build() -> argparse.ArgumentParser:
    """The whole ``lineage-plus`` parser."""
    parser = argparse.ArgumentParser(
        prog="lineage-plus",
        description="Ask the OpenLineage lineage graph questions (upstream, downstream, failed upstream,\n"
        "impact, ...); check, publish and replay lineage.",
        epilog="examples:\n"
        f"  lineage-plus {_LOG} failed-upstream {_MART}\n"
        "  lineage-plus COMMAND --help\n\n"
        + c.exit_codes_text(sorted(c.EXIT_CODES))
        + "\n\nSee docs/cli.md for the formats and docs/graph.md for the JSON contract.",
        formatter_class=c.HelpFormatter,
    )
    _global_options(parser)
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND", title="commands")
    for name, (text, examples) in QUESTIONS.items():
        codes = (c.OK, c.ERROR, c.USAGE) + ((c.FAILED_UPSTREAM,) if name == "failed-upstream" else ())
        command = c.add_command(sub, name, help=text, example=examples, exit_codes=codes)
        _question_arguments(command, name)
    _other_commands(sub)
    _store_and_change_commands(sub)
    return parser


def _global_options(parser: argparse.ArgumentParser) -> None:
    where = parser.add_mutually_exclusive_group()
    where.add_argument("--events", help="event log (newline-delimited OpenLineage JSON)")
    where.add_argument("--marquez", help="Marquez base URL, e.g. http://localhost:5000")
    where.add_argument(
        "--airflow",
        metavar="URL",
        help="ask a remote Airflow's Lineage view (its API server's base URL), with --token's rights",
    )
    parser.add_argument("--api-key", help="Marquez API key (sent as a Bearer token)")
    parser.add_argument(
        "--token", help="Airflow token for --airflow (POST URL/auth/token; default: $LINEAGE_PLUS_TOKEN)"
    )
    parser.add_argument(
        "--timeout", type=float, default=None, help="Marquez or --airflow request timeout in seconds"
    )


def _other_commands(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    fresh = c.add_command(
        sub,
        "freshness",
        help="datasets older than their SLO, and the job responsible",
        example=[f"{_LOG} freshness", "freshness --at 2026-03-01T09:00:00Z --notify"],
    )
    c.add_format(fresh, ("text", "json"))
    fresh.add_argument("--at", help="judge freshness at this ISO-8601 time instead of now")
    fresh.add_argument(
        "--notify",
        action="store_true",
        help="alert the owners of each breach once ([lineage_plus] alert_notifier)",
    )
    # -- replay (owned by airflow_lineage_plus.deliver.replay; docs/reliability.md) --
    replaying = c.add_command(
        sub,
        "replay",
        help="send the spool's events to the lineage store (or to Marquez, what it missed)",
        example="replay --dry-run",
    )
    replay.add_arguments(replaying)
    store_commands.add_store_option(replaying)
    # -- static lineage (owned by airflow_lineage_plus.declared; docs/static-lineage.md) --
    declared.add_publish_arguments(
        c.add_command(
            sub,
            "publish-static",
            help="send the lineage DAG files declare, before they run (imports the DAG files)",
            example=[f"{_LOG} publish-static --dags dags/", "publish-static --dags dags/ --dry-run"],
        )
    )
    declared.add_diff_arguments(
        c.add_command(
            sub,
            "diff",
            help="what a change to DAG files does to lineage, and whom it affects (imports the DAG files)",
            example=[
                "diff --base origin/main --head HEAD --format markdown > comment.md",
                "diff --base old_dags/ --head dags/ --fail-on breaking",
            ],
            exit_codes=(c.OK, c.ERROR, c.USAGE, c.CHANGE_FOUND),
        )
    )


def _store_and_change_commands(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """``what-changed``, and the lineage store's ``import``, ``refold`` and ``retention``."""
    # -- what changed upstream (owned by cli/what_changed_command.py; docs/what-changed.md) --
    changed = c.add_command(
        sub,
        what_changed.COMMAND,
        help=what_changed.HELP,
        example=list(what_changed.EXAMPLES),
        description=what_changed.DESCRIPTION,
    )
    what_changed.add_arguments(changed)
    c.add_format(changed, what_changed.FORMATS)
    # -- the lineage store (owned by airflow_lineage_plus.cli.store_commands; docs/graph.md) --
    store_commands.add_import_arguments(
        c.add_command(
            sub,
            "import",
            help="load a JSONL event log into the lineage store (again: adds nothing)",
            example=[
                "import $AIRFLOW_HOME/lineage_plus/events.jsonl",
                "import events.jsonl --store postgresql+psycopg://u@db/lineage",
            ],
            description="Load newline-delimited OpenLineage events into the lineage store. Events already "
            "stored (the same bytes) are skipped, so a log can be imported again after it grew.",
        )
    )
    store_commands.add_store_option(
        c.add_command(
            sub,
            "refold",
            help="fold every raw event of the lineage store again (after an upgrade changed a rule)",
            example=["refold", "refold --store postgresql+psycopg://u@db/lineage"],
            description="Empty the lineage store's folded state (the tables the graph reads) and fold every "
            "raw event it keeps again, in one transaction: writers wait meanwhile (the transport spools). "
            "Facts of raw events retention deleted are not folded again.",
        )
    )
    store_commands.add_retention_arguments(
        c.add_command(
            sub,
            "retention",
            help="delete raw events older than the retention window (current runs kept)",
            example=["retention --days 90"],
            description="Delete raw events older than --days (default [lineage_plus] retention_days) in "
            "small batches, keeping each job's current runs: the graph and the latest runs survive.",
        )
    )


def _question_arguments(command: argparse.ArgumentParser, name: str) -> None:
    """The options of a graph question ``name``."""
    c.add_format(command, PICTURES if name in WALKS else ("text", "json"))
    if name in ("lint-names", "report"):
        return
    command.add_argument("--as-of", help="answer as of this time (ISO-8601, e.g. 2026-03-01T12:00:00Z)")
    command.add_argument("--namespace", help="dataset namespace")
    command.add_argument("--name", help="dataset name")
    if name not in DATASET_ONLY:
        command.add_argument("--job-namespace", help="job namespace")
        command.add_argument("--job", help="job name")
    if name != "schema-diff":
        command.add_argument(
            "--depth", type=int, default=10, help="how many hops to follow (default: 10; 0: the node only)"
        )
    if name in WALKS:
        command.add_argument(
            "--include-retired", action="store_true", help="also edges the job no longer reports"
        )
        command.add_argument(
            "--include-declared",
            action=argparse.BooleanOptionalAction,
            default=True,
            help="follow edges declared in DAG code of jobs that have not run yet (default: on)",
        )
    if name == "columns":
        command.add_argument("--column", required=True, help="the column of the dataset to trace")
    if name == "schema-diff":
        command.add_argument(
            "--proposed",
            help="proposed schema: a JSON file or inline JSON ([{name, type}] or {name: type})",
        )
