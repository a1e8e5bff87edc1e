"""Code the sample DAGs share: the simulated source systems, the data lake, the warehouse and the catalog.

Airflow puts the DAGs folder on ``sys.path``, so the DAG files import this package by name. It holds no DAG,
and ``.airflowignore`` keeps the DAG processor from parsing it.
"""
