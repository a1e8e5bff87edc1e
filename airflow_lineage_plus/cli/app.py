"""One ``lineage-plus`` invocation: the parsed command run against the lineage source.

Every graph question takes ``--as-of TIME`` (the answer from what the events up to then said) and
``--include-retired`` (also the edges a job no longer reports). An event log given to ``--events`` is
scanned for a question about one node (:mod:`airflow_lineage_plus.graph.scan`) and folded whole for the
others; ``lineage-plus import`` puts it in the lineage store for repeated questions.

Exit status (:mod:`.commands`, docs/cli.md): 0 with an answer; 2 for bad arguments or an unknown dataset
or job; 1 when the source cannot be read; 4 when ``failed-upstream`` found a failed job. See docs/graph.md
for the JSON contract. ``publish-static`` and ``diff`` (static
lineage, docs/static-lineage.md) are owned by :mod:`airflow_lineage_plus.declared.static_commands`.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from collections.abc import Callable, Sequence
from datetime import datetime, timezone
from pathlib import Path
from typing import TYPE_CHECKING, Any

from airflow_lineage_plus import conf, pictures
from airflow_lineage_plus.act import freshness
from airflow_lineage_plus.cli import commands as codes
from airflow_lineage_plus.cli import store_commands
from airflow_lineage_plus.cli import text_report as text
from airflow_lineage_plus.cli import what_changed_command as what_changed
from airflow_lineage_plus.cli.parser import DATASET_ONLY, QUICK, build
from airflow_lineage_plus.declared import static_commands as declared
from airflow_lineage_plus.deliver import replay
from airflow_lineage_plus.exceptions import NodeNotFound, SourceUnavailable, UsageError
from airflow_lineage_plus.graph import LineageQueries
from airflow_lineage_plus.graph.queries import node_dict
from airflow_lineage_plus.graph.source import LineageSource
from airflow_lineage_plus.node_ids import dataset_id, job_id
from airflow_lineage_plus.sources import open_configured_source
from airflow_lineage_plus.timestamps import to_micros

if TYPE_CHECKING:  # imported only where --airflow is given: a local answer needs no HTTP client
    from airflow_lineage_plus.cli import remote


def _target(args: argparse.Namespace) -> str:
    dataset = args.namespace is not None or args.name is not None
    job = getattr(args, "job_namespace", None) is not None or getattr(args, "job", None) is not None
    if dataset == job:
        wanted = "--namespace NS --name NAME" + (
            "" if args.command in DATASET_ONLY else " or --job-namespace NS --job NAME"
        )
        raise UsageError(f"{args.command} needs {wanted}")
    if dataset:
        if not args.namespace or not args.name:
            raise UsageError("a dataset needs both --namespace and --name")
        return dataset_id(args.namespace, args.name)
    if not args.job_namespace or not args.job:
        raise UsageError("a job needs both --job-namespace and --job")
    return job_id(args.job_namespace, args.job)


def _open(args: argparse.Namespace) -> LineageSource:
    try:
        return open_configured_source(
            events=args.events or None,
            marquez=args.marquez or None,
            api_key=args.api_key,
            timeout=args.timeout,
            quick=args.command in QUICK,
        )
    except ImportError as exc:
        raise UsageError("give --events PATH or --marquez URL (Airflow is not importable here)") from exc


def _proposed(value: str | None) -> Any:
    if value is None:
        return None
    path = Path(value)
    raw = path.read_text() if path.is_file() else value
    try:
        return json.loads(raw)
    except json.JSONDecodeError as exc:
        raise UsageError(f"--proposed is neither a JSON file nor JSON: {exc}") from exc


def _report(queries: LineageQueries, args: argparse.Namespace) -> dict[str, Any]:
    source = queries.source
    datasets, jobs, graph, failed = source.summary()
    return {
        "source": args.events or args.marquez or "configured",
        "datasets": datasets,
        "jobs": jobs,
        "failedJobs": [node_dict(graph, job, 0) for job in failed],
        "problems": dict(source.problems),
        "nameGroups": len(queries.lint_names()["groups"]),
    }


def _as_of(args: argparse.Namespace) -> int | None:
    value = getattr(args, "as_of", None)
    if value is None:
        return None
    try:
        return to_micros(value)
    except ValueError as exc:
        raise UsageError(f"--as-of {value!r} is not an ISO-8601 time (e.g. 2026-03-01T12:00:00Z)") from exc


def run(argv: Sequence[str] | None = None) -> tuple[int, str, str]:
    """(exit status, stdout, stderr) of one invocation."""
    parser = build()
    try:
        args = parser.parse_args(argv)
    except SystemExit as exc:
        return int(exc.code or 0), "", ""
    if args.command == "replay":  # sends the spool on: to Marquez when one is named, else to the store
        if args.marquez or conf.marquez_url():
            return replay.command(args)
        return store_commands.flush_spool(args.event_log or args.events, args.store, args.dry_run)
    if args.command in store_commands.COMMANDS:
        return store_commands.run(args)
    if args.command == "publish-static":  # parses DAGs and sends their declared lineage
        return declared.publish_command(args)
    if args.command == "diff":  # compares two versions of DAGs, with impact over the current graph
        return declared.diff_command(args, lambda: _open(args))
    try:
        target = None if args.command in ("lint-names", "report", "freshness") else _target(args)
        as_of = _as_of(args)
        if args.airflow:
            return _remote(args, target, as_of)
        source = _open(args)
    except UsageError as exc:
        return 2, "", f"lineage-plus: {exc}\n"
    except (SourceUnavailable, OSError) as exc:
        return 1, "", f"lineage-plus: cannot read the lineage source: {exc}\n"
    queries = LineageQueries(source)
    try:
        answer, rendered = _answer(queries, args, target, as_of)
    except (NodeNotFound, UsageError, ValueError) as exc:
        return 2, "", f"lineage-plus: {exc}\n"
    except SourceUnavailable as exc:
        return 1, "", f"lineage-plus: cannot read the lineage source: {exc}\n"
    finally:
        source.close()
    err = ""
    if source.problems:
        err = (
            "lineage-plus: skipped or trimmed input: "
            + ", ".join(f"{k}={v}" for k, v in sorted(source.problems.items()))
            + "\n"
        )
    return _status(args, answer), _output(args, answer, rendered) + "\n", err


def _remote(args: argparse.Namespace, target: str | None, as_of: int | None) -> tuple[int, str, str]:
    """One question asked of the remote Airflow of ``--airflow`` (:mod:`.remote`), with the user's rights."""
    from airflow_lineage_plus.cli import remote

    if args.command not in remote.COMMANDS:
        raise UsageError(
            f"{args.command} reads a local source; --airflow answers " + ", ".join(sorted(remote.COMMANDS))
        )
    if args.command == "freshness" and (args.at or args.notify):
        raise UsageError("--airflow answers freshness now: without --at or --notify")
    token = args.token or os.environ.get("LINEAGE_PLUS_TOKEN", "")
    queries = remote.RemoteQueries(args.airflow, token, args.timeout)
    try:
        if args.command == "freshness":
            answer: Any = queries.freshness()
            rendered = text.render_freshness(answer)
        else:
            answer, rendered = _answer(queries, args, target, as_of)
    except (NodeNotFound, UsageError, ValueError) as exc:
        return 2, "", f"lineage-plus: {exc}\n"
    except SourceUnavailable as exc:
        return 1, "", f"lineage-plus: cannot read the lineage source: {exc}\n"
    finally:
        queries.close()
    return _status(args, answer), _output(args, answer, rendered) + "\n", ""


