"""Hostile strings through the recommended transport: time per event, and whether the event was kept.

    .venv/bin/python benchmarks/redaction_bench.py [--repeat 3] [--baseline DIR] [--baseline-timeout 300]
    .venv/bin/python benchmarks/redaction_bench.py --long-match [--repeat 3]

Each shape is one event carrying the string in a facet, emitted through ``EventLogTransport`` (fixed
limits, redaction, values policy, size budget, the locked write to a log in a temporary directory), so
the figure is what a task pays. The shapes: those of issue 27 (``eyJaaaaa.eyJaaaaa.`` repeated, which
made the old scan rescan from every JWT; ``a…a.ghp_…``; a flood of real secrets) and near misses of every
rule (a URI scheme and user with no ``@``, names with no value, token prefixes one short, a private key
never closed, ...). ``kept`` says whether the event reached the log. Goal: every shape, and 1 MB of any
shape, within 100 ms with the event kept.

``--baseline DIR`` runs the same shapes, in the same run, against another copy of the package (``DIR``
holds its ``airflow_lineage_plus``, e.g. ``git archive main airflow_lineage_plus | tar -x -C DIR``) in a
child process, once each (this copy is measured before and after it), and prints both with the
ratio (to the slower of this copy's two figures); what the child has not finished within
``--baseline-timeout`` seconds is shown as such.

``--long-match`` prints instead what one match a megabyte long costs the scanner: taken apart by the
capturing pattern, against masked whole (what ``redaction.LONG_MATCH`` chooses for a match over 4 096
bytes), median of ``--repeat``.
"""

from __future__ import annotations

import argparse
import atexit
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

if "AIRFLOW_HOME" not in os.environ:
    os.environ["AIRFLOW_HOME"] = tempfile.mkdtemp(prefix="alp-bench-")
    atexit.register(shutil.rmtree, os.environ["AIRFLOW_HOME"], True)

KB, MB = 1000, 1_000_000

#: (label, repeated unit, sizes in bytes)
SHAPES: list[tuple[str, str, tuple[int, ...]]] = [
    ("issue 27: eyJaaaaa.eyJaaaaa. repeated", "eyJaaaaa.eyJaaaaa.", (100 * KB, 250 * KB, 500 * KB, MB)),
    ("issue 27: a...a.ghp_... (a long word, then a token)", "a" * 40 + ".ghp_" + "b7" * 18 + " ", (MB,)),
    ("issue 27: real secrets only (password=hunter2&)", "password=hunter2&", (MB,)),
    ("one word, then ://@", "", (MB,)),
    ("URI scheme + user, no @", "a://b:c", (MB,)),
    ("secret-looking names, no value", "password token secret api_key ", (MB,)),
    ("name= with a value that never ends", "password=" + "x" * 64, (MB,)),
    ("token prefixes one short", "AKIAABCDEFGHIJKLMNO ghp_abc eyJabc.eyJ xoxb dapi SG.x sk-proj- ", (MB,)),
    ("private key never closed", "-----BEGIN PRIVATE KEY-----" + "A" * 64, (MB,)),
    ("quotes and escapes", '\\"password\\": \\"' + "'" * 8, (MB,)),
    ("CLI flags without values", "curl -u x mysql -p --password -x set ", (MB,)),
    ("one character", "a", (MB,)),
    ("at signs and colons", "@:@:/", (MB,)),
]


