"""The one-command demo: sample pipelines through real Airflow, a lineage report, then the Airflow UI."""
