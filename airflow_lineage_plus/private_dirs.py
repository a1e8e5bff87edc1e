"""The directories the package creates, each created ``0750`` (or the mode asked for) whoever comes first.

Every place that creates a directory (the event log's, ``$AIRFLOW_HOME/lineage_plus`` of the alert
courier and of the alert claims' fallback file) goes through :func:`ensure_dir`, so the first process
to need one, whichever it is, gives it the same mode, whatever its umask. Lineage and alerts carry SQL,
error messages and job files that not every account on the host may read.
"""

from __future__ import annotations

import os
from pathlib import Path

#: The mode of a directory the package creates (``[lineage_plus] event_log_dir_mode`` for the event log's).
PACKAGE_DIR_MODE = 0o750


def ensure_dir(path: str | os.PathLike[str], mode: int = PACKAGE_DIR_MODE) -> Path:
    """``path`` as a directory: it and each missing parent created with exactly ``mode``.

    A directory that exists already is left as it is (its owner chose its mode). Two processes creating
    the same directory at once both get it with ``mode``: the loser of ``mkdir`` finds it made.
    """
    target = Path(path)
    if target.is_dir():
        return target
    missing = []
    current = target
    while not current.exists() and current != current.parent:
        missing.append(current)
        current = current.parent
    for directory in reversed(missing):
        try:
            os.mkdir(directory, mode)
        except FileExistsError:
            continue  # another process came first, through this function too
        os.chmod(directory, mode)  # exactly, whatever the umask (mkdir's mode is masked by it)
    return target
