"""Lineage that acts: impact alerts when a task fails, freshness breaches, through Airflow's notifiers.

The stage after the graph: it reads the lineage (``graph/``, opened through ``sources.py``) to compute who
is affected and tells them (``docs/alerts.md``). Contract checks at task time live in ``author/``.
"""
