"""Write faults for the event log, made without privileges (no ``mount``, no root).

* A full disk: :func:`run_with_file_size_limit` runs a function in a forked child whose files cannot grow
  past a number of bytes (``RLIMIT_FSIZE``, with ``SIGXFSZ`` ignored so that a write past the limit
  returns a short count, then fails with ``EFBIG``, instead of killing the process), the way a disk
  that fills up mid-write does. :func:`lift_file_size_limit` frees the space again.
* A place that cannot be written: :func:`not_writable_dir` gives a folder whose write permission is
  removed, or, for root (who ignores permission bits), a sysfs folder, which refuses new files to
  everyone; with the error the OS gives there.
"""

from __future__ import annotations

import contextlib
import multiprocessing
import resource
import signal
import traceback
from collections.abc import Callable, Iterator
from multiprocessing.connection import Connection
from pathlib import Path
from typing import Any, TypeVar

T = TypeVar("T")
SYSFS_DIR = Path("/sys/fs")


def _limited(conn: Connection, limit: int, func: Callable[..., Any], args: tuple[Any, ...]) -> None:
    signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
    _, hard = resource.getrlimit(resource.RLIMIT_FSIZE)
    resource.setrlimit(resource.RLIMIT_FSIZE, (limit, hard))
    try:
        conn.send(("ok", func(*args)))
    except BaseException:
        conn.send(("error", traceback.format_exc()))
    finally:
        conn.close()


def run_with_file_size_limit(limit: int, func: Callable[..., T], *args: Any, timeout: float = 120.0) -> T:
    """``func(*args)`` in a forked child whose files cannot grow past ``limit`` bytes; its return value."""
    context = multiprocessing.get_context("fork")
    receiver, sender = context.Pipe(duplex=False)
    child = context.Process(target=_limited, args=(sender, limit, func, args))
    child.start()
    sender.close()
    try:
        if not receiver.poll(timeout):
            raise TimeoutError(f"{func.__name__} did not finish within {timeout} s")
        status, value = receiver.recv()
    finally:
        child.join(timeout=30)
        if child.is_alive():
            child.kill()
    if status != "ok":
        raise AssertionError(f"{func.__name__} failed in the size-limited child:\n{value}")
    return value  # type: ignore[no-any-return]


def lift_file_size_limit() -> None:
    """In a :func:`run_with_file_size_limit` child: free the space (files may grow again)."""
    _, hard = resource.getrlimit(resource.RLIMIT_FSIZE)
    resource.setrlimit(resource.RLIMIT_FSIZE, (hard, hard))


@contextlib.contextmanager
def not_writable_dir(tmp_path: Path) -> Iterator[tuple[Path, str]]:
    """(a folder this process cannot create files in, the ``strerror`` it gets trying)."""
    folder = tmp_path / "not-writable"
    folder.mkdir()
    folder.chmod(0o500)
    try:
        probe = folder / "probe"
        try:
            probe.open("ab").close()
        except OSError as exc:
            yield folder, str(exc.strerror)
            return
        probe.unlink()  # root: permission bits do not apply to it
        try:
            (SYSFS_DIR / "alp-probe").open("ab").close()
        except OSError as exc:
            yield SYSFS_DIR, str(exc.strerror)
            return
        raise AssertionError(f"{SYSFS_DIR} accepted a new file: no unwritable folder found")
    finally:
        folder.chmod(0o700)
