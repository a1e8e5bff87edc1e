"""The dotted path users configure as a transform transport's ``transformer_class``.

``"transformer_class": "airflow_lineage_plus.budget.BudgetTransformer"``
"""

from airflow_lineage_plus.deliver.event_budget import BudgetTransformer

__all__ = ["BudgetTransformer"]