def hostile(unit: str, size: int) -> str:
    if not unit:  # one word as long as the string: every start position is a scheme's start
        return "a" * (size - 4) + "://@"
    return (unit * (size // len(unit) + 1))[:size]


def measure(repeat: int) -> None:
    """Print one JSON line per (shape, size): ms (median of ``repeat``) and whether the event was kept."""
    sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests" / "support"))
    import logging

    from reliability_events import run_event

    from airflow_lineage_plus import conf
    from airflow_lineage_plus.deliver.event_log_transport import EventLogConfig, EventLogTransport
    from airflow_lineage_plus.deliver.serialize import plain

    conf.sql_max_length()  # configure Airflow (and its logging) before timing
    logging.getLogger("airflow_lineage_plus").setLevel(logging.CRITICAL)  # no per-event log lines
    with tempfile.TemporaryDirectory() as tmp:
        log = Path(tmp) / "events.jsonl"
        transport = EventLogTransport(EventLogConfig(log_file_path=str(log)))
        transport.emit(run_event("bench.warmup"))
        for label, unit, sizes in SHAPES:
            for size in sizes:
                times, kept = [], 0
                for _ in range(repeat):
                    event = plain(run_event("bench.hostile"))
                    event["job"]["facets"]["documentation"] = {
                        "_producer": "p",
                        "_schemaURL": "https://openlineage.io/spec/facets/1-1-0/DocumentationJobFacet.json",
                        "description": hostile(unit, size),
                    }
                    before = log.stat().st_size
                    start = time.perf_counter()
                    transport.emit(event)
                    times.append((time.perf_counter() - start) * 1000)
                    kept += log.stat().st_size > before
                cell = {"shape": label, "size": size, "ms": statistics.median(times), "kept": kept == repeat}
                print(json.dumps(cell), flush=True)


def long_match(repeat: int) -> None:
    """Print the ms one 1 MB match costs taken apart (captures) and masked whole."""
    from airflow_lineage_plus.deliver import redaction

    scanner = redaction.scanner()
    text = b'"password=' + b"a" * MB + b'"'
    match = next(scanner.bounds.finditer(text))
    start, stop = match.start(), match.end()
    for label, work in (
        ("taken apart by the capturing pattern", lambda: scanner._take_apart(text[start:stop])),
        ("masked whole", lambda: scanner._long(text, start, stop)),
    ):
        times = []
        for _ in range(repeat):
            began = time.perf_counter()
            work()
            times.append((time.perf_counter() - began) * 1000)
        print(f"a {stop - start:,}-byte match {label}: {statistics.median(times):.3f} ms")


def _baseline(directory: str, timeout: float) -> dict[tuple[str, int], dict[str, object]]:
    """The same shapes against the package in ``directory``, once each, in a child process; what it
    has not finished within ``timeout`` seconds is left out."""
    env = {**os.environ, "PYTHONPATH": directory}
    command = [sys.executable, __file__, "--child", "--repeat", "1"]
    try:
        output: str | bytes = subprocess.run(
            command, env=env, capture_output=True, text=True, timeout=timeout
        ).stdout
    except subprocess.TimeoutExpired as stopped:
        output = stopped.stdout or ""
    text = output.decode() if isinstance(output, bytes) else output
    cells = [json.loads(line) for line in text.splitlines() if line.startswith("{")]
    return {(cell["shape"], cell["size"]): cell for cell in cells}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--baseline", help="a directory holding another airflow_lineage_plus to compare")
    parser.add_argument("--baseline-timeout", type=float, default=300.0)
    parser.add_argument("--long-match", action="store_true", help="what one 1 MB match costs the scanner")
    parser.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.long_match:
        long_match(args.repeat)
        return
    if args.child:
        measure(args.repeat)
        return

    def ours() -> dict[tuple[str, int], dict[str, object]]:
        command = [sys.executable, __file__, "--child", "--repeat", str(args.repeat)]
        done = subprocess.run(command, capture_output=True, text=True, check=True)
        cells = [json.loads(line) for line in done.stdout.splitlines() if line.startswith("{")]
        return {(cell["shape"], cell["size"]): cell for cell in cells}

    # this copy before and after the baseline: the machine's load changes over a run
    first = ours()
    theirs = _baseline(args.baseline, args.baseline_timeout) if args.baseline else {}
    second = ours() if args.baseline else first
    header = f"{'shape':<55} {'size':>8} {'ours ms (before / after)':>26} {'kept':>5}"
    print(header + (f" {'baseline ms':>12} {'kept':>5} {'ratio':>8}" if args.baseline else ""))
    for key, cell in first.items():
        again = second.get(key, cell)
        worst = max(float(cell["ms"]), float(again["ms"]))  # type: ignore[arg-type]
        kept = bool(cell["kept"]) and bool(again["kept"])
        row = f"{cell['shape']:<55} {int(cell['size']) // KB:>6} KB"  # type: ignore[call-overload]
        row += f" {float(cell['ms']):>12.1f} / {float(again['ms']):>9.1f} {kept!s:>5}"  # type: ignore[arg-type]
        if args.baseline:
            other = theirs.get(key)
            if other is None:
                row += f" {'not done':>12} {'-':>5} {'-':>8}"
            else:
                ratio = float(other["ms"]) / max(worst, 1e-6)  # type: ignore[arg-type]
                row += f" {float(other['ms']):>12.1f} {other['kept']!s:>5} {ratio:>7.0f}x"  # type: ignore[arg-type]
        print(row)


if __name__ == "__main__":
    main()
