"""``$AIRFLOW_HOME/lineage_plus`` is created ``0750`` whichever part of the package comes first, whatever the
process's umask: the alert courier's hand-off, the alert claims' fallback file, the event log."""

from __future__ import annotations

import os
import stat
import subprocess
import sys
from pathlib import Path

import pytest

FIRST = {
    "the alert courier's hand-off": (
        "from airflow_lineage_plus.act import courier\n"
        "courier.hand_off({'kind': 'none'})\n"
        "[p.wait(120) for p in courier._running]\n"
    ),
    "the alert claims' fallback file": (
        "from airflow_lineage_plus import conf\n"
        "from airflow_lineage_plus.claims import FileClaims\n"
        "FileClaims(conf.alert_claims_path())\n"
    ),
    "the event log": (
        "from airflow_lineage_plus.deliver.event_log_transport import EventLogConfig, EventLogTransport\n"
        "from airflow_lineage_plus import conf\n"
        "EventLogTransport(EventLogConfig(log_file_path=str(conf.event_log_path()))).append(b'{}\\n')\n"
    ),
}


@pytest.mark.parametrize("first", sorted(FIRST))
def test_the_package_directory_is_0750_whoever_creates_it(first: str, tmp_path: Path) -> None:
    home = tmp_path / "airflow-home"
    env = {**os.environ, "AIRFLOW_HOME": str(home)}
    env.pop("AIRFLOW__LINEAGE_PLUS__EVENT_LOG_PATH", None)
    code = "import os\nos.umask(0)\n" + FIRST[first]
    proc = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert stat.S_IMODE((home / "lineage_plus").stat().st_mode) == 0o750
