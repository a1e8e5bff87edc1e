"""Two versions of a DAG folder, read side by side: each a directory, or a git ref of a repository.

A git ref is exported with ``git archive`` into a temporary directory (the repository's objects are only
read: its checkout, index and branches are never touched), and the DAG folder is taken at ``dags_path``
inside it. Each version is parsed in a Python process of its own (``python -m
airflow_lineage_plus.declared.extract``): DAG files import helper modules (``lineage_samples``, ``include``
...) that differ between versions, and one process would keep the first version's modules. The two
processes run at the same time, each within ``timeout`` seconds.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tarfile
import tempfile
import time
from pathlib import Path
from typing import TYPE_CHECKING

import attr

from airflow_lineage_plus.exceptions import StaticLineageError

if TYPE_CHECKING:  # imported when a parse is read back: the CLI's other commands stay light
    from airflow_lineage_plus.declared.extract import StaticLineage

#: Seconds to parse one version of a DAG folder (Airflow's import, then the DAG files).
PARSE_TIMEOUT = 300.0


@attr.frozen
class Version:
    """One version to read: its DAG folder on disk and how to name it in reports."""

    folder: Path
    label: str


def _git(repo: Path, *args: str) -> str:
    proc = subprocess.run(
        ["git", "-C", str(repo), *args], capture_output=True, text=True, timeout=60, check=False
    )
    if proc.returncode != 0:
        raise StaticLineageError(f"git {' '.join(args)} failed in {repo}: {proc.stderr.strip()}")
    return proc.stdout.strip()


def materialize(spec: str, *, repo: Path, dags_path: str, workdir: Path) -> Version:
    """The DAG folder ``spec`` names: an existing directory, else a git ref of ``repo`` exported to
    ``workdir``."""
    if Path(spec).is_dir():
        return Version(Path(spec).resolve(), spec)
    if not spec or spec.startswith("-"):
        raise StaticLineageError(f"{spec!r} is neither a directory nor a git ref")
    try:
        commit = _git(repo, "rev-parse", "--verify", "--quiet", f"{spec}^{{commit}}")
    except StaticLineageError:
        raise StaticLineageError(
            f"{spec!r} is neither a directory nor a git ref of {repo} (give --repo for another repository)"
        ) from None
    target = workdir / commit
    if not target.exists():
        _export(repo, commit, target)
    folder = (target / dags_path).resolve()
    if not folder.is_relative_to(target.resolve()) or not folder.is_dir():
        raise StaticLineageError(f"{spec} ({commit[:12]}) has no directory {dags_path!r} (see --dags-path)")
    return Version(folder, f"{spec} ({commit[:12]})")


def _export(repo: Path, commit: str, target: Path) -> None:
    """``git archive`` of ``commit`` unpacked into ``target`` (members only inside it)."""
    partial = target.with_name(target.name + ".part")
    partial.mkdir(parents=True)
    proc = subprocess.Popen(
        ["git", "-C", str(repo), "archive", "--format=tar", commit],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    assert proc.stdout is not None
    try:
        with tarfile.open(fileobj=proc.stdout, mode="r|") as archive:
            _extract(archive, partial)
    except tarfile.TarError as exc:
        proc.kill()
        proc.wait()
        raise StaticLineageError(f"git archive {commit[:12]} could not be unpacked: {exc}") from exc
    _, error = proc.communicate(timeout=60)
    if proc.returncode != 0:
        raise StaticLineageError(
            f"git archive {commit[:12]} failed: {error.decode(errors='replace').strip()}"
        )
    partial.rename(target)


def _extract(archive: tarfile.TarFile, target: Path) -> None:
    """Unpack a streamed archive into ``target``, refusing members that would land outside it."""
    if hasattr(tarfile, "data_filter"):
        archive.extractall(target, filter="data")
        return
    for member in archive:  # Python before 3.10.12 / 3.11.4: no extraction filters
        inside = (target / member.name).resolve().is_relative_to(target.resolve())
        if inside and not (member.issym() or member.islnk()):
            archive.extract(member, target)


def read_both(
    base: Version,
    head: Version,
    *,
    namespace: str | None = None,
    resolve_connections: bool = True,
    timeout: float = PARSE_TIMEOUT,
) -> tuple[StaticLineage, StaticLineage]:
    """The declared lineage of both versions, each parsed in its own process, at the same time."""
    with tempfile.TemporaryDirectory(prefix="lineage-plus-parse-") as scratch:
        started = [
            _start(version, Path(scratch) / name, namespace, resolve_connections)
            for name, version in (("base", base), ("head", head))
        ]
        deadline = time.monotonic() + timeout
        try:
            return _finish(started[0], deadline), _finish(started[1], deadline)
        finally:
            for proc, _out, _log, _version in started:
                if proc.poll() is None:
                    proc.kill()
                    proc.wait()


_Started = tuple[subprocess.Popen[bytes], Path, Path, Version]


def _start(version: Version, stem: Path, namespace: str | None, resolve: bool) -> _Started:
    out, log = stem.with_suffix(".json"), stem.with_suffix(".log")
    command = [sys.executable, "-m", "airflow_lineage_plus.declared.extract", "--dags", str(version.folder)]
    command += ["--out", str(out)]
    if namespace:
        command += ["--namespace", namespace]
    if not resolve:
        command.append("--no-resolve-connections")
    with open(log, "wb") as handle:
        proc = subprocess.Popen(command, stdout=handle, stderr=subprocess.STDOUT, env=dict(os.environ))
    return proc, out, log, version


def _finish(started: _Started, deadline: float) -> StaticLineage:
    from airflow_lineage_plus.declared.extract import StaticLineage

    proc, out, log, version = started
    try:
        proc.wait(timeout=max(0.0, deadline - time.monotonic()))
    except subprocess.TimeoutExpired:
        raise StaticLineageError(
            f"parsing {version.label} took longer than the time allowed (--parse-timeout)"
        ) from None
    if proc.returncode != 0 or not out.exists():
        tail = log.read_text(errors="replace").strip().splitlines()[-15:]
        raise StaticLineageError(f"parsing {version.label} failed:\n" + "\n".join(tail))
    return StaticLineage.from_json(json.loads(out.read_text()))
