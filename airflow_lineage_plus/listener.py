"""Airflow listener of airflow-lineage-plus (hooks are added by the skip-state work)."""

from __future__ import annotations
