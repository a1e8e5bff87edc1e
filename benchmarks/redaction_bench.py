"""Redaction over hostile strings of growing size: the time per MB must stay flat (linear time).

    .venv/bin/python benchmarks/redaction_bench.py [--sizes 65536,262144,1048576,4194304] [--repeat 5]

Each hostile string is built to make a backtracking regex work hard: near misses of every rule (a URI
scheme and a user with no ``@`` after it, names with no value, token prefixes one character short, an
unterminated private key ...), long runs of one character, and, last, a string made only of real
secrets. Each goes through what an event pays, :func:`airflow_lineage_plus.deliver.budget.check` (one
event carrying the string in a facet), and is printed as ms and ms per MB per size. For reference, the
credential regex this replaced (Python ``re``, quadratic) is timed on the first hostile shape at small
sizes. Goal: 1 MB within 50 ms.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import re
import statistics
import tempfile
import time
from collections.abc import Callable

os.environ.setdefault("AIRFLOW_HOME", tempfile.mkdtemp(prefix="alp-bench-"))

from airflow_lineage_plus.exceptions import UncheckedEventError

#: the credential pattern before the catalogue (Python ``re``: quadratic on ``://`` without ``@``)
OLD_CREDENTIALS = re.compile(r"(?P<head>[A-Za-z][A-Za-z0-9+.\-]*://[^\s:/@]*):(?P<secret>[^\s/@]+)@")

HOSTILE: dict[str, str] = {
    "a long word, then ://@ at the end (quadratic for the replaced regex)": "",
    "URI scheme + user, no @": "a://b:c",
    "secret-looking names, no value": "password token secret api_key ",
    "name= with a value that never ends": "password=" + "x" * 64,
    "token prefixes one short": "AKIAABCDEFGHIJKLMNO ghp_abc eyJabc.eyJ xoxb ",
    "private key never closed": "-----BEGIN PRIVATE KEY-----" + "A" * 64,
    "quotes and escapes": '\\"password\\": \\"' + "'" * 8,
    "one character": "a",
    "at signs and colons": "@:@:/",
    "one real secret repeated (fails closed past 20 000)": "password=hunter2&",
}


def hostile(unit: str, size: int) -> str:
    if not unit:  # one word as long as the string: every start position is a scheme's start
        return "a" * (size - 4) + "://@"
    return (unit * (size // len(unit) + 1))[:size]


def _median_ms(func: Callable[[], object], repeat: int) -> float:
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        with contextlib.suppress(
            UncheckedEventError
        ):  # a flood of secrets fails closed: the measured outcome
            func()
        times.append((time.perf_counter() - start) * 1000)
    return statistics.median(times)


def bench(sizes: list[int], repeat: int) -> None:
    from reliability_events import run_event

    from airflow_lineage_plus.deliver import budget
    from airflow_lineage_plus.deliver.serialize import plain

    print("size:" + "".join(f"{s // 1024:>12,} KiB" for s in sizes) + "   (ms; ms per MB)")
    for label, unit in HOSTILE.items():
        cells = []
        for size in sizes:
            event = plain(run_event("bench.hostile"))
            event["job"]["facets"]["documentation"] = {
                "_producer": "p",
                "_schemaURL": "https://openlineage.io/spec/facets/1-0-1/DocumentationJobFacet.json",
                "description": hostile(unit, size),
            }
            ms = _median_ms(lambda event=event: budget.check(event), repeat)
            cells.append(f"{ms:8.1f} ({ms / (size / 2**20):5.1f})")
        print(f"{label}\n     " + "".join(cells))
    print("for reference, the replaced Python re credential pattern on the first shape:")
    for size in (4096, 16384, 65536):
        text = hostile("", size)
        ms = _median_ms(lambda text=text: OLD_CREDENTIALS.sub(r"\g<head>:***@", text), 1)
        print(f"     {size // 1024:>4} KiB: {ms:9.1f} ms")


def main() -> None:
    import sys
    from pathlib import Path

    sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests" / "support"))
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--sizes", default="65536,262144,1048576,4194304")
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args()
    from airflow_lineage_plus import conf

    conf.sql_max_length()  # configure Airflow (and its logging) before timing
    import logging

    logging.getLogger("airflow_lineage_plus").setLevel(logging.ERROR)  # no per-event log lines in the figures
    bench([int(s) for s in args.sizes.split(",")], args.repeat)


if __name__ == "__main__":
    main()
