"""``python -m airflow_lineage_plus.cli``: the ``lineage-plus`` command."""

from __future__ import annotations

from airflow_lineage_plus.cli.app import main

raise SystemExit(main())
