"""Importing the datasets package stays cheap: it runs at DAG parse time."""

from __future__ import annotations

import subprocess
import sys


def test_importing_the_module_imports_neither_airflow_nor_the_openlineage_client() -> None:

    probe = (
        "import sys, airflow_lineage_plus.datasets as d; "
        "print(sorted(m for m in ('airflow', 'openlineage.client') if m in sys.modules))"
    )
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True)
    assert done.stdout.strip() == "[]"
