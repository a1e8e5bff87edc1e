"""``[core] hostname_callable`` for processes that stand for separate machines on one test host.

``AIRFLOW__CORE__HOSTNAME_CALLABLE=fake_host.hostname`` (with tests/support on PYTHONPATH) makes Airflow
record ``$LINEAGE_PLUS_FAKE_HOSTNAME`` as the hostname of that process (task instances, jobs).
"""

from __future__ import annotations

import os
import socket


def hostname() -> str:
    return os.environ.get("LINEAGE_PLUS_FAKE_HOSTNAME") or socket.getfqdn()
