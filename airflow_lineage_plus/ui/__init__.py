"""The Lineage view inside the Airflow UI: a FastAPI app mounted by the plugin and its navigation entries."""