def _output(args: argparse.Namespace, answer: Any, rendered: str) -> str:
    """The answer in the asked ``--format`` (``what-changed`` draws its own picture)."""
    form = args.format
    if form == "json":
        return json.dumps(answer, indent=2, ensure_ascii=False)
    if args.command == what_changed.COMMAND:
        return rendered
    if form == "mermaid":
        return pictures.graph_picture(answer).mermaid()
    if form == "dot":
        return pictures.graph_picture(answer).dot()
    return rendered


def _status(args: argparse.Namespace, answer: Any) -> int:
    """The exit status of an answer: ``failed-upstream`` says whether it found a failed job or a failed
    assertion (the target's own included)."""
    if args.command == "failed-upstream" and (answer["nodes"] or "failedAssertions" in answer["target"]):
        return codes.FAILED_UPSTREAM
    return codes.OK


def _at(value: str | None) -> datetime | None:
    if value is None:
        return None
    try:
        moment = datetime.fromisoformat(value)
    except ValueError as exc:
        raise UsageError(f"--at is not an ISO-8601 time: {value!r}") from exc
    return moment if moment.tzinfo else moment.replace(tzinfo=timezone.utc)


def _freshness(queries: LineageQueries, args: argparse.Namespace) -> tuple[Any, str]:
    at = _at(args.at)
    answer = freshness.report(queries.source, at)
    rendered = text.render_freshness(answer)
    if args.notify:
        answer["alerts"] = _notify_breaches(queries.source, at)
        rendered += "\n" + ", ".join(f"{k}: {v}" for k, v in answer["alerts"].items())
    return answer, rendered


