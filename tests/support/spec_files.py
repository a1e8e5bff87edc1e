"""Where the tests find the reference specifications they check against, with ``../shared`` optional.

A specification (the OpenLineage JSON Schemas, Marquez's OpenAPI spec and examples) is looked up file by
file, in this order:

1. the folder an environment variable names (``OPENLINEAGE_SPEC_DIR``, ``MARQUEZ_SPEC_DIR``);
2. the repository's own copy, ``tests/support/spec/<name>/`` (see its README: which commit, which files),
   so that a fresh clone validates offline;
3. ``../shared/spec/<name>/`` beside the repository, when present;
4. a per-user cache, ``$XDG_CACHE_HOME/airflow-lineage-plus/spec/<name>/`` (default ``~/.cache``), filled
   once by downloading the exact file from where it is published, then read offline (a version the copy
   does not have, such as one a newer client writes).

With none of them, :class:`SpecUnavailableError` names the ways. Nothing here knows what the files mean:
``openlineage_spec.py`` and ``marquez_spec.py`` say which files they need and how they are named.
"""

from __future__ import annotations

import os
import tempfile
import urllib.request
from pathlib import Path

import attr

REPO = Path(__file__).resolve().parents[2]
SHARED_SPEC = REPO.parent / "shared" / "spec"
#: The copies this repository keeps (tests/support/spec/README.md says where they come from).
REPO_SPEC = Path(__file__).resolve().parent / "spec"
DOWNLOAD_TIMEOUT = 20.0


class SpecUnavailableError(RuntimeError):
    """A reference file the tests need is in none of the places they look and could not be downloaded."""


def user_cache_dir() -> Path:
    """The per-user cache of downloaded specifications."""
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "airflow-lineage-plus" / "spec"


def download(url: str, timeout: float = DOWNLOAD_TIMEOUT) -> bytes:
    """The bytes at ``url`` (HTTP 200 only); ``OSError`` (``URLError`` included) when it cannot be read."""
    request = urllib.request.Request(url, headers={"User-Agent": "airflow-lineage-plus-tests"})
    with urllib.request.urlopen(request, timeout=timeout) as response:
        data: bytes = response.read()
    return data


def write_atomically(path: Path, data: bytes) -> None:
    """Write ``path`` whole or not at all (parallel test workers may fill the cache at the same time)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.")
    try:
        with os.fdopen(fd, "wb") as out:
            out.write(data)
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


@attr.define(frozen=True)
class SpecPlaces:
    """The places one specification is looked for, in order, and how to say so."""

    title: str  # "the OpenLineage JSON Schemas"
    env_var: str  # "OPENLINEAGE_SPEC_DIR"
    shared: Path  # ../shared/spec/<name>
    cache: Path  # <user cache>/<name>
    published: str  # where downloads come from, for the message
    copy: Path | None = None  # tests/support/spec/<name>, the repository's own

    @classmethod
    def named(cls, name: str, title: str, env_var: str, published: str) -> SpecPlaces:
        return cls(title, env_var, SHARED_SPEC / name, user_cache_dir() / name, published, REPO_SPEC / name)

    def local_dirs(self) -> list[Path]:
        """The folders that exist, in lookup order: the environment's, the repository's copy,
        ``../shared``'s, the cache."""
        configured = os.environ.get(self.env_var, "").strip()
        dirs = [Path(configured)] if configured else []
        dirs += [d for d in (self.copy, self.shared, self.cache) if d is not None]
        return [d for d in dirs if d.is_dir()]

    def unavailable(self, wanted: str, why: str) -> SpecUnavailableError:
        """The one message for a missing file: what is missing and the ways to provide it."""
        copy = f" (the repository's copy, {self.copy}, does not have it)" if self.copy is not None else ""
        return SpecUnavailableError(
            f"{self.title} are needed by the tests, and {wanted} is in none of the places they look{copy}. "
            f"Provide it one of three ways: (1) set {self.env_var} to a folder holding them "
            f"(the layout of {self.published}); (2) place them at {self.shared}; (3) allow network "
            f"access to {self.published}, so the tests download each file once into {self.cache} "
            f"(this time: {why})."
        )
