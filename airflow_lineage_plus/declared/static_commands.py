"""The ``publish-static`` and ``diff`` subcommands of ``lineage-plus`` (wired in by its CLI module).

Exit status of ``diff``: 0 with an answer, 3 when ``--fail-on`` matched a change, 1 when a version could
not be read (unknown git ref, a DAG file that does not import, a parse that took too long), 2 for bad
arguments. ``publish-static``: 0 when every event was sent, 1 when a DAG file did not import or an event
could not be sent, 2 for bad arguments. See docs/static-lineage.md.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import sys
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from airflow_lineage_plus.declared import render
from airflow_lineage_plus.declared.versions import PARSE_TIMEOUT, materialize, read_both
from airflow_lineage_plus.exceptions import SourceUnavailable, StaticLineageError, UsageError
from airflow_lineage_plus.graph import LineageQueries, LineageSource
from airflow_lineage_plus.progress import progress

if TYPE_CHECKING:  # the extraction imports the OpenLineage client: only the commands that parse DAGs need it
    from airflow_lineage_plus.declared.extract import StaticLineage

#: Exit status of ``diff`` when a change matched ``--fail-on``.
FAILED_ON_CHANGE = 3  # lineage-plus's exit codes: airflow_lineage_plus/cli/commands.py, docs/cli.md
Result = tuple[int, str, str]


def _common(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--namespace", help="job namespace (default: [openlineage] namespace)")
    parser.add_argument(
        "--namespace-suffix",
        default="",
        help="appended to the job namespace, e.g. '-ci': jobs of CI runs never mix with production's",
    )
    parser.add_argument(
        "--no-resolve-connections",
        dest="resolve_connections",
        action="store_false",
        help="name connection tables x-sql-conn://<conn_id> without looking the connections up",
    )


def add_publish_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--dags", required=True, help="the DAG folder (or one DAG file's folder) to parse")
    _common(parser)
    parser.add_argument("--dry-run", action="store_true", help="print the JobEvents instead of sending them")
    parser.add_argument(
        "--format", choices=("text", "json"), default="text", help="output format: text (default) or JSON"
    )


def add_diff_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--base", required=True, help="a DAG folder, or a git ref of --repo")
    parser.add_argument("--head", required=True, help="a DAG folder, or a git ref of --repo")
    parser.add_argument("--repo", default=".", help="the git repository refs are read from (default: .)")
    parser.add_argument("--dags-path", default="dags", help="the DAG folder inside the repository")
    _common(parser)
    parser.add_argument(
        "--format",
        choices=("text", "json", "markdown"),
        default="text",
        help="output format (default: text); markdown: a pull-request comment with a Mermaid picture",
    )
    parser.add_argument(
        "--fail-on", choices=("breaking", "any"), help=f"exit with {FAILED_ON_CHANGE} on such a change"
    )
    parser.add_argument("--depth", type=int, default=10, help="how far downstream impact is followed")
    parser.add_argument("--no-impact", action="store_true", help="do not read the current lineage graph")
    parser.add_argument("--parse-timeout", type=float, default=PARSE_TIMEOUT, help="seconds per version")


def publish_command(args: argparse.Namespace) -> Result:
    from airflow_lineage_plus.declared.extract import default_namespace, read_dag_folder
    from airflow_lineage_plus.declared.publish import publish

    if not Path(args.dags).is_dir():
        return 2, "", f"lineage-plus: --dags {args.dags} is not a directory\n"
    if not (args.events or args.marquez or args.dry_run) and _openlineage_disabled():
        return 1, "", "lineage-plus: OpenLineage is disabled ([openlineage] disabled): nothing published\n"
    namespace = (args.namespace or default_namespace()) + args.namespace_suffix
    with (
        contextlib.redirect_stdout(sys.stderr),  # Airflow logs to stdout: keep it for the answer
        progress(f"parsing the DAG files in {args.dags}", unit="files"),
    ):
        found = read_dag_folder(args.dags, namespace=namespace, resolve_connections=args.resolve_connections)
    err = _notes(found)
    if args.dry_run:
        from airflow_lineage_plus.deliver.event_budget import enforce
        from airflow_lineage_plus.deliver.serialize import dumps

        lines = [dumps(enforce(event)).decode() for event in found.events]
        return (1 if found.import_errors else 0), "".join(f"{line}\n" for line in lines), err
    with contextlib.redirect_stdout(sys.stderr):
        delivery = publish(
            found.events,
            events_log=args.events,
            marquez=args.marquez,
            api_key=args.api_key,
            timeout=args.timeout if args.timeout is not None else 5.0,
        )
    return (1 if delivery.failed or found.import_errors else 0), _published(found, delivery, args.format), err


def _published(found: StaticLineage, delivery: Any, form: str) -> str:
    """What publish-static did, as text or JSON."""
    summary = {
        "destination": delivery.destination,
        "dags": found.dag_count,
        "jobs": len(found.events),
        "sent": delivery.sent,
        "failed": delivery.failed,
        "error": delivery.error,
        "importErrors": found.import_errors,
        "unresolvedConnections": list(found.unresolved_connections),
    }
    if form == "json":
        return json.dumps(summary, indent=2) + "\n"
    out = (
        f"published the declared lineage of {delivery.sent} tasks ({found.dag_count} DAGs) "
        f"to {delivery.destination}"
    )
    if delivery.failed:
        out += f"\n{delivery.failed} could not be sent: {delivery.error}"
    return out + "\n"


def _openlineage_disabled() -> bool:
    from airflow.providers.openlineage import conf as openlineage_conf

    return bool(openlineage_conf.is_disabled())


def _notes(found: StaticLineage) -> str:
    """stderr lines: DAG files that did not import, connections that could not be looked up."""
    lines = [f"lineage-plus: {path}: {error}" for path, error in sorted(found.import_errors.items())]
    if found.unresolved_connections:
        names = ", ".join(found.unresolved_connections)
        lines.append(
            f"lineage-plus: connections not found here ({names}): their tables are named "
            "x-sql-conn://<conn_id>; define them (AIRFLOW_CONN_<ID>, host only) to name them as runs do"
        )
    return "".join(f"{line}\n" for line in lines)


def diff_command(args: argparse.Namespace, open_graph: Callable[[], LineageSource]) -> Result:
    """``lineage-plus diff``; ``open_graph`` opens the current lineage graph (for impact)."""
    from airflow_lineage_plus.declared.compare import compare  # the OpenLineage client: only here

    if args.depth < 0:
        return 2, "", "lineage-plus: --depth must be 0 or more\n"
    try:
        with (
            tempfile.TemporaryDirectory(prefix="lineage-plus-diff-") as work,
            progress(f"parsing {args.base} and {args.head}", total=2, unit="steps") as bar,
        ):
            repo, workdir = Path(args.repo), Path(work)
            base = materialize(args.base, repo=repo, dags_path=args.dags_path, workdir=workdir)
            head = materialize(args.head, repo=repo, dags_path=args.dags_path, workdir=workdir)
            old, new = read_both(
                base,
                head,
                namespace=args.namespace,
                resolve_connections=args.resolve_connections,
                timeout=args.parse_timeout,
            )
            bar.advance(2)
    except StaticLineageError as exc:
        return 1, "", f"lineage-plus: {exc}\n"
    err = "".join(
        _notes(found).replace("lineage-plus: ", f"lineage-plus: {which}: ")
        for which, found in (("base", old), ("head", new))
    )
    if old.import_errors or new.import_errors:
        return (
            1,
            "",
            err + "lineage-plus: fix the DAG files above: lineage is compared only between DAGs that parse\n",
        )
    answer = compare(
        _suffixed(old.events, args.namespace_suffix), _suffixed(new.events, args.namespace_suffix)
    )
    answer["base"] = {"label": base.label, "dags": old.dag_count}
    answer["head"] = {"label": head.label, "dags": new.dag_count}
    answer["unresolvedConnections"] = sorted(
        set(old.unresolved_connections) | set(new.unresolved_connections)
    )
    with progress("weighing the downstream impact", total=1, unit="steps") as bar:
        _impact(answer, args, open_graph)
        bar.advance()
    rendered = {
        "json": lambda: json.dumps(answer, indent=2),
        "markdown": lambda: render.render_markdown(answer),
    }
    out = rendered.get(args.format, lambda: render.render_text(answer))()
    failing = answer["changes"] if args.fail_on == "any" else []
    if args.fail_on == "breaking":
        failing = [change for change in answer["changes"] if change["severity"] == "breaking"]
    failed = bool(failing)
    return (FAILED_ON_CHANGE if failed else 0), out + "\n", err


def _suffixed(events: list[Any], suffix: str) -> list[Any]:
    for event in events:
        event["job"]["namespace"] += suffix
    return events


def _impact(
    answer: dict[str, Any], args: argparse.Namespace, open_graph: Callable[[], LineageSource]
) -> None:
    """Add the downstream impact from the current graph; say why when it cannot be read."""
    from airflow_lineage_plus.declared.change_impact import add_impact

    if args.no_impact:
        answer["impactNote"] = "--no-impact was given"
        return
    try:
        source = open_graph()
    except (SourceUnavailable, UsageError, OSError) as exc:
        answer["impactNote"] = f"the current lineage graph cannot be read: {exc}"
        return
    try:
        add_impact(answer, LineageQueries(source), args.depth)
    except SourceUnavailable as exc:
        answer["impactNote"] = f"the current lineage graph cannot be read: {exc}"
    finally:
        source.close()