def _notify_breaches(source: LineageSource, at: datetime | None) -> dict[str, int]:
    """Send the alerts of the current breaches (each once, whoever asks); counts of what happened."""
    from airflow_lineage_plus import conf
    from airflow_lineage_plus.act.notifiers import configured_factory, send_once
    from airflow_lineage_plus.claims import open_alert_claims

    factory = configured_factory()
    if factory is None:
        raise UsageError("--notify needs [lineage_plus] alert_notifier (docs/alerts.md)")
    _, found = freshness.breaches(source, at)
    alerts = freshness.freshness_alerts(
        source, found, base_url=conf.airflow_base_url(), recipients=conf.alert_recipients()
    )
    return send_once(alerts, open_alert_claims(), factory).counts()


def _answer(
    queries: LineageQueries | remote.RemoteQueries,
    args: argparse.Namespace,
    target: str | None,
    as_of: int | None,
) -> tuple[Any, str]:
    command = args.command
    if command in ("freshness", "lint-names", "report"):
        assert isinstance(queries, LineageQueries)  # remote.COMMANDS leaves them to the local source
        if command == "freshness":
            return _freshness(queries, args)
        if command == "lint-names":
            answer = queries.lint_names()
            return answer, text.render_lint(answer)
        answer = _report(queries, args)
        return answer, text.render_report(answer)
    assert target is not None
    if command == what_changed.COMMAND:
        return what_changed.answer(queries, args, target, as_of)
    if command == "schema-diff":
        answer = queries.schema_diff(target, _proposed(args.proposed), as_of=as_of)
        return answer, text.render_schema_diff(answer)
    if args.depth < 0:
        raise UsageError("--depth must be 0 or more")
    if command == "columns":
        answer = queries.columns(target, args.column, args.depth, as_of=as_of)
        return answer, text.render_columns(answer)
    methods: dict[str, Callable[..., dict[str, Any]]] = {
        "upstream": queries.upstream,
        "downstream": queries.downstream,
        "failed-upstream": queries.failed_upstream,
        "impact": queries.impact,
    }
    method = methods[command]
    answer = method(
        target,
        args.depth,
        as_of=as_of,
        include_retired=args.include_retired,
        include_declared=args.include_declared,
    )
    return answer, text.render_graph(f"{command} of", answer)


def main(argv: Sequence[str] | None = None) -> int:
    code, out, err = run(argv)
    sys.stdout.write(out)
    sys.stderr.write(err)
    return code


if __name__ == "__main__":
    raise SystemExit(main())
